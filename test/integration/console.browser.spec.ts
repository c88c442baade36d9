/**
 * The web console at /console (issue 22) end to end in a real browser: Debian's chromium driven
 * by playwright-core (no browser download), against the registry started as `npm start` starts
 * it (node dist/server.js --demo-when-empty, a fresh DATA_DIR, a free port), with a lowered
 * AUTH_USER_MAX_FAILURES so that the lockout comes after a few wrong passwords.
 *
 * Every page is checked with axe-core (@axe-core/playwright): no serious or critical violation.
 * The page runs under the console's Content-Security-Policy: a refused script or style (a
 * "Content Security Policy" console message), a script error or a request to anything but the
 * registry fails the suite.
 *
 * Without /usr/bin/chromium this suite is skipped with a message, except in CI (CI=true), where
 * .ci/run installs chromium and the suite must run. It needs the built console (dist/console,
 * `npm run build:console`; npm ci builds it).
 *
 * CONSOLE_SCREENSHOTS=<folder> also saves a screenshot of the main pages there
 * (`npm run docs:screenshot` writes docs/images/console-*.png, the README's pictures).
 */
import AxeBuilder from "@axe-core/playwright";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { freePort } from "../support/local-network";
import { organizationNumberSource } from "../support/bulk";
import { rawRequest } from "../support/raw-http";
import { basic, demoAccount } from "../support/registry";
import { CHROMIUM, CHROMIUM_ARGS, describeWithChromium } from "../support/chromium";
import { base64DerOf, certificatePem } from "../support/certificates";
import { makeTestPki, networkEnv, StandInSml, type TestPki } from "../support/stand-in-network";
import { pollUntil } from "../support/poll";

/** The page's document, as the functions evaluated in the browser see it (this file compiles without the DOM library). */
declare const document: {
	querySelectorAll(selector: string): ArrayLike<{ value: string }>;
	getAnimations(): { playState: string; constructor: { name: string } }[];
};

const ROOT = path.join(__dirname, "..", "..");
const BUILT = path.join(ROOT, "dist", "console", "index.html");
const MAX_FAILURES = 3;
const SP1 = demoAccount("SERVICE_PROVIDER", 0);
const SP2 = demoAccount("SERVICE_PROVIDER", 1);
const ADMIN = demoAccount("ADMIN");
/** The access point provider of the demo's app1 (docs/demo-data.md). */
const APP_PROVIDER = "22222222-0000-4000-8000-000000000001";
const LOOKUP_ORGANIZATION = "iso6523-actorid-upis::0192:991825827";
const organizationNumber = organizationNumberSource(61_000_000);

interface ConsoleRegistry {
	child: ChildProcess;
	url: string;
	dataDir: string;
}

const describeWithBrowser = describeWithChromium("web console test");
// A test drives several pages of a registry on a machine that may be busy.
jest.setTimeout(180000);

