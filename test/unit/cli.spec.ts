/**
 * The operator CLI (cli/registry.ts), its commands run in this process against temporary
 * DATA_DIRs, offline (no TRANSPORTER): accounts, service providers, access points, seed,
 * lookup rebuild, export and import (a round trip into an empty store gives the same export;
 * a file with bad lines is refused whole, by line, and changes nothing). One test runs the
 * built CLI as operators do (`node dist/cli/registry.js`, `npm run registry`).
 */
process.env.LOG_LEVEL = "error";

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import type { ServiceBroker } from "moleculer";
import { runRegistry } from "../../cli/registry";
import type { CliIO } from "../../cli/registry/io";
import { createRegistryBroker } from "../../services";
import { callerMeta } from "../../src/platform/caller-signature";
import { verifyPassword } from "../../src/platform/passwords";
import { addParticipants, BILLING_PROCESS, DEMO_PROVIDER } from "../support/bulk";
import globalSetup from "../support/global-setup";
import { base64DerOf, certificatePem } from "../support/certificates";

jest.setTimeout(180000);

const ROOT = path.join(__dirname, "..", "..");
const DEMO = path.join(ROOT, "seed", "demo.json");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "registry-cli-test-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function dataDir(name: string): string {
	const dir = path.join(scratch, name);
	fs.mkdirSync(dir, { recursive: true });
	return dir;
}

interface Run {
	code: number;
	out: string;
	err: string;
}

class Capture extends Writable {
	text = "";
	_write(chunk: Buffer | string, _encoding: string, done: () => void): void {
		this.text += chunk.toString();
		done();
	}
}

/** Runs the CLI on `dir` with `stdin` as a non-terminal standard input. */
async function registry(dir: string, args: string[], stdin: string | CliIO["stdin"] = ""): Promise<Run> {
	process.env.DATA_DIR = dir;
	const out = new Capture();
	const err = new Capture();
	const input = typeof stdin === "string" ? Readable.from([stdin]) : stdin;
	const io: CliIO = { stdin: input, stdout: out, stderr: err, env: { ...process.env, TRANSPORTER: "" } };
	const code = await runRegistry(args, io);
	return { code, out: out.text, err: err.text };
}

async function ok(dir: string, args: string[], stdin = ""): Promise<Run> {
	const run = await registry(dir, args, stdin);
	if (run.code !== 0) throw new Error(`registry ${args.join(" ")} exited ${run.code}:\n${run.err}`);
	return run;
}

async function exported(dir: string): Promise<Record<string, unknown>[]> {
	const run = await ok(dir, ["export"]);
	return run.out === ""
		? []
		: run.out
				.trimEnd()
				.split("\n")
				.map((line) => JSON.parse(line));
}

/** A broker with the owning services on `dir` (for what no command does: bulk participants, a deleteDate). */
async function withServices<T>(dir: string, work: (broker: ServiceBroker) => Promise<T>): Promise<T> {
	process.env.DATA_DIR = dir;
	const broker = createRegistryBroker({
		env: { ...process.env, TRANSPORTER: "" },
		services: ["accounts", "accessPoints", "catalog", "participants", "lookup"],
		overrides: { logger: false },
	});
	await broker.start();
	try {
		return await work(broker);
	} finally {
		await broker.stop();
	}
}

describe("usage", () => {
	test("--help answers 0 and names every command group; no command or an unknown one is a usage error (2)", async () => {
		const help = await registry(dataDir("usage"), ["--help"]);
		expect(help.code).toBe(0);
		for (const command of ["accounts", "service-providers", "access-points", "seed", "lookup", "export", "import"])
			expect(help.out).toContain(command);
		expect((await registry(dataDir("usage"), [])).code).toBe(2);
		expect((await registry(dataDir("usage"), ["frobnicate"])).code).toBe(2);
		const badRole = await registry(dataDir("usage"), ["accounts", "add", "x", "--role", "KING"]);
		expect(badRole.code).toBe(2);
		expect(badRole.err).toContain("KING");
		expect((await registry(dataDir("usage"), ["accounts", "add", "x"])).code).toBe(2);
		expect((await registry(dataDir("usage"), ["import", path.join(scratch, "no-such-file.ndjson")])).code).toBe(2);
	});
});

