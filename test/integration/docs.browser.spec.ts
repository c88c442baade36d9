/**
 * The interactive docs at /docs in a real browser (issue 9): Debian's chromium, driven by
 * playwright-core (no browser download), against a registry started in this process. The
 * page must render the operations from the served OpenAPI document, take Basic credentials
 * in its Authorize dialog, and run one request with "Try it out" → "Execute" that needs
 * those credentials (GET /rest/api/participants as sp1), showing the 200 answer.
 *
 * Without /usr/bin/chromium this suite is skipped with a message, except in CI (CI=true),
 * where .ci/run installs chromium and the suite must run.
 *
 * DOCS_SCREENSHOT=<file> also saves a screenshot of the page (`npm run docs:screenshot`
 * writes docs/images/api-docs.png, the README's picture).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { startRegistry, type RunningRegistry } from "../support/registry";
import { CHROMIUM, CHROMIUM_ARGS, describeWithChromium } from "../support/chromium";

const TAGS = [
	"Access points",
	"Document types",
	"Organizations",
	"Participants",
	"Processes",
	"Audit",
	"Exports",
	"Operations",
];

const describeWithBrowser = describeWithChromium("interactive docs test");

describeWithBrowser("interactive API docs at /docs in headless Chromium", () => {
	let registry: RunningRegistry;
	let userDataDir: string;
	let context: BrowserContext;
	let page: Page;
	/** Requests the page made to anything but the registry (the page must need no CDN). */
	const foreign: string[] = [];
	const pageErrors: string[] = [];

	beforeAll(async () => {
		registry = await startRegistry();
		userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-docs-chromium-"));
		context = await chromium.launchPersistentContext(userDataDir, {
			executablePath: CHROMIUM,
			headless: true,
			args: CHROMIUM_ARGS,
			viewport: { width: 1280, height: 900 },
		});
		const origin = new URL(registry.url).origin;
		await context.route("**/*", (route) => {
			const url = route.request().url();
			if (url.startsWith(origin) || url.startsWith("data:")) return route.continue();
			foreign.push(url);
			return route.abort();
		});
		page = context.pages()[0] ?? (await context.newPage());
		page.on("pageerror", (error) => pageErrors.push(String(error)));
	}, 60000);

	afterAll(async () => {
		await context?.close();
		if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
		await registry?.stop();
	});

	test("the page renders every tag section and the operations of the document", async () => {
		const response = await page.goto(`${registry.url}/docs`);
		expect(response?.status()).toBe(200);
		await page.locator(".opblock-tag-section").first().waitFor({ timeout: 30000 });
		for (const tag of TAGS) await expect(page.locator(`.opblock-tag[data-tag="${tag}"]`).count()).resolves.toBe(1);
		await expect(
			page.locator(".opblock-summary-description", { hasText: "Find processes" }).count(),
		).resolves.toBeGreaterThan(0);
		await expect(
			page.locator(".opblock-summary-description", { hasText: "Add participant" }).count(),
		).resolves.toBe(1);
		await expect(page.locator(".info .title").innerText()).resolves.toContain("Participant Registry REST API");
		expect(pageErrors).toEqual([]);
	});

	test("Authorize with Basic credentials, then Try it out and Execute GET /rest/api/participants answers 200", async () => {
		await page.locator(".auth-wrapper .btn.authorize").click();
		const dialog = page.locator(".dialog-ux .modal-ux");
		await dialog.waitFor();
		// The dialog offers Basic and Bearer (decisions §15): this test signs in with Basic.
		const basicForm = dialog.locator("form").filter({ hasText: "basicAuth" });
		await basicForm.locator("#auth-basic-username").fill("sp1");
		await basicForm.locator("#auth-basic-password").fill("sp1-demo-password");
		await basicForm.locator("button.modal-btn.auth.authorize").click();
		await expect(dialog.getByText("Authorized").count()).resolves.toBeGreaterThan(0);
		await dialog.locator("button.modal-btn.auth.btn-done").first().click();

		const operation = page.locator("#operations-Participants-findParticipants_or_streamParticipants");
		await operation.locator(".opblock-summary").first().click();
		await operation.locator("button.try-out__btn").click();
		await operation.locator("button.execute").click();
		const status = operation.locator(".live-responses-table .response .response-col_status").first();
		await status.waitFor({ timeout: 30000 });
		await expect(status.innerText()).resolves.toContain("200");
		// The request carried the credentials, and the answer is the registry's page of sp1's participants.
		await expect(operation.locator(".curl-command").innerText()).resolves.toMatch(/Authorization: Basic /);
		await operation
			.locator(".live-responses-table .response-col_description", { hasText: "Nordlys Regnskap AS" })
			.first()
			.waitFor({ timeout: 10000 });

		if (process.env.DOCS_SCREENSHOT) {
			// The executed operation, from its summary line to the live 200 answer.
			// Page coordinates of the operation block and of its live answer (runs in the page).
			const box = (selector: string) =>
				page.evaluate(
					`(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return { y: r.top + window.scrollY, height: r.height }; })()`,
				) as Promise<{ y: number; height: number }>;
			const id = "#operations-Participants-findParticipants_or_streamParticipants";
			const top = await box(id);
			const answer = await box(`${id} .live-responses-table`);
			const file = path.resolve(process.env.DOCS_SCREENSHOT);
			fs.mkdirSync(path.dirname(file), { recursive: true });
			await page.screenshot({
				path: file,
				fullPage: true,
				clip: { x: 0, y: Math.max(0, top.y - 20), width: 1280, height: answer.y + answer.height - top.y + 40 },
			});
		}
	});

	test("the page needed nothing outside the registry (no CDN) and raised no script errors", () => {
		expect(foreign).toEqual([]);
		expect(pageErrors).toEqual([]);
	});
});