describeWithBrowser("the web console at /console in headless Chromium", () => {
	let child: ChildProcess;
	let dataDir: string;
	let userDataDir: string;
	let url: string;
	let context: BrowserContext;
	/** The registry with a stand-in SML (SML_URL set), for the "registered" state. */
	let networked: ConsoleRegistry;
	let pki: TestPki;
	let sml: StandInSml;
	const output: string[] = [];
	/** Requests the pages made to anything but the registry, CSP refusals, script errors. */
	const foreign: string[] = [];
	const policyViolations: string[] = [];
	const pageErrors: string[] = [];
	/** Milliseconds from navigation until each page was usable, for docs/console.md. */
	const usableAfter: Record<string, number> = {};
	/** The participant the service provider registers, edits and transfers. */
	const registered = { organizationIdentifier: organizationNumber(), name: `Konsoll Test AS ${process.pid}` };

	/** Starts the registry as `npm start` does (its own DATA_DIR, a free port), with `extra` in its environment. */
	async function startRegistry(extra: NodeJS.ProcessEnv): Promise<ConsoleRegistry> {
		const port = await freePort();
		const registryDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-console-data-"));
		const env: NodeJS.ProcessEnv = {
			...process.env,
			DATA_DIR: registryDataDir,
			PORT: String(port),
			LOG_LEVEL: "warn",
			AUTH_USER_MAX_FAILURES: String(MAX_FAILURES),
		};
		for (const name of [
			"TRANSPORTER",
			"CACHER",
			"MONGO_URI",
			"SERVICES",
			"NAMESPACE",
			"REGISTRY_SEED",
			"RATE_LIMIT",
			"NODE_ID",
			"SML_URL",
			"DIRECTORY_URL",
		])
			delete env[name];
		Object.assign(env, extra);
		// As `npm start` starts it.
		const started = spawn(process.execPath, [path.join(ROOT, "dist", "server.js"), "--demo-when-empty"], {
			cwd: ROOT,
			env,
			stdio: ["ignore", "pipe", "pipe"],
		});
		started.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
		started.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
		const registryUrl = `http://127.0.0.1:${port}`;
		for (;;) {
			if (started.exitCode !== null)
				throw new Error(`the registry exited (${started.exitCode}):\n${output.join("")}`);
			const ready = await rawRequest(registryUrl, {
				method: "GET",
				path: "/health/ready",
				timeoutMs: 2000,
			}).catch(() => null);
			if (ready?.status === 200) break;
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		return { child: started, url: registryUrl, dataDir: registryDataDir };
	}

	beforeAll(async () => {
		if (!fs.existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build:console (npm ci runs it)`);
		const registry = await startRegistry({});
		({ child, url, dataDir } = registry);
		// A second registry told of a stand-in SML (no Directory: that one stays "not configured").
		pki = makeTestPki();
		sml = await new StandInSml(pki).start();
		networked = await startRegistry({ ...networkEnv(pki, sml, null), SML_SYNC_INTERVAL: "0" });
		userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-console-chromium-"));
		context = await chromium.launchPersistentContext(userDataDir, {
			executablePath: CHROMIUM,
			headless: true,
			args: CHROMIUM_ARGS,
			viewport: { width: 1280, height: 900 },
		});
		await context.route("**/*", (route) => {
			const requested = route.request().url();
			if (requested.startsWith(url) || requested.startsWith(networked.url) || requested.startsWith("data:"))
				return route.continue();
			foreign.push(requested);
			return route.abort();
		});
	}, 120000);

	afterAll(async () => {
		await context?.close();
		for (const running of [child, networked?.child])
			if (running && running.exitCode === null) {
				const exited = new Promise((resolve) => running.once("exit", resolve));
				running.kill("SIGTERM");
				await exited;
			}
		await sml?.stop();
		for (const directory of [userDataDir, dataDir, networked?.dataDir, pki?.dir])
			if (directory) fs.rmSync(directory, { recursive: true, force: true });
		// eslint-disable-next-line no-console
		console.log(`console pages usable after (ms): ${JSON.stringify(usableAfter)}`);
	});

	/** A new tab: its own session (the credentials live in the tab's memory only). */
	async function tab(): Promise<Page> {
		const page = await context.newPage();
		page.on("pageerror", (error) => pageErrors.push(String(error)));
		page.on("console", (message) => {
			if (/Content Security Policy|Refused to (apply|load|execute)/i.test(message.text()))
				policyViolations.push(message.text());
		});
		return page;
	}

	/** Goes to a console path and waits until `ready` is visible; remembers how long that took. */
	async function open(page: Page, consolePath: string, ready: string, name: string, base = url): Promise<void> {
		const started = Date.now();
		const response = await page.goto(`${base}/console${consolePath}`);
		expect(response?.status()).toBe(200);
		await page.getByRole("heading", { name: ready, level: 1 }).waitFor();
		usableAfter[name] = Date.now() - started;
	}

	/** Client-side navigation (keeps the tab's session). */
	async function navigate(page: Page, label: string, heading: string, name: string): Promise<void> {
		const started = Date.now();
		await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: label, exact: true }).click();
		await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
		await page
			.locator("[aria-busy=true]")
			.first()
			.waitFor({ state: "detached" })
			.catch(() => undefined);
		usableAfter[name] = Date.now() - started;
	}

	async function expectAccessible(page: Page, what: string): Promise<void> {
		// On a settled page: a dialog fading out is half transparent, which axe reads as low contrast.
		// Transitions only: they end, where a spinner's animation may run for ever.
		await page.waitForFunction(() =>
			document
				.getAnimations()
				.every(
					(animation) => animation.constructor.name !== "CSSTransition" || animation.playState !== "running",
				),
		);
		const results = await new AxeBuilder({ page }).analyze();
		const serious = results.violations.filter(
			(violation) => violation.impact === "serious" || violation.impact === "critical",
		);
		expect({
			page: what,
			violations: serious.map(
				(violation) =>
					`${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(" ")).join(", ")})`,
			),
		}).toEqual({
			page: what,
			violations: [],
		});
	}

	async function screenshot(page: Page, name: string): Promise<void> {
		if (!process.env.CONSOLE_SCREENSHOTS) return;
		const folder = path.resolve(process.env.CONSOLE_SCREENSHOTS);
		fs.mkdirSync(folder, { recursive: true });
		await page.screenshot({ path: path.join(folder, `console-${name}.png`) });
	}

	async function signIn(page: Page, username: string, password: string, base = url): Promise<void> {
		await open(page, "/sign-in", "Sign in", "sign-in", base);
		await page.getByLabel("Username").fill(username);
		await page.locator("input[type=password]").fill(password);
		await page.locator("form").getByRole("button", { name: "Sign in" }).click();
	}

	const alert = (page: Page) => page.getByRole("alert");

	test("anyone looks up an organization's processes and browses the catalog, sorted and paged on the server", async () => {
		const page = await tab();
		await open(page, "/", "Organization lookup", "lookup");
		await expectAccessible(page, "lookup");
		await page.getByLabel("Organization (qualified identifier)").fill(LOOKUP_ORGANIZATION);
		await page.getByRole("button", { name: "Look up" }).click();
		const table = page.getByRole("table").filter({ hasText: "Processes the organization receives" });
		await table.getByRole("cell", { name: "Peppol BIS Billing 3.0" }).waitFor();
		await screenshot(page, "lookup");

		await open(page, "/catalog", "Catalog", "catalog");
		const processes = page.getByTestId("table-Processes");
		await processes.getByRole("cell", { name: "Peppol BIS Billing 3.0" }).waitFor();
		await processes.getByRole("button", { name: /^Title/ }).click();
		await processes.locator("th[aria-sort=descending]").waitFor();
		// Z to A from the server: the first row becomes the last title.
		await processes.locator("tbody tr").first().filter({ hasText: "Peppol BIS Self-Billing 3.0" }).waitFor();
		// Ten per page: the second page comes from the server.
		await processes.getByText(/in all, page 1 of 2/).waitFor();
		await processes.getByRole("button", { name: "2", exact: true }).click();
		await processes.getByText(/in all, page 2 of 2/).waitFor();
		await expectAccessible(page, "catalog");
		await page.close();
	});

	test("anyone searches the catalog: typing filters each list on the server, from its first page", async () => {
		const page = await tab();
		await open(page, "/catalog", "Catalog", "catalog (search)");
		const processes = page.getByTestId("table-Processes");
		await processes.getByText(/in all, page 1 of 2/).waitFor();
		await processes.getByRole("button", { name: "2", exact: true }).click();
		await processes.getByText(/in all, page 2 of 2/).waitFor();
		// Typed key by key (the box is a labelled search field): one request once typing pauses, back to page 1.
		const box = page.getByRole("searchbox", { name: "Search processes" });
		await box.focus();
		const searched = page.waitForResponse(
			(response) => response.url().includes("/rest/api/processes?") && response.url().includes("query=order"),
		);
		await box.pressSequentially("order", { delay: 20 });
		expect((await searched).status()).toBe(200);
		await processes.getByText("4 in all, page 1 of 1").waitFor();
		await processes.getByRole("cell", { name: "Peppol BIS Billing 3.0" }).waitFor({ state: "detached" });
		for (const title of [
			"Peppol BIS Ordering 3.0",
			"Peppol BIS Order only 3.0",
			"Peppol BIS Order Agreement 3.0",
			"EHF Post-award G3 ordering",
		]) {
			await processes.getByRole("cell", { name: title, exact: true }).waitFor();
		}
		await expectAccessible(page, "catalog (processes searched)");
		await box.fill("no such words");
		await processes.getByText("Nothing found.").waitFor();
		await box.fill("");
		await processes.getByText(/in all, page 1 of 2/).waitFor();

		// Document types: the qualified identifier, sent at once with Enter.
		const documentTypes = page.getByTestId("table-Document types");
		const typeBox = page.getByRole("searchbox", { name: "Search document types" });
		await typeBox.fill(
			"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1",
		);
		await typeBox.press("Enter");
		await documentTypes.getByText("1 in all, page 1 of 1").waitFor();
		await documentTypes.getByRole("cell", { name: "Peppol Order transaction 3.0", exact: true }).waitFor();
		await expectAccessible(page, "catalog (document types searched)");
		await page.close();
	});

	test("a wrong password is refused plainly; after the limit the lockout says how long to wait (429 with Retry-After)", async () => {
		const page = await tab();
		const username = demoAccount("ACCESS_POINT_PROVIDER").username;
		await signIn(page, username, "not-the-password");
		await alert(page).filter({ hasText: "Wrong username or password" }).waitFor();
		await expectAccessible(page, "sign-in");
		// The form works from the keyboard: Enter in the password field submits it again.
		for (let attempt = 2; attempt <= MAX_FAILURES + 1; attempt++) {
			// One attempt at a time: while one is answered the button is busy and Enter submits nothing.
			await page.locator("form button[type=submit]:not([disabled]):not([data-loading])").waitFor();
			const answered = page.waitForResponse((response) => response.url().endsWith("/rest/api/account"));
			await page.locator("input[type=password]").press("Enter");
			await answered;
		}
		await alert(page)
			.filter({ hasText: /Too many attempts\. Try again in \d+ seconds?\./ })
			.waitFor();
		await expect(alert(page).getAttribute("data-status")).resolves.toBe("429");
		// The right password does not help during the lockout.
		await page.locator("input[type=password]").fill(demoAccount("ACCESS_POINT_PROVIDER").password as string);
		await page.locator("form").getByRole("button", { name: "Sign in" }).click();
		await alert(page)
			.filter({ hasText: /Too many attempts/ })
			.waitFor();
		await page.close();
	});

	test("a service provider registers a participant: a bad phone number is shown at its field, corrected, and the participant is in the list", async () => {
		const page = await tab();
		await signIn(page, SP1.username, SP1.password as string);
		await page.getByRole("heading", { name: "Participants", level: 1 }).waitFor();
		await expect(page.getByTestId("signed-in").innerText()).resolves.toContain(
			`${SP1.username} (SERVICE_PROVIDER)`,
		);
		await page.getByRole("cell", { name: "Nordlys Regnskap AS", exact: true }).waitFor();
		await expectAccessible(page, "participants");
		await screenshot(page, "participants");

		await page.getByRole("link", { name: "Register a participant" }).click();
		await page.getByRole("heading", { name: "Register a participant", level: 1 }).waitFor();
		await page.getByLabel("Organization number").fill(registered.organizationIdentifier);
		await page.getByLabel("Name", { exact: true }).fill(registered.name);
		await page.getByLabel("Contact name").fill("Kari Nordmann");
		await page.getByLabel("Contact e-mail").fill("kari@example.no");
		const phone = page.getByLabel("Contact phone number");
		await phone.fill("12");
		await page.getByRole("button", { name: "Register" }).click();
		await page.getByText("Not a valid phone number").waitFor();
		await expect(phone.getAttribute("aria-invalid")).resolves.toBe("true");
		// The error is the phone field's own description, not only somewhere on the page.
		const describedBy = (await phone.getAttribute("aria-describedby")) ?? "";
		await expect(
			page
				.locator(`[id="${describedBy.split(" ").find((id) => id.includes("error")) ?? describedBy}"]`)
				.innerText(),
		).resolves.toContain("Not a valid phone number");
		await expectAccessible(page, "participant form with errors");
		await screenshot(page, "register-errors");

		await phone.fill("+47 22 33 44 55");
		await page.getByRole("button", { name: "Register" }).click();
		await page.getByRole("heading", { name: "Participants", level: 1 }).waitFor();
		await page.getByLabel("Search by name or organization number").fill(registered.organizationIdentifier);
		await page.getByRole("button", { name: "Search" }).click();
		await page.getByRole("cell", { name: registered.name, exact: true }).waitFor();
		await page.close();
	});

	test("editing while another client changes the participant shows the conflict instead of overwriting it", async () => {
		const page = await tab();
		await signIn(page, SP1.username, SP1.password as string);
		await page.getByRole("heading", { name: "Participants", level: 1 }).waitFor();
		const qualified = `iso6523-actorid-upis::0192:${registered.organizationIdentifier}`;
		await page.goto(`${url}/console/participants/${encodeURIComponent(qualified)}/edit`);
		// A full page load forgets the session (it lives in memory only): sign in again, then edit.
		await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
		await page.getByLabel("Username").fill(SP1.username);
		await page.locator("input[type=password]").fill(SP1.password as string);
		await page.locator("form").getByRole("button", { name: "Sign in" }).click();
		await page.getByRole("heading", { name: "Participants", level: 1 }).waitFor();
		await page.getByLabel("Search by name or organization number").fill(registered.organizationIdentifier);
		await page.getByRole("button", { name: "Search" }).click();
		await page.getByRole("link", { name: `Edit ${registered.name}` }).click();
		await page.getByRole("heading", { name: `Edit ${registered.name}`, level: 1 }).waitFor();
		await expect(page.getByLabel("Contact name").inputValue()).resolves.toBe("Kari Nordmann");

		// Another client changes it meanwhile.
		const authorization = basic(SP1.username, SP1.password as string);
		const media = "application/vnd.registry.participants.update.v1+json";
		const current = await rawRequest(url, {
			method: "GET",
			path: `/rest/api/participants/${qualified}`,
			headers: { Authorization: authorization },
		});
		const changed = await rawRequest(url, {
			method: "PUT",
			path: `/rest/api/participants/${qualified}`,
			headers: {
				Authorization: authorization,
				"Content-Type": media,
				Accept: media,
				"If-Match": String(current.headers.etag),
			},
			body: JSON.stringify({
				processes: [],
				contact: { name: "Ola Nordmann", email: "ola@example.no", phoneNumber: "+47 22 33 44 56" },
			}),
		});
		expect(changed.status).toBe(200);

		await page.getByLabel("Contact name").fill("Kari Konsoll");
		await page.getByRole("button", { name: "Save changes" }).click();
		await alert(page).filter({ hasText: "Someone else changed this record" }).waitFor();
		await expect(alert(page).getAttribute("data-status")).resolves.toBe("412");
		await expectAccessible(page, "participant form with a conflict");
		const after = await rawRequest(url, {
			method: "GET",
			path: `/rest/api/participants/${qualified}`,
			headers: { Authorization: authorization },
		});
		expect(JSON.parse(after.text).contact.name).toBe("Ola Nordmann");
		await page.close();
	});

	test("a consented transfer: the sender starts it and sees the key once, the receiver completes it with the key, then deletes it after a confirmation", async () => {
		const sender = await tab();
		await signIn(sender, SP1.username, SP1.password as string);
		await sender.getByRole("heading", { name: "Participants", level: 1 }).waitFor();
		await sender.getByLabel("Search by name or organization number").fill(registered.organizationIdentifier);
		await sender.getByRole("button", { name: "Search" }).click();
		await sender.getByRole("button", { name: `Transfer ${registered.name}` }).click();
		const dialog = sender.getByRole("dialog");
		await dialog.getByLabel("Receiving service provider (identifier)").fill(SP2.serviceProvider as string);
		await dialog.getByRole("button", { name: "Start transfer" }).click();
		const key = (await dialog.getByTestId("transfer-key").innerText()).trim();
		expect(key).toMatch(/^[0-9A-Z-]{10,}$/);
		await dialog.getByRole("button", { name: "Copy key" }).waitFor();
		await expectAccessible(sender, "transfer key dialog");
		await screenshot(sender, "transfer-key");
		await dialog.getByRole("button", { name: "Done" }).click();
		await navigate(sender, "Transfers", "Transfers", "transfers");
		await sender.getByRole("cell", { name: "PENDING" }).first().waitFor();
		await expectAccessible(sender, "transfers");

		const receiver = await tab();
		await signIn(receiver, SP2.username, SP2.password as string);
		await receiver.getByRole("heading", { name: "Participants", level: 1 }).waitFor();
		await navigate(receiver, "Transfers", "Transfers", "transfers (receiver)");
		await receiver
			.getByRole("button", { name: `Receive iso6523-actorid-upis::0192:${registered.organizationIdentifier}` })
			.click();
		await receiver.getByLabel("Key").fill(key);
		await receiver.getByRole("button", { name: "Complete transfer" }).click();
		await receiver.getByRole("status").filter({ hasText: "Transfer completed" }).waitFor();
		await navigate(receiver, "Participants", "Participants", "participants (receiver)");
		await receiver.getByLabel("Search by name or organization number").fill(registered.organizationIdentifier);
		await receiver.getByRole("button", { name: "Search" }).click();
		await receiver.getByRole("cell", { name: registered.name, exact: true }).waitFor();
		// Deleting asks first; "Keep it" keeps it, "Yes, delete" deletes it.
		await receiver.getByRole("button", { name: `Delete ${registered.name}` }).click();
		await receiver.getByRole("dialog").getByRole("button", { name: "Keep it" }).click();
		await receiver.getByRole("cell", { name: registered.name, exact: true }).waitFor();
		await receiver.getByRole("button", { name: `Delete ${registered.name}` }).click();
		await receiver.getByRole("dialog").getByRole("button", { name: "Yes, delete" }).click();
		await receiver
			.getByRole("status")
			.filter({ hasText: `${registered.name} deleted.` })
			.waitFor();
		await receiver.getByRole("cell", { name: registered.name, exact: true }).waitFor({ state: "detached" });

		for (const [label, heading, name] of [
			["Change feed", "Change feed", "changes"],
			["Audit trail", "Audit trail", "audit"],
			["Access points", "Access points", "access points"],
			["Your account", "Your account", "account"],
		]) {
			await navigate(receiver, label, heading, name);
			await expectAccessible(receiver, name);
		}
		await receiver.getByRole("button", { name: "Sign out" }).click();
		await receiver.getByRole("heading", { name: "Organization lookup", level: 1 }).waitFor();
		await expect(receiver.getByRole("link", { name: "Participants" }).count()).resolves.toBe(0);
		await sender.close();
		await receiver.close();
	});

	test("an admin runs a dry run, then the real process replacement, each followed by its progress bar and its results per participant; adds an account (a field error first) and disables it", async () => {
		const page = await tab();
		await signIn(page, ADMIN.username, ADMIN.password as string);
		await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();
		await expectAccessible(page, "catalog (editor)");
		await navigate(page, "Process replacement", "Process replacement", "jobs");
		await expectAccessible(page, "jobs");

		const choose = async (label: string, option: string) => {
			await page.locator("input").and(page.getByLabel(label)).click();
			await page.getByRole("option", { name: option, exact: true }).click();
		};
		await choose("Replace process", "Peppol BIS Self-Billing 3.0");
		await choose("With process", "Peppol BIS Order only 3.0");
		await page.getByRole("button", { name: "Start dry run" }).click();
		const job = page.getByTestId("job");
		await job.getByTestId("job-state").filter({ hasText: "SUCCEEDED" }).waitFor();
		await job.getByRole("progressbar", { name: "Job progress" }).waitFor();
		await job.getByRole("cell", { name: "WOULD_REPLACE" }).first().waitFor();
		await expectAccessible(page, "jobs (dry run)");

		await page.getByLabel("Dry run").uncheck();
		await page.getByRole("button", { name: "Start replacement" }).click();
		await job.getByText("Replacement", { exact: true }).waitFor();
		await job.getByTestId("job-state").filter({ hasText: "SUCCEEDED" }).waitFor();
		await expect(
			job.getByRole("progressbar", { name: "Job progress" }).getAttribute("aria-valuenow"),
		).resolves.toBe("100");
		await job.getByRole("cell", { name: "REPLACED" }).first().waitFor();
		await screenshot(page, "jobs");

		await navigate(page, "Accounts", "Accounts and service providers", "accounts");
		await page.getByRole("cell", { name: SP1.username, exact: true }).waitFor();
		await expectAccessible(page, "accounts");
		// An account added with a too short password: the error at the field; then added, and disabled.
		const username = `console-${process.pid}`;
		await page.getByLabel("Username").fill(username);
		const password = page.locator("form").filter({ hasText: "Add an account" }).locator("input[type=password]");
		await password.fill("short");
		await page.getByRole("textbox", { name: "Service provider identifier" }).fill(SP1.serviceProvider as string);
		await page.getByRole("button", { name: "Add account" }).click();
		await page.getByText("Too short or too long").waitFor();
		await password.fill("a-long-enough-password");
		await page.getByRole("button", { name: "Add account" }).click();
		await page
			.getByRole("status")
			.filter({ hasText: `Account ${username} added.` })
			.waitFor();
		// decisions §15: the OAuth client whose tokens act as the account, set in its dialog.
		await page.getByRole("button", { name: `Set the OAuth client of ${username}` }).click();
		await page.getByRole("textbox", { name: "Client ID" }).fill(`${username}-system`);
		await page.getByRole("button", { name: "Save OAuth client" }).click();
		await page
			.getByRole("status")
			.filter({ hasText: `OAuth client ${username}-system now acts as ${username}.` })
			.waitFor();
		await page.getByRole("cell", { name: `${username}-system`, exact: true }).waitFor();
		await page.getByRole("button", { name: `Disable ${username}` }).click();
		await page
			.getByRole("status")
			.filter({ hasText: `${username} disabled.` })
			.waitFor();
		const refused = await rawRequest(url, {
			method: "GET",
			path: "/rest/api/account",
			headers: { Authorization: basic(username, "a-long-enough-password") },
		});
		expect(refused.status).toBe(401);
		await screenshot(page, "accounts");
		await page.close();
	});

	/** Adds a participant of `account` through the API (the console's own register form is tested above). */
	async function addParticipant(account: { username: string; password?: string }, name: string): Promise<string> {
		const organizationIdentifier = organizationNumber();
		const media = "application/vnd.registry.participants.add.v1+json";
		const added = await rawRequest(url, {
			method: "POST",
			path: "/rest/api/participants",
			headers: {
				Authorization: basic(account.username, account.password as string),
				"Content-Type": media,
				Accept: media,
			},
			body: JSON.stringify({
				icd: "0192",
				organizationIdentifier,
				name,
				processes: [],
				contact: { name: "Per Hansen", email: "per@example.no", phoneNumber: "+47 22 33 44 57" },
			}),
		});
		expect(added.status).toBe(201);
		return `iso6523-actorid-upis::0192:${organizationIdentifier}`;
	}

	async function searchParticipants(page: Page, text: string): Promise<void> {
		await page.getByLabel("Search by name or organization number").fill(text);
		await page.getByRole("button", { name: "Search" }).click();
	}

	test("a service provider transfers a participant in one step, and cancels a consented transfer it started", async () => {
		const direct = { name: `Direkte Overforing AS ${process.pid}`, qualified: "" };
		const cancelled = { name: `Angret Overforing AS ${process.pid}`, qualified: "" };
		direct.qualified = await addParticipant(SP1, direct.name);
		cancelled.qualified = await addParticipant(SP1, cancelled.name);
		const owner = async (account: { username: string; password?: string }, qualified: string) =>
			(
				await rawRequest(url, {
					method: "GET",
					path: `/rest/api/participants/${qualified}`,
					headers: { Authorization: basic(account.username, account.password as string) },
				})
			).status;

		const page = await tab();
		await signIn(page, SP1.username, SP1.password as string);
		await page.getByRole("heading", { name: "Participants", level: 1 }).waitFor();
		await searchParticipants(page, direct.name);
		await page.getByRole("cell", { name: direct.name, exact: true }).waitFor();
		await page.getByRole("button", { name: `Transfer ${direct.name}` }).click();
		const dialog = page.getByRole("dialog");
		await dialog.getByRole("radio", { name: "At once (one step)" }).check();
		await dialog.getByLabel("Receiving service provider (identifier)").fill(SP2.serviceProvider as string);
		await expectAccessible(page, "one-step transfer dialog");
		await dialog.getByRole("button", { name: "Transfer now" }).click();
		await page
			.getByRole("status")
			.filter({ hasText: `${direct.name} transferred.` })
			.waitFor();
		// No longer this provider's: gone from its list, and the receiver has it.
		await page.getByRole("cell", { name: direct.name, exact: true }).waitFor({ state: "detached" });
		await expectAccessible(page, "participants after a transfer");
		expect(await owner(SP2, direct.qualified)).toBe(200);
		expect(await owner(SP1, direct.qualified)).not.toBe(200);

		await searchParticipants(page, cancelled.name);
		await page.getByRole("button", { name: `Transfer ${cancelled.name}` }).click();
		await dialog.getByLabel("Receiving service provider (identifier)").fill(SP2.serviceProvider as string);
		await dialog.getByRole("button", { name: "Start transfer" }).click();
		await dialog.getByTestId("transfer-key").waitFor();
		await dialog.getByRole("button", { name: "Done" }).click();
		await navigate(page, "Transfers", "Transfers", "transfers (cancel)");
		const row = page.getByRole("row").filter({ hasText: cancelled.qualified });
		await row.getByRole("cell", { name: "PENDING" }).waitFor();
		await row.getByRole("button", { name: `Cancel the transfer of ${cancelled.qualified}` }).click();
		await page.getByRole("status").filter({ hasText: "Transfer cancelled." }).waitFor();
		await row.getByRole("cell", { name: "CANCELLED" }).waitFor();
		await expect(row.getByRole("button").count()).resolves.toBe(0);
		await expectAccessible(page, "transfers after a cancel");
		expect(await owner(SP1, cancelled.qualified)).toBe(200);
		await page.close();
	});

	test("an admin adds, edits and deletes a process and a document type with their links", async () => {
		const suffix = process.pid;
		const processTitle = `Konsoll prosess ${suffix}`;
		const renamed = `Konsoll prosess endret ${suffix}`;
		const documentTitle = `Konsoll dokument ${suffix}`;
		const page = await tab();
		await signIn(page, ADMIN.username, ADMIN.password as string);
		await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();
		const editor = page.locator("form").filter({ has: page.getByLabel("Qualified identifier") });
		const choose = async (label: string, option: string) => {
			await page
				.locator("input")
				.and(page.getByLabel(label, { exact: true }))
				.click();
			await page.getByRole("option", { name: option, exact: true }).click();
			await page.keyboard.press("Escape");
		};
		const showsValue = (value: string) =>
			page.waitForFunction(
				(wanted) => Array.from(document.querySelectorAll("input")).some((input) => input.value === wanted),
				value,
			);
		const notice = (text: string) => page.getByRole("status").filter({ hasText: text }).waitFor();
		const catalogApi = async (path: string) => {
			const answer = await rawRequest(url, {
				method: "GET",
				path: `/rest/api${path}`,
				headers: { Authorization: basic(ADMIN.username, ADMIN.password as string) },
			});
			return { status: answer.status, body: answer.status === 200 ? JSON.parse(answer.text) : null };
		};

		// A process depending on an existing one.
		await editor.getByLabel("Domain").fill("Konsoll");
		await editor.getByLabel(/^Title/).fill(processTitle);
		await editor.getByLabel("Qualified identifier").fill(`console::process-${suffix}`);
		await choose("Depends on processes", "Peppol BIS Billing 3.0");
		await editor.getByRole("button", { name: "Add process" }).click();
		await notice("Added.");
		const added = (await catalogApi(`/processes?query=${encodeURIComponent(`console::process-${suffix}`)}`)).body
			.content[0];
		expect(added).toMatchObject({
			title: processTitle,
			domain: "Konsoll",
			dependencies: [expect.objectContaining({ title: "Peppol BIS Billing 3.0" })],
		});

		// A document type linked to it, from the document type's side.
		await choose("What", "Document type");
		await editor.getByLabel(/^Title/).fill(documentTitle);
		await editor.getByLabel("Qualified identifier").fill(`console::document-${suffix}`);
		await choose("Processes", processTitle);
		await editor.getByRole("button", { name: "Add document type" }).click();
		await notice("Added.");
		const documentTypes = page.getByTestId("table-Document types");
		await page.getByRole("searchbox", { name: "Search document types" }).fill(`konsoll dokument ${suffix}`);
		await documentTypes
			.getByRole("row")
			.filter({ hasText: documentTitle })
			.filter({ hasText: processTitle })
			.waitFor();

		// The process, opened for editing, shows the link made from the other side; renamed and saved (If-Match).
		await choose("What", "Process");
		await choose("Record to edit", processTitle);
		await showsValue(processTitle);
		await editor.getByText(documentTitle).first().waitFor();
		await expectAccessible(page, "catalog editor (a process open)");
		await editor.getByLabel(/^Title/).fill(renamed);
		await editor.getByRole("button", { name: "Save changes" }).click();
		await notice("Saved.");
		await page.getByRole("searchbox", { name: "Search processes" }).fill("konsoll endret");
		await page.getByTestId("table-Processes").getByRole("cell", { name: renamed, exact: true }).waitFor();
		await documentTypes.getByRole("row").filter({ hasText: documentTitle }).filter({ hasText: renamed }).waitFor();
		const saved = await catalogApi(`/processes/${added.identifier}`);
		expect(saved.body).toMatchObject({
			title: renamed,
			documentTypes: [expect.objectContaining({ title: documentTitle })],
		});

		// The document type still linked cannot go: the API's 409 is shown.
		await choose("What", "Document type");
		await choose("Record to edit", documentTitle);
		await showsValue(documentTitle);
		await editor.getByRole("button", { name: "Delete" }).click();
		await page.getByRole("dialog").getByRole("button", { name: "Yes, delete" }).click();
		await page.getByRole("alert").waitFor();
		await expect(page.getByRole("alert").getAttribute("data-status")).resolves.toBe("409");
		await expectAccessible(page, "catalog editor (a refused delete)");

		// The process goes first (after its confirmation), then the document type.
		await choose("What", "Process");
		await choose("Record to edit", renamed);
		await showsValue(renamed);
		await editor.getByRole("button", { name: "Delete" }).click();
		await page.getByRole("dialog").getByRole("button", { name: "Yes, delete" }).waitFor();
		await expectAccessible(page, "catalog editor (delete confirmation)");
		await page.getByRole("dialog").getByRole("button", { name: "Yes, delete" }).click();
		await notice("Deleted.");
		await choose("What", "Document type");
		await choose("Record to edit", documentTitle);
		await showsValue(documentTitle);
		await editor.getByRole("button", { name: "Delete" }).click();
		await page.getByRole("dialog").getByRole("button", { name: "Yes, delete" }).click();
		await notice("Deleted.");
		await documentTypes.getByText("Nothing found.").waitFor();
		expect((await catalogApi(`/processes/${added.identifier}`)).status).toBe(404);
		expect(
			(await catalogApi(`/document-types?query=${encodeURIComponent(`console::document-${suffix}`)}`)).body
				.totalElements,
		).toBe(0);
		await page.close();
	});

	/** A GET of the API as an account, its status and parsed body. */
	async function apiGet(account: { username: string; password?: string }, apiPath: string, media: string) {
		const answer = await rawRequest(url, {
			method: "GET",
			path: `/rest/api${apiPath}`,
			headers: { Authorization: basic(account.username, account.password as string), Accept: media },
		});
		return { status: answer.status, body: JSON.parse(answer.text) };
	}

	test("an access point provider edits its access point's endpoints: an expired certificate is refused at its field, one near its end is saved and flagged", async () => {
		const NORDLYS_TEST = "33333333-0000-4000-8000-000000000002";
		const [expiredPem, soonPem] = await Promise.all([certificatePem(-1), certificatePem(10, "PNO000102")]);
		// An account of app1's access point provider of its own: the lockout test above locks app1 out.
		const provider = { username: `console-app-${process.pid}`, password: "console-app-password" };
		const media = "application/vnd.registry.accounts.add.v1+json";
		const added = await rawRequest(url, {
			method: "POST",
			path: "/rest/api/accounts",
			headers: {
				Authorization: basic(ADMIN.username, ADMIN.password as string),
				"Content-Type": media,
				Accept: media,
			},
			body: JSON.stringify({ ...provider, role: "ACCESS_POINT_PROVIDER", accessPointProvider: APP_PROVIDER }),
		});
		expect(added.status).toBe(201);
		const page = await tab();
		await signIn(page, provider.username, provider.password);
		// An access point provider's home is its access points.
		await page.getByRole("heading", { name: "Access points", level: 1 }).waitFor();
		const table = page.getByTestId("table-Access points");
		// Every endpoint shows its certificate's subject and end; only its own access points can be edited.
		await table.getByText("CN=PNO000101,OU=PEPPOL PRODUCTION AP,O=Nordlys Aksesspunkt AS,C=NO").waitFor();
		expect(await table.getByTestId("certificate-warning").count()).toBe(0);
		expect(await page.getByRole("link", { name: "Edit the endpoints of Fjordnett AP" }).count()).toBe(0);
		await expectAccessible(page, "access points");

		await page.getByRole("link", { name: "Edit the endpoints of Nordlys AP test" }).click();
		await page.getByRole("heading", { name: "Endpoints of Nordlys AP test", level: 1 }).waitFor();
		const endpoint = page.getByTestId("endpoint").first();
		await endpoint.getByTestId("certificate-subject").filter({ hasText: "CN=PNO000102" }).waitFor();
		await expectAccessible(page, "access point endpoints");

		const certificate = endpoint.getByRole("textbox", { name: "Certificate", exact: true });
		await certificate.fill(expiredPem);
		await endpoint.getByText("Expired", { exact: true }).waitFor();
		await page.getByRole("button", { name: "Save endpoints" }).click();
		await endpoint.getByText("This certificate has expired").waitFor();
		await alert(page).filter({ hasText: "Some fields need attention." }).waitFor();

		await certificate.fill(soonPem);
		await endpoint.getByRole("textbox", { name: "Expiration date" }).fill("2026-01-01");
		await endpoint.getByRole("textbox", { name: "Activation date" }).fill("2026-02-01");
		await page.getByRole("button", { name: "Save endpoints" }).click();
		await endpoint.getByText("Must not be before the activation date").waitFor();
		await endpoint.getByRole("textbox", { name: "Expiration date" }).fill("");
		await page.getByRole("button", { name: "Save endpoints" }).click();
		await page.getByRole("status").filter({ hasText: "Endpoints of Nordlys AP test saved." }).waitFor();
		await endpoint.getByTestId("certificate-warning").filter({ hasText: "Expires within 30 days" }).waitFor();
		await expectAccessible(page, "access point endpoints (saved)");

		const stored = await apiGet(
			provider,
			`/accessPoints/${NORDLYS_TEST}`,
			"application/vnd.registry.accesspoints.get.v1+json",
		);
		expect(stored.body.endpoints).toEqual([
			expect.objectContaining({ certificate: base64DerOf(soonPem), activationDate: "2026-02-01" }),
		]);
		expect(stored.body.endpoints[0].expirationDate).toBeUndefined();

		await page.getByRole("link", { name: "Back to access points" }).click();
		await table.getByTestId("certificate-warning").filter({ hasText: "Expires within 30 days" }).waitFor();
		await screenshot(page, "access-points");
		await page.close();
	});

	test("an admin chooses the access points a service provider's participants receive through", async () => {
		const VIDDA = "11111111-0000-4000-8000-000000000003";
		const page = await tab();
		await signIn(page, ADMIN.username, ADMIN.password as string);
		await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();
		await navigate(page, "Accounts", "Accounts and service providers", "accounts");
		const providers = page.getByTestId("table-Service providers");
		const vidda = providers.getByRole("row").filter({ hasText: "Vidda Regnskapssystemer AS" });
		await vidda.getByRole("cell", { name: "Nordlys AP production", exact: true }).waitFor();

		await page.getByRole("button", { name: "Choose the access points of Vidda Regnskapssystemer AS" }).click();
		const dialog = page.getByRole("dialog");
		await dialog.getByText("Access points of Vidda Regnskapssystemer AS").waitFor();
		await dialog.locator("input").and(dialog.getByLabel("Its participants receive through")).click();
		await page.getByRole("option", { name: "Fjordnett AP (Fjordnett Drift AS)" }).click();
		await page.keyboard.press("Escape");
		await expectAccessible(page, "service provider access points");
		await dialog.getByRole("button", { name: "Save access points" }).click();
		await page
			.getByRole("status")
			.filter({ hasText: "Vidda Regnskapssystemer AS receives through 2 access point(s)." })
			.waitFor();
		await vidda.getByRole("cell", { name: "Nordlys AP production, Fjordnett AP", exact: true }).waitFor();
		const stored = await apiGet(
			ADMIN,
			`/service-providers/${VIDDA}`,
			"application/vnd.registry.service-providers.get.v1+json",
		);
		expect(stored.body.accessPoints).toEqual([
			{ identifier: "33333333-0000-4000-8000-000000000001" },
			{ identifier: "33333333-0000-4000-8000-000000000003" },
		]);
		await page.close();
	});

	interface NetworkState {
		sml: { state: string; message: string | null };
		directory: { state: string; message: string | null };
		dns: { naptr: string; cname: string };
	}

	/** The organization's network state as the API answers ADMIN, once its SML state is `state`. */
	function smlStateOnce(base: string, qualified: string, state: string): Promise<NetworkState> {
		return pollUntil(`the SML state of ${qualified} to be ${state}`, 60000, async () => {
			const answer = await rawRequest(base, {
				method: "GET",
				path: `/rest/api/network/${encodeURIComponent(qualified)}`,
				headers: {
					Authorization: basic(ADMIN.username, ADMIN.password as string),
					Accept: "application/vnd.registry.network.get.v1+json",
				},
			});
			const body = answer.status === 200 ? (JSON.parse(answer.text) as NetworkState) : null;
			return body?.sml.state === state ? body : undefined;
		});
	}

	const NAPTR_NAME = /^[a-z2-7]{52}\.iso6523-actorid-upis\./;
	const CNAME_NAME = /^B-[0-9a-f]{32}\.iso6523-actorid-upis\./;

	test("an admin finds every provider's participants; a participant's drawer shows its organization registered in the SML with its DNS names, a refused one failing with the SML's message; the admin deletes that one", async () => {
		const nordlys = await smlStateOnce(networked.url, LOOKUP_ORGANIZATION, "registered");
		// A participant of sp2 whose registration the SML refuses.
		const refusedNumber = organizationNumber();
		const refusal = "The certificate is not allowed here";
		sml.refused.set(`0192:${refusedNumber}`, { fault: "UnauthorizedFault", message: refusal });
		const media = "application/vnd.registry.participants.add.v1+json";
		const added = await rawRequest(networked.url, {
			method: "POST",
			path: "/rest/api/participants",
			headers: {
				Authorization: basic(SP2.username, SP2.password as string),
				"Content-Type": media,
				Accept: media,
			},
			body: JSON.stringify({
				icd: "0192",
				organizationIdentifier: refusedNumber,
				name: "Avvist Nettverk AS",
				processes: [],
				contact: { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" },
			}),
		});
		expect(added.status).toBe(201);
		await smlStateOnce(networked.url, `iso6523-actorid-upis::0192:${refusedNumber}`, "failing");

		const page = await tab();
		await signIn(page, ADMIN.username, ADMIN.password as string, networked.url);
		await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();
		await navigate(page, "Participants", "All participants", "all participants");
		const table = page.getByTestId("table-Every service provider's participants");
		// Both providers' participants, each row with its provider.
		await table
			.getByRole("row")
			.filter({ hasText: "Nordlys Regnskap AS" })
			.getByRole("cell", { name: "Nordlys E-faktura AS", exact: true })
			.waitFor();
		await table
			.getByRole("row")
			.filter({ hasText: "Havblikk Fiskeri AS" })
			.getByRole("cell", { name: "Fjordnett Fakturaservice AS", exact: true })
			.waitFor();
		await table.getByText("5 in all, page 1 of 1").waitFor();
		await expectAccessible(page, "all participants");
		await screenshot(page, "all-participants");

		await page.getByRole("button", { name: "Details of Nordlys Regnskap AS (Nordlys E-faktura AS)" }).click();
		const drawer = page.getByRole("dialog");
		await drawer.locator("[data-testid=sml-state][data-state=registered]").waitFor();
		// The badge is upper-cased by CSS: its text is read as written (textContent).
		await expect(drawer.getByTestId("sml-state").textContent()).resolves.toContain("Registered");
		await expect(drawer.getByTestId("directory-state").textContent()).resolves.toContain("Not configured");
		await expect(drawer.getByTestId("dns-naptr").innerText()).resolves.toBe(nordlys.dns.naptr);
		await expect(drawer.getByTestId("dns-cname").innerText()).resolves.toBe(nordlys.dns.cname);
		expect(nordlys.dns.naptr).toMatch(NAPTR_NAME);
		expect(nordlys.dns.cname).toMatch(CNAME_NAME);
		await expectAccessible(page, "participant drawer (registered)");
		await screenshot(page, "participant-network");
		await drawer.getByRole("button", { name: "Close" }).click();
		await drawer.waitFor({ state: "detached" });

		await page.getByLabel("Search by name or organization number").fill(refusedNumber);
		await page.getByRole("button", { name: "Search" }).click();
		await table.getByText("1 in all, page 1 of 1").waitFor();
		await page.getByRole("button", { name: "Details of Avvist Nettverk AS (Fjordnett Fakturaservice AS)" }).click();
		await drawer.locator("[data-testid=sml-state][data-state=failing]").waitFor();
		await expect(drawer.getByTestId("sml-state").textContent()).resolves.toContain(refusal);
		await expectAccessible(page, "participant drawer (failing)");

		await drawer.getByRole("button", { name: "Delete this participant" }).click();
		await page
			.getByRole("dialog", { name: "Delete Avvist Nettverk AS?" })
			.getByRole("button", { name: "Yes, delete" })
			.click();
		await page
			.getByRole("status")
			.filter({ hasText: "Avvist Nettverk AS (Fjordnett Fakturaservice AS) deleted." })
			.waitFor();
		await table.getByText("Nothing found.").waitFor();
		const gone = await rawRequest(networked.url, {
			method: "GET",
			path: `/rest/api/participants/iso6523-actorid-upis::0192:${refusedNumber}`,
			headers: { Authorization: basic(SP2.username, SP2.password as string) },
		});
		expect(gone.status).toBe(404);
		sml.refused.delete(`0192:${refusedNumber}`);
		await page.close();
	});

	test("a network authority finds every provider's participants and their network state, not configured without SML_URL, and may delete none", async () => {
		const authority = demoAccount("NETWORK_AUTHORITY");
		const page = await tab();
		await signIn(page, authority.username, authority.password as string);
		await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();
		await navigate(page, "Participants", "All participants", "all participants (authority)");
		const table = page.getByTestId("table-Every service provider's participants");
		await table
			.getByRole("row")
			.filter({ hasText: "Skogly Barnehage SA" })
			.getByRole("cell", { name: "Fjordnett Fakturaservice AS", exact: true })
			.waitFor();
		await table.getByRole("cell", { name: "Nordlys E-faktura AS", exact: true }).first().waitFor();
		await expect(page.getByRole("button", { name: /^Delete / }).count()).resolves.toBe(0);

		await page
			.getByRole("button", { name: "Details of Skogly Barnehage SA (Fjordnett Fakturaservice AS)" })
			.click();
		const drawer = page.getByRole("dialog");
		await drawer.locator("[data-testid=sml-state][data-state=off]").waitFor();
		await expect(drawer.getByTestId("sml-state").textContent()).resolves.toMatch(
			/Not configured\s*This registry has no SML configured\./,
		);
		await expect(drawer.getByTestId("directory-state").textContent()).resolves.toContain("Not configured");
		await expect(drawer.getByTestId("dns-naptr").innerText()).resolves.toMatch(NAPTR_NAME);
		await expect(drawer.getByTestId("dns-cname").innerText()).resolves.toMatch(CNAME_NAME);
		await expect(drawer.getByRole("button", { name: "Delete this participant" }).count()).resolves.toBe(0);
		await expectAccessible(page, "participant drawer (not configured)");
		await page.close();
	});

	test("a service provider sees its participant's SML state and DNS names on the participant's page", async () => {
		const fjellvind = await smlStateOnce(networked.url, "iso6523-actorid-upis::0192:923609016", "registered");
		const page = await tab();
		await signIn(page, SP1.username, SP1.password as string, networked.url);
		await page.getByRole("heading", { name: "Participants", level: 1 }).waitFor();
		await page.getByRole("link", { name: "Edit Fjellvind Bygg AS" }).click();
		await page.getByRole("heading", { name: "Edit Fjellvind Bygg AS", level: 1 }).waitFor();
		const network = page.getByRole("region", { name: "In the network" });
		await network.locator("[data-testid=sml-state][data-state=registered]").waitFor();
		await expect(network.getByTestId("sml-state").textContent()).resolves.toContain("Registered");
		await expect(network.getByTestId("dns-naptr").innerText()).resolves.toBe(fjellvind.dns.naptr);
		await expect(network.getByTestId("dns-cname").innerText()).resolves.toBe(fjellvind.dns.cname);
		await expectAccessible(page, "participant page with its network state");
		await page.close();
	});

	test("no page needed anything outside the registry, broke its Content-Security-Policy or raised a script error", () => {
		expect(foreign).toEqual([]);
		expect(policyViolations).toEqual([]);
		expect(pageErrors).toEqual([]);
	});
});