describe("on a seeded store", () => {
	const dir = dataDir("seeded");

	beforeAll(async () => {
		const seeded = await ok(dir, ["seed", DEMO]);
		expect(seeded.err).toContain("participants: 4 created");
	});

	const accountLine = async (username: string) =>
		(await exported(dir)).find((record) => record.type === "account" && record.username === username) as {
			passwordHash: string;
			disabled: boolean;
			oauthClientId?: string;
		};

	test("seed again changes nothing; a refused seed file lists its reasons and exits 1", async () => {
		expect((await ok(dir, ["seed", DEMO])).err).toContain("participants: 0 created, 0 updated, 4 unchanged");
		const bad = path.join(scratch, "bad-seed.json");
		fs.writeFileSync(bad, JSON.stringify({ serviceProviders: [{ identifier: "not-a-uuid", title: "" }] }));
		const refused = await registry(dir, ["seed", bad]);
		expect(refused.code).toBe(1);
		expect(refused.err).toContain("serviceProviders[0].identifier");
	});

	test("accounts add (password from stdin), list, disable, reset-password", async () => {
		const added = await registry(dir, ["accounts", "add", "ops", "--role", "ADMIN"], "ops-first-password\n");
		expect(added.code).toBe(0);
		expect(added.err).toContain("account ops added (ADMIN)");
		expect(added.err).not.toContain("ops-first-password");
		expect(await verifyPassword("ops-first-password", (await accountLine("ops")).passwordHash)).toBe(true);

		const listed = JSON.parse((await ok(dir, ["accounts", "list", "--json"])).out) as {
			username: string;
			disabled: boolean;
			passwordHash?: string;
		}[];
		expect(listed.map((account) => account.username)).toEqual(["admin", "app1", "authority", "ops", "sp1", "sp2"]);
		expect(listed.every((account) => account.passwordHash === undefined)).toBe(true);
		expect((await ok(dir, ["accounts", "list"])).out).toMatch(/^USERNAME\s+ROLE/);

		const taken = await registry(dir, ["accounts", "add", "ops", "--role", "ADMIN"], "ops-other-password\n");
		expect(taken.code).toBe(1);
		expect(taken.err).toContain("already exists");
		const short = await registry(dir, ["accounts", "add", "ops2", "--role", "ADMIN"], "short\n");
		expect(short.code).toBe(1);
		expect(short.err).toContain("password");
		const unlinked = await registry(
			dir,
			["accounts", "add", "sp9", "--role", "SERVICE_PROVIDER"],
			"sp9-long-password\n",
		);
		expect(unlinked.code).toBe(1);
		expect(unlinked.err).toContain("serviceProvider");
		const noPassword = await registry(dir, ["accounts", "add", "ops3", "--role", "ADMIN"], "");
		expect(noPassword.code).toBe(1);
		const linked = await registry(
			dir,
			["accounts", "add", "sp9", "--role", "SERVICE_PROVIDER", "--service-provider", DEMO_PROVIDER],
			"sp9-long-password\n",
		);
		expect(linked.code).toBe(0);

		expect((await ok(dir, ["accounts", "disable", "ops"])).err).toContain("account ops disabled");
		expect((await accountLine("ops")).disabled).toBe(true);
		expect((await registry(dir, ["accounts", "disable", "nobody"])).code).toBe(1);

		expect((await ok(dir, ["accounts", "reset-password", "ops"], "ops-second-password\n")).err).toContain(
			"password of ops reset",
		);
		const hash = (await accountLine("ops")).passwordHash;
		expect(await verifyPassword("ops-second-password", hash)).toBe(true);
		expect(await verifyPassword("ops-first-password", hash)).toBe(false);
		const unknown = await registry(dir, ["accounts", "reset-password", "nobody"], "whatever-password\n");
		expect(unknown.code).toBe(1);
		expect(unknown.err).toContain("no account nobody");

		// decisions §15: the OAuth client that acts as an account; one client, one account.
		expect((await ok(dir, ["accounts", "set-oauth-client", "ops", "ops-automation"])).err).toContain(
			"OAuth client ops-automation now acts as ops",
		);
		expect((await accountLine("ops")).oauthClientId).toBe("ops-automation");
		const twice = await registry(dir, ["accounts", "set-oauth-client", "sp1", "ops-automation"]);
		expect([twice.code, twice.err]).toEqual([1, expect.stringContaining("acts as another account")]);
		expect((await registry(dir, ["accounts", "set-oauth-client", "ops"])).code).toBe(1);
		expect((await ok(dir, ["accounts", "set-oauth-client", "ops", "--clear"])).err).toContain(
			"no OAuth client acts as ops",
		);
		expect((await accountLine("ops")).oauthClientId).toBeUndefined();
	});

	test("on a terminal the password is asked twice and never echoed; two different ones change nothing", async () => {
		const terminal = () => Object.assign(new PassThrough(), { isTTY: true, setRawMode: jest.fn() });
		const typeAfterPrompts = async (input: PassThrough, err: () => string, answers: string[]) => {
			for (const [index, answer] of answers.entries()) {
				const prompt = index === 0 ? "Password for" : "Repeat it";
				while (!err().includes(prompt)) await new Promise((resolve) => setTimeout(resolve, 5));
				input.write(answer);
			}
		};
		const run = async (username: string, answers: string[]) => {
			process.env.DATA_DIR = dir;
			const input = terminal();
			const out = new Capture();
			const err = new Capture();
			const done = runRegistry(["accounts", "add", username, "--role", "NETWORK_AUTHORITY"], {
				stdin: input,
				stdout: out,
				stderr: err,
				env: { ...process.env, TRANSPORTER: "" },
			});
			await typeAfterPrompts(input, () => err.text, answers);
			return { code: await done, err: err.text, rawMode: input.setRawMode.mock.calls };
		};
		const typed = await run("auditor", ["auditor-pass-word!\r", "auditor-pass-wordX\u007f!\r"]);
		expect(typed.code).toBe(0);
		expect(typed.err).not.toContain("auditor-pass");
		expect(typed.rawMode).toEqual([[true], [false], [true], [false]]);
		expect(await verifyPassword("auditor-pass-word!", (await accountLine("auditor")).passwordHash)).toBe(true);

		const differ = await run("auditor2", ["first-pass-word-1\r", "other-pass-word-2\r"]);
		expect(differ.code).toBe(1);
		expect(differ.err).toContain("differ");
		expect(await accountLine("auditor2")).toBeUndefined();
	});

	test("service providers add and list", async () => {
		const added = await ok(dir, ["service-providers", "add", "Aurora Faktura AS"]);
		const identifier = added.out.trim();
		expect(identifier).toMatch(/^[0-9a-f-]{36}$/);
		const fixed = "11111111-0000-4000-8000-0000000000ee";
		expect((await ok(dir, ["service-providers", "add", "Zeta Faktura AS", "--identifier", fixed])).out.trim()).toBe(
			fixed,
		);
		const taken = await registry(dir, ["service-providers", "add", "Again", "--identifier", fixed]);
		expect(taken.code).toBe(1);
		expect(taken.err).toContain("already exists");
		const listed = JSON.parse((await ok(dir, ["service-providers", "list", "--json"])).out) as {
			identifier: string;
			title: string;
		}[];
		expect(listed.map((provider) => provider.title)).toEqual([
			"Aurora Faktura AS",
			"Fjordnett Fakturaservice AS",
			"Nordlys E-faktura AS",
			"Vidda Regnskapssystemer AS",
			"Zeta Faktura AS",
		]);
		expect(listed.find((provider) => provider.title === "Aurora Faktura AS")?.identifier).toBe(identifier);
	});

	test("access points: add a provider, add an access point, list both; an unknown provider or a bad URL is refused", async () => {
		const provider = (
			await ok(dir, [
				"access-points",
				"add-provider",
				"Aurora AP AS",
				"--contact-name",
				"Kari Nordmann",
				"--contact-email",
				"ap@aurora.example",
				"--contact-phone",
				"+47 22 33 44 55",
			])
		).out.trim();
		const added = await ok(dir, [
			"access-points",
			"add",
			"Aurora AP production",
			"--provider",
			provider,
			"--url",
			"https://as4.aurora.example/as4",
			"--transport-profile",
			"peppol-transport-as4-v2_0",
			"--transport-title",
			"Peppol AS4 profile v2",
			"--certificate-type",
			"Peppol AP",
		]);
		const identifier = added.out.trim();
		const accessPoints = JSON.parse((await ok(dir, ["access-points", "list", "--json"])).out) as {
			identifier: string;
			title: string;
			provider: { title: string };
			endpoints: unknown[];
		}[];
		expect(accessPoints.find((accessPoint) => accessPoint.identifier === identifier)).toEqual({
			identifier,
			title: "Aurora AP production",
			provider: {
				identifier: provider,
				title: "Aurora AP AS",
				contact: { name: "Kari Nordmann", email: "ap@aurora.example", phoneNumber: "+47 22 33 44 55" },
			},
			endpoints: [
				{
					url: "https://as4.aurora.example/as4",
					transportProfile: {
						title: "Peppol AS4 profile v2",
						value: "peppol-transport-as4-v2_0",
						certificateTypes: ["Peppol AP"],
					},
				},
			],
		});
		expect(accessPoints).toHaveLength(4);
		const providers = JSON.parse((await ok(dir, ["access-points", "providers", "--json"])).out) as {
			title: string;
		}[];
		expect(providers.map((entry) => entry.title)).toEqual([
			"Aurora AP AS",
			"Fjordnett Drift AS",
			"Nordlys Aksesspunkt AS",
		]);

		const unknown = await registry(dir, [
			"access-points",
			"add",
			"X",
			"--provider",
			"0f0f0f0f-0000-4000-8000-000000000000",
			"--url",
			"https://x.example",
			"--transport-profile",
			"p",
		]);
		expect(unknown.code).toBe(1);
		expect(unknown.err).toContain("provider");
		const badUrl = await registry(dir, [
			"access-points",
			"add",
			"X",
			"--provider",
			provider,
			"--url",
			"not a url",
			"--transport-profile",
			"p",
		]);
		expect(badUrl.code).toBe(1);
		expect(badUrl.err).toContain("endpoints[0].url");
		const badEmail = await registry(dir, [
			"access-points",
			"add-provider",
			"Y",
			"--contact-name",
			"N",
			"--contact-email",
			"nope",
			"--contact-phone",
			"+47 22 33 44 55",
		]);
		expect(badEmail.code).toBe(1);
		expect(badEmail.err).toContain("contact.email");
	});

	test("access-points set-endpoints: one endpoint with a PEM certificate file, or a JSON list; an expired certificate is refused, nothing changed", async () => {
		const NORDLYS_TEST = "33333333-0000-4000-8000-000000000002";
		const pem = path.join(scratch, "ap-test.pem");
		fs.writeFileSync(pem, await certificatePem(365, "PNO000102"));
		const set = await ok(dir, [
			"access-points",
			"set-endpoints",
			NORDLYS_TEST,
			"--url",
			"https://as4-test.nordlys-ap.example/as4",
			"--transport-profile",
			"peppol-transport-as4-v2_0",
			"--transport-title",
			"Peppol AS4 profile v2",
			"--certificate-type",
			"Peppol AP",
			"--certificate-file",
			pem,
			"--activation-date",
			"2026-01-01",
			"--description",
			"renewed",
		]);
		expect(set.err).toContain('access point "Nordlys AP test": 1 endpoint(s) set');
		expect(set.err).toMatch(/certificate CN=PNO000102,O=Test AP,C=NO until \d{4}-\d{2}-\d{2}/);
		const endpointsOf = async () =>
			(
				JSON.parse((await ok(dir, ["access-points", "list", "--json"])).out) as {
					identifier: string;
					endpoints: Record<string, unknown>[];
				}[]
			).find((accessPoint) => accessPoint.identifier === NORDLYS_TEST)?.endpoints;
		expect(await endpointsOf()).toEqual([
			{
				url: "https://as4-test.nordlys-ap.example/as4",
				transportProfile: {
					title: "Peppol AS4 profile v2",
					value: "peppol-transport-as4-v2_0",
					certificateTypes: ["Peppol AP"],
				},
				certificate: base64DerOf(fs.readFileSync(pem, "utf8")),
				activationDate: "2026-01-01",
				description: "renewed",
			},
		]);

		const list = path.join(scratch, "endpoints.json");
		const profile = { title: "AS4", value: "peppol-transport-as4-v2_0", certificateTypes: [] };
		fs.writeFileSync(
			list,
			JSON.stringify({
				endpoints: [
					{ url: "https://one.example/as4", transportProfile: profile },
					{
						url: "https://two.example/as4",
						transportProfile: profile,
						certificate: fs.readFileSync(pem, "utf8"),
					},
				],
			}),
		);
		expect((await ok(dir, ["access-points", "set-endpoints", NORDLYS_TEST, "--file", list])).err).toContain(
			"2 endpoint(s) set",
		);
		const before = await endpointsOf();
		expect(before).toHaveLength(2);

		const expired = path.join(scratch, "expired.pem");
		fs.writeFileSync(expired, await certificatePem(-1));
		const refused = await registry(dir, [
			"access-points",
			"set-endpoints",
			NORDLYS_TEST,
			"--url",
			"https://x.example/as4",
			"--transport-profile",
			"p",
			"--certificate-file",
			expired,
		]);
		expect(refused.code).toBe(1);
		expect(refused.err).toContain("endpoints[0].certificate");
		expect(refused.err).toContain("the certificate has expired");
		expect(await endpointsOf()).toEqual(before);
		expect((await registry(dir, ["access-points", "set-endpoints", NORDLYS_TEST])).code).toBe(2);
		expect(
			(await registry(dir, ["access-points", "set-endpoints", NORDLYS_TEST, "--none", "--file", list])).code,
		).toBe(2);
	});

	test("service-providers link-access-points replaces the list; an unknown access point is refused; --none unlinks", async () => {
		const VIDDA = "11111111-0000-4000-8000-000000000003";
		const linked = async () =>
			(
				JSON.parse((await ok(dir, ["service-providers", "list", "--json"])).out) as {
					identifier: string;
					accessPoints: { identifier: string }[];
				}[]
			).find((provider) => provider.identifier === VIDDA)?.accessPoints;
		const run = await ok(dir, [
			"service-providers",
			"link-access-points",
			VIDDA,
			"33333333-0000-4000-8000-000000000002",
			"33333333-0000-4000-8000-000000000003",
		]);
		expect(run.err).toContain('"Vidda Regnskapssystemer AS" receives through 2 access point(s)');
		expect(await linked()).toEqual([
			{ identifier: "33333333-0000-4000-8000-000000000002" },
			{ identifier: "33333333-0000-4000-8000-000000000003" },
		]);
		const unknown = await registry(dir, [
			"service-providers",
			"link-access-points",
			VIDDA,
			"0f0f0f0f-0000-4000-8000-000000000000",
		]);
		expect(unknown.code).toBe(1);
		expect(unknown.err).toContain("accessPoints[0].identifier");
		expect(await linked()).toHaveLength(2);
		expect((await registry(dir, ["service-providers", "link-access-points", VIDDA])).code).toBe(2);
		await ok(dir, ["service-providers", "link-access-points", VIDDA, "--none"]);
		expect(await linked()).toEqual([]);
	});

	test("lookup rebuild", async () => {
		expect((await ok(dir, ["lookup", "rebuild"])).err).toContain(
			"lookup rebuilt: 4 organization(s) from 4 participant(s)",
		);
	});

	test("lookup parked, replay and drop: a parked change applies on replay, a malformed one is dropped", async () => {
		process.env.DATA_DIR = dir;
		const broker = createRegistryBroker({
			services: ["catalog", "accounts", "participants", "lookup"],
			overrides: { logger: false },
		});
		await broker.start();
		const organizationKey = "0088:parked-by-the-cli-test";
		try {
			const lookup = broker.getLocalService("lookup") as unknown as {
				park(payload: unknown, error: unknown): Promise<void>;
			};
			const change = {
				participant: "p-parked",
				organizationKey,
				processes: [BILLING_PROCESS],
				version: 1,
				deleted: false,
			};
			await lookup.park(change, new Error("store unavailable"));
			await lookup.park({ participant: 42 }, new Error("malformed participant change"));
		} finally {
			await broker.stop();
		}
		const parked = JSON.parse((await ok(dir, ["lookup", "parked", "--json"])).out) as {
			identifier: string;
			error: string;
		}[];
		expect(parked.map((entry) => entry.error)).toEqual([
			"Error: store unavailable",
			"Error: malformed participant change",
		]);
		const replay = await registry(dir, ["lookup", "replay"]);
		expect(replay.code).toBe(1);
		expect(replay.err).toContain("1 parked change(s) applied, 1 still failing");
		const left = JSON.parse((await ok(dir, ["lookup", "parked", "--json"])).out) as { identifier: string }[];
		expect(left.map((entry) => entry.identifier)).toEqual([parked[1].identifier]);
		expect((await ok(dir, ["lookup", "drop", parked[1].identifier])).err).toContain("dropped");
		expect(JSON.parse((await ok(dir, ["lookup", "parked", "--json"])).out)).toEqual([]);
		expect((await registry(dir, ["lookup", "drop", parked[1].identifier])).code).toBe(1);
	});
});

describe("export and import", () => {
	const source = dataDir("source");
	const copy = dataDir("copy");
	const BULK = 1100;
	let file: string;
	let records: Record<string, unknown>[];

	beforeAll(async () => {
		await ok(source, ["seed", DEMO]);
		await ok(source, ["accounts", "add", "retired", "--role", "ADMIN"], "retired-admin-password\n");
		await ok(source, ["accounts", "disable", "retired"]);
		await withServices(source, async (broker) => {
			expect(await addParticipants(broker, BULK, { batch: 500 })).toBe(BULK);
			const user = { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: DEMO_PROVIDER } as const;
			await broker.call(
				"participants.update",
				{
					qualifiedIdentifier: "iso6523-actorid-upis::0192:991825827",
					body: {
						processes: [{ identifier: BILLING_PROCESS }],
						contact: { name: "Ingrid Berg", email: "ingrid@example.no", phoneNumber: "+47 22 33 44 55" },
						deleteDate: "2099-12-31",
					},
				},
				{ meta: callerMeta(broker, user) },
			);
		});
		file = path.join(scratch, "registry.ndjson");
		const run = await ok(source, ["export", "--out", file]);
		expect(run.out).toBe("");
		expect(run.err).toContain(`to ${file}`);
		records = fs
			.readFileSync(file, "utf8")
			.trimEnd()
			.split("\n")
			.map((line) => JSON.parse(line));
	});

	test("the export carries the SMP publishing data: service providers' access points, endpoints' certificates as base64 DER", () => {
		const demo = JSON.parse(fs.readFileSync(DEMO, "utf8")) as {
			serviceProviders: { identifier: string; accessPoints: unknown[] }[];
			accessPoints: { identifier: string; endpoints: unknown[] }[];
		};
		for (const provider of demo.serviceProviders)
			expect(records.find((record) => record.identifier === provider.identifier)).toMatchObject({
				type: "serviceProvider",
				accessPoints: provider.accessPoints,
			});
		for (const accessPoint of demo.accessPoints)
			expect(records.find((record) => record.identifier === accessPoint.identifier)).toMatchObject({
				type: "accessPoint",
				endpoints: accessPoint.endpoints,
			});
	});

	test("the export has every record once, a type on each line, in type order; hashes, never passwords", () => {
		const counts: Record<string, number> = {};
		for (const record of records) counts[record.type as string] = (counts[record.type as string] ?? 0) + 1;
		expect(counts).toEqual({
			serviceProvider: 3,
			accessPointProvider: 2,
			accessPoint: 3,
			capability: 2,
			process: 12,
			documentType: 5,
			account: 6,
			participant: 4 + BULK,
		});
		const order = [
			"serviceProvider",
			"accessPointProvider",
			"accessPoint",
			"capability",
			"process",
			"documentType",
			"account",
			"participant",
		];
		const positions = records.map((record) => order.indexOf(record.type as string));
		expect(positions).toEqual([...positions].sort((a, b) => a - b));
		const accounts = records.filter((record) => record.type === "account");
		expect(
			accounts.every((account) => typeof account.passwordHash === "string" && account.password === undefined),
		).toBe(true);
		expect(accounts.find((account) => account.username === "retired")).toMatchObject({
			role: "ADMIN",
			disabled: true,
		});
		expect(records.find((record) => record.identifier === "77777777-0000-4000-8000-000000000001")).toMatchObject({
			type: "participant",
			provider: { identifier: DEMO_PROVIDER, title: "Nordlys E-faktura AS" },
			deleteDate: "2099-12-31",
			processes: [{ identifier: BILLING_PROCESS }],
		});
		expect(
			new Set(records.filter((record) => record.type === "participant").map((record) => record.identifier)).size,
		).toBe(4 + BULK);
		expect(fs.existsSync(`${file}`)).toBe(true);
	});

	test("export --out refuses to overwrite a file (usage, 2)", async () => {
		const run = await registry(source, ["export", "--out", file]);
		expect(run.code).toBe(2);
		expect(fs.readFileSync(file, "utf8").split("\n")).toHaveLength(records.length + 1);
	});

	test("import into an empty store, then export: the same file; importing again changes nothing; the lookup answers", async () => {
		const imported = await ok(copy, ["import", file]);
		expect(imported.err).toContain(`participant: ${4 + BULK} created, 0 updated, 0 unchanged`);
		expect(imported.err).toContain("1 account(s) disabled as in the file");
		const again = await ok(copy, ["export"]);
		expect(again.out).toBe(fs.readFileSync(file, "utf8"));

		const twice = await ok(copy, ["import", file]);
		expect(twice.err).toContain(`participant: 0 created, 0 updated, ${4 + BULK} unchanged`);
		expect(twice.err).toContain("account: 0 created, 0 updated, 6 unchanged");
		expect(twice.err).not.toContain("disabled as in the file");
		expect((await ok(copy, ["export"])).out).toBe(fs.readFileSync(file, "utf8"));

		const answer = await withServices(copy, (broker) =>
			broker.call<{ identifier: string }[], object>("lookup.organizationProcesses", {
				qualifiedIdentifier: "iso6523-actorid-upis::0192:991825827",
			}),
		);
		expect(answer.map((process) => process.identifier)).toEqual([BILLING_PROCESS]);
		expect((await ok(copy, ["lookup", "rebuild"])).err).toContain(`from ${4 + BULK} participant(s)`);
	});

	test("a file with bad lines is refused whole: every bad line by number, nothing changed", async () => {
		const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
		const at = (type: string, nth = 0) =>
			lines.map((line, index) => ({ line, index })).filter(({ line }) => line.includes(`"type":"${type}"`))[nth]
				.index;
		const edit = (index: number, change: (record: Record<string, unknown>) => void) => {
			const record = JSON.parse(lines[index]);
			change(record);
			lines[index] = JSON.stringify(record);
		};
		const bad: Record<number, string> = {};
		const brokenJson = at("capability");
		lines[brokenJson] = '{"type":"capability",';
		bad[brokenJson + 1] = "not JSON";
		const participant = at("participant", 10);
		edit(participant, (record) => {
			record.organizationIdentifier = "123456789";
			record.qualifiedIdentifier = "iso6523-actorid-upis::0192:123456789";
		});
		bad[participant + 1] = "organizationIdentifier";
		const unknownProcess = at("participant", 20);
		edit(unknownProcess, (record) =>
			(record.processes as unknown[]).push({ identifier: "55555555-0000-4000-8000-0000000000ff" }),
		);
		bad[unknownProcess + 1] = "no process 55555555-0000-4000-8000-0000000000ff";
		const account = at("account", 1);
		edit(account, (record) => {
			record.password = "plain-text-password";
		});
		bad[account + 1] = "unknown field(s): password";
		// A participant the store already has for this provider and organization, under another identifier.
		const clash = at("participant", 30);
		edit(clash, (record) => (record.identifier = "99999999-0000-4000-8000-000000000001"));
		bad[clash + 1] = "already has participant";
		const linked = at("serviceProvider", 1);
		edit(linked, (record) => (record.accessPoints = [{ identifier: "33333333-0000-4000-8000-0000000000ff" }]));
		bad[linked + 1] = "accessPoints[0].identifier: no access point 33333333-0000-4000-8000-0000000000ff";
		const certificate = at("accessPoint", 1);
		edit(certificate, (record) => ((record.endpoints as { certificate: string }[])[0].certificate = "AAAA"));
		bad[certificate + 1] = "endpoints[0].certificate: must be one X.509 certificate";
		lines.push(lines[at("serviceProvider")]);
		bad[lines.length] = "duplicate serviceProvider identifier (also line 1)";
		lines.push('{"type":"widget"}');
		bad[lines.length] = "type: must be one of";
		const badFile = path.join(scratch, "bad.ndjson");
		fs.writeFileSync(badFile, `${lines.join("\n")}\n`);

		const before = (await ok(copy, ["export"])).out;
		const refused = await registry(copy, ["import", badFile]);
		expect(refused.code).toBe(1);
		expect(refused.err).toContain("refused, nothing changed");
		for (const [line, text] of Object.entries(bad))
			expect(refused.err).toMatch(new RegExp(`line ${line}: [^\\n]*${text.replace(/[()[\]]/g, "\\$&")}`));
		const reported = [...refused.err.matchAll(/line (\d+):/g)].map((match) => Number(match[1]));
		expect([...new Set(reported)].sort((a, b) => a - b)).toEqual(
			Object.keys(bad)
				.map(Number)
				.sort((a, b) => a - b),
		);
		expect((await ok(copy, ["export"])).out).toBe(before);

		const empty = dataDir("empty");
		expect((await registry(empty, ["import", badFile])).code).toBe(1);
		expect(await exported(empty)).toEqual([]);
	});
});

describe("the built CLI", () => {
	const dir = dataDir("built");

	beforeAll(async () => {
		await globalSetup(); // builds dist/ when the sources are newer
		await ok(dir, ["seed", DEMO]);
	});

	const env = { ...process.env, DATA_DIR: dir, TRANSPORTER: "", LOG_LEVEL: "error" };

	test("node dist/cli/registry.js --help, and a real accounts list", () => {
		const cli = path.join(ROOT, "dist", "cli", "registry.js");
		const help = spawnSync(process.execPath, [cli, "--help"], { env, encoding: "utf8" });
		expect(help.status).toBe(0);
		expect(help.stdout).toContain("Usage: registry");
		const list = spawnSync(process.execPath, [cli, "accounts", "list"], { env, encoding: "utf8", timeout: 60000 });
		expect(list.stderr).toBe("");
		expect(list.status).toBe(0);
		expect(list.stdout.split("\n")[0]).toMatch(/^USERNAME\s+ROLE\s+PROVIDER\s+DISABLED$/);
		expect(list.stdout).toMatch(/^sp1\s+SERVICE_PROVIDER\s+11111111-0000-4000-8000-000000000001\s+no$/m);
		const unknown = spawnSync(process.execPath, [cli, "accounts", "disable", "nobody"], {
			env,
			encoding: "utf8",
			timeout: 60000,
		});
		expect(unknown.status).toBe(1);
		expect(unknown.stderr).toContain("registry: no account nobody; nothing changed");
		expect(unknown.stderr).not.toMatch(/\s+at /);
	});

	test("the REPL without TRANSPORTER refuses (2): a one-process registry cannot be joined", () => {
		const run = spawnSync(process.execPath, [path.join(ROOT, "dist", "cli", "repl.js")], {
			env,
			encoding: "utf8",
			timeout: 60000,
		});
		expect(run.status).toBe(2);
		expect(run.stderr).toContain("set TRANSPORTER");
	});

	test("npm run registry -- …", () => {
		const run = spawnSync("npm", ["run", "--silent", "registry", "--", "service-providers", "list"], {
			cwd: ROOT,
			env,
			encoding: "utf8",
			timeout: 60000,
		});
		expect(run.status).toBe(0);
		expect(run.stdout).toContain("Nordlys E-faktura AS");
	});
});
