/**
 * Crash safety of the embedded store (issue 8): the registry (`node dist/server.js`, as the
 * container runs it) on a DATA_DIR of its own receives participant adds over HTTP from
 * several concurrent writers and is killed with SIGKILL at a random moment (seeded), then
 * started again on the same DATA_DIR; several rounds.
 *
 * After every kill, on a copy of the files as the crash left them (the registry itself
 * recovers the originals when it starts): `PRAGMA integrity_check` says ok on every .db
 * file, every stored participant body is complete JSON, and the process claims agree with
 * the participants exactly (a change is one transaction: never a participant without its
 * claims or the reverse).
 *
 * After every restart, through the API: every participant that got a 201, in any round
 * so far, is there with exactly what was sent; a request cut off by the kill left either
 * nothing or the whole participant; every participant of the writer's provider is a valid
 * Participant; and the organization lookup agrees with the participants.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import globalSetup from "../support/global-setup";
import { rawRequest } from "../support/raw-http";
import { demoAccount, demoAuth, DEMO_SEED_FILE } from "../support/registry";
import { seededRandom as random } from "../support/seeded-random";
import { freePort } from "../support/local-network";

const SEED = 8_2026;
const ROUNDS = 6;
const WRITERS = 6;
/** The kill comes this long after the writers start (uniform, seeded). */
const KILL_AFTER_MS = { min: 200, max: 1500 };

const ROOT = path.join(__dirname, "..", "..");
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const ADD = "application/vnd.registry.participants.add.v1+json";

interface Sent {
	organizationIdentifier: string;
	name: string;
	processes: string[];
	contact: { name: string; email: string; phoneNumber: string };
}

interface Acknowledged extends Sent {
	identifier: string;
	round: number;
}

const sp1 = demoAuth("SERVICE_PROVIDER", 0);
const sp1Provider = demoAccount("SERVICE_PROVIDER", 0).serviceProvider as string;
let dataDir: string;
let child: ChildProcess | undefined;
let output: string[] = [];
let url = "";

async function startWriter(seed: boolean): Promise<void> {
	const port = await freePort();
	output = [];
	const env: NodeJS.ProcessEnv = {
		...process.env,
		DATA_DIR: dataDir,
		PORT: String(port),
		LOG_LEVEL: "warn",
		NODE_ID: `crash-writer-${process.pid}`,
	};
	// The one-process default, whatever the test runner's environment holds.
	for (const name of ["TRANSPORTER", "CACHER", "MONGO_URI", "SERVICES", "NAMESPACE", "REGISTRY_SEED", "RATE_LIMIT"])
		delete env[name];
	if (seed) env.REGISTRY_SEED = DEMO_SEED_FILE;
	child = spawn(process.execPath, [path.join(ROOT, "dist", "server.js")], {
		cwd: ROOT,
		env,
		stdio: ["ignore", "pipe", "pipe"],
	});
	const keep = (chunk: Buffer) => {
		output.push(chunk.toString());
		if (output.length > 100) output.shift();
	};
	child.stdout?.on("data", keep);
	child.stderr?.on("data", keep);
	url = `http://127.0.0.1:${port}`;
	const deadline = Date.now() + 60000;
	for (;;) {
		if (child.exitCode !== null) throw new Error(`the registry exited (${child.exitCode}):\n${output.join("")}`);
		const ready = await rawRequest(url, { method: "GET", path: "/health/ready", timeoutMs: 2000 }).catch(
			() => null,
		);
		if (ready?.status === 200) return;
		if (Date.now() > deadline) throw new Error(`the registry was not ready within 60 s:\n${output.join("")}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

async function kill(): Promise<void> {
	const running = child;
	if (!running || running.exitCode !== null || running.signalCode !== null) return;
	const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
	running.kill("SIGKILL");
	await exited;
}

/** Copies the store files as the crash left them (db, -wal, -shm) and checks the copies. */
function checkFiles(round: number): { files: number; participants: number; claims: number } {
	const copy = fs.mkdtempSync(path.join(os.tmpdir(), `registry-crash-copy-${round}-`));
	try {
		// Only the store files: the data directory also holds the SMP signing pair's folder.
		for (const entry of fs.readdirSync(dataDir, { withFileTypes: true })) {
			if (entry.isFile()) fs.copyFileSync(path.join(dataDir, entry.name), path.join(copy, entry.name));
		}
		const databases = fs.readdirSync(copy).filter((file) => file.endsWith(".db"));
		expect(databases).toEqual(
			expect.arrayContaining(["participants.db", "catalog.db", "accounts.db", "lookup.db", "accessPoints.db"]),
		);
		let participants = 0;
		let claims = 0;
		for (const file of databases) {
			const db = new Database(path.join(copy, file));
			try {
				expect({ file, integrity: db.pragma("integrity_check", { simple: true }) }).toEqual({
					file,
					integrity: "ok",
				});
				if (file !== "participants.db") continue;
				const rows = db.prepare("SELECT identifier, version, body FROM participants").all() as Array<{
					identifier: string;
					version: number;
					body: string;
				}>;
				const held = new Map<string, string>();
				for (const row of rows) {
					const doc = JSON.parse(row.body) as {
						identifier: string;
						organizationKey: string;
						processIds: string[];
						contact: Record<string, string>;
						qualifiedIdentifier: string;
					};
					expect(typeof doc.qualifiedIdentifier).toBe("string");
					expect(Object.keys(doc.contact ?? {}).sort()).toEqual(["email", "name", "phoneNumber"]);
					for (const processId of doc.processIds)
						held.set(`${doc.organizationKey}|${processId}`, row.identifier);
				}
				const claimRows = (db.prepare("SELECT body FROM processClaims").all() as Array<{ body: string }>).map(
					(row) =>
						JSON.parse(row.body) as { organizationKey: string; processId: string; participant: string },
				);
				const claimed = new Map(
					claimRows.map((claim) => [`${claim.organizationKey}|${claim.processId}`, claim.participant]),
				);
				expect(claimed).toEqual(held);
				participants = rows.length;
				claims = claimRows.length;
			} finally {
				db.close();
			}
		}
		return { files: databases.length, participants, claims };
	} finally {
		fs.rmSync(copy, { recursive: true, force: true });
	}
}

type Outcome =
	| { kind: "acknowledged"; participant: Acknowledged }
	| { kind: "cut off"; sent: Sent }
	| { kind: "refused"; status: number; text: string };

async function add(sent: Sent, round: number): Promise<Outcome> {
	const body = JSON.stringify({
		icd: "0088",
		organizationIdentifier: sent.organizationIdentifier,
		name: sent.name,
		processes: sent.processes.map((identifier) => ({ identifier })),
		contact: sent.contact,
	});
	try {
		const answer = await rawRequest(url, {
			method: "POST",
			path: "/rest/api/participants",
			headers: { Authorization: sp1, "Content-Type": ADD, Accept: ADD },
			body,
			timeoutMs: 10000,
		});
		if (answer.status !== 201) return { kind: "refused", status: answer.status, text: answer.text };
		return {
			kind: "acknowledged",
			participant: { ...sent, identifier: JSON.parse(answer.text).identifier, round },
		};
	} catch {
		return { kind: "cut off", sent };
	}
}

const qualified = (organizationIdentifier: string) => `iso6523-actorid-upis::0088:${organizationIdentifier}`;

/** A Participant as the contract describes it (spec "Participant"). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function participantProblems(item: Record<string, any>): string[] {
	const problems: string[] = [];
	const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
	if (!uuid.test(item.identifier)) problems.push("identifier");
	if (item.qualifiedIdentifier !== `iso6523-actorid-upis::${item.icd}:${item.organizationIdentifier}`)
		problems.push("qualifiedIdentifier");
	if (!/^\d{1,4}$/.test(item.icd)) problems.push("icd");
	if (typeof item.organizationIdentifier !== "string" || item.organizationIdentifier.length === 0)
		problems.push("organizationIdentifier");
	for (const date of ["registrationDate", "lastModificationDate"])
		if (!/^\d{4}-\d{2}-\d{2}$/.test(item[date])) problems.push(date);
	for (const field of ["name", "email", "phoneNumber"])
		if (typeof item.contact?.[field] !== "string") problems.push(`contact.${field}`);
	if (item.provider?.identifier !== sp1Provider) problems.push("provider");
	if (
		!Array.isArray(item.processes) ||
		item.processes.some((process: { identifier?: unknown }) => !uuid.test(String(process.identifier)))
	)
		problems.push("processes");
	return problems;
}

beforeAll(async () => {
	// dist/ is built by the distributed project's global setup; this suite runs in the one-process project.
	await globalSetup();
	dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-crash-"));
}, 300000);

afterAll(async () => {
	await kill();
	if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

test(`${ROUNDS} rounds of SIGKILL during concurrent participant adds lose no acknowledged participant and leave no half-written one`, async () => {
	const next = random(SEED);
	const killTimes = random(SEED + 1);
	const acknowledged: Acknowledged[] = [];
	const cutOff: Sent[] = [];
	const figures: string[] = [];
	let serial = 0;
	await startWriter(true);

	for (let round = 1; round <= ROUNDS; round++) {
		const killAfter = Math.round(KILL_AFTER_MS.min + killTimes() * (KILL_AFTER_MS.max - KILL_AFTER_MS.min));
		let killed = false;
		const refusals: string[] = [];
		const writer = async () => {
			while (!killed) {
				const n = ++serial;
				const sent: Sent = {
					organizationIdentifier: `crash-${process.pid}-${n}`,
					name: `Krasj Test ${n} AS`,
					processes: next() < 0.5 ? [BILLING] : [BILLING, ORDERING],
					contact: {
						name: `Kontakt ${n}`,
						email: `kontakt-${n}@example.no`,
						phoneNumber: `+47 22 ${String(10 + (n % 90))} ${String(10 + ((n * 7) % 90))} ${String(10 + ((n * 13) % 90))}`,
					},
				};
				const outcome = await add(sent, round);
				if (outcome.kind === "acknowledged") acknowledged.push(outcome.participant);
				else if (outcome.kind === "cut off") cutOff.push(outcome.sent);
				else if (!killed) refusals.push(`${outcome.status} ${outcome.text.slice(0, 200)}`);
			}
		};
		const before = acknowledged.length;
		// One request first: the gateway's credential cache is empty after a start, and six
		// concurrent first requests would spend the round hashing the same password.
		expect(
			(
				await rawRequest(url, {
					method: "GET",
					path: "/rest/api/participants?size=1",
					headers: { Authorization: sp1 },
				})
			).status,
		).toBe(200);
		const writers = Array.from({ length: WRITERS }, writer);
		await new Promise((resolve) => setTimeout(resolve, killAfter));
		killed = true;
		await kill();
		await Promise.all(writers);
		// Nothing was refused while the registry ran (a refusal would be a bug of its own).
		expect(refusals).toEqual([]);
		const files = checkFiles(round);

		await startWriter(false);
		const lookup = await verify(acknowledged, cutOff, round === ROUNDS);
		figures.push(
			`round ${round}: killed after ${killAfter} ms, ${acknowledged.length - before} acknowledged; ${files.participants} participants and ${files.claims} claims in ${files.files} files checked` +
				(lookup.lagging > 0
					? `; the lookup of ${lookup.lagging} organization(s) caught up through the outbox relay in ${lookup.lagMs} ms`
					: ""),
		);
	}
	// eslint-disable-next-line no-console
	console.log(
		`crash safety (seed ${SEED}): ${acknowledged.length} acknowledged adds, ${cutOff.length} cut off by a kill, ${ROUNDS} SIGKILLs\n  ${figures.join("\n  ")}`,
	);
	expect(acknowledged.length).toBeGreaterThan(ROUNDS * 5);
}, 300000);

/**
 * `withLookup`: also compare every organization's lookup with its participant (after the last
 * round only: a change whose commit the kill let through but whose lookup update it cut off
 * waits in the outbox for the relay, which runs 15 s after a start; killed every second or
 * so, the registry gets there only after the last round).
 */
async function verify(
	acknowledged: Acknowledged[],
	cutOff: Sent[],
	withLookup: boolean,
): Promise<{ lagging: number; lagMs: number }> {
	const get = (path: string, accept: string) =>
		rawRequest(url, { method: "GET", path, headers: { Authorization: sp1, Accept: accept } });
	const stream = await get(
		"/rest/api/participants?processes=true",
		"application/vnd.registry.participants.stream.v1+json",
	);
	expect(stream.status).toBe(200);
	const stored = JSON.parse(stream.text) as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
	for (const item of stored)
		expect({ identifier: item.identifier, problems: participantProblems(item) }).toEqual({
			identifier: item.identifier,
			problems: [],
		});
	const byOrganization = new Map(stored.map((item) => [item.organizationIdentifier as string, item]));

	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	const same = (item: Record<string, any> | undefined, sent: Sent) =>
		item !== undefined &&
		item.name === sent.name &&
		JSON.stringify(item.contact) === JSON.stringify(sent.contact) &&
		JSON.stringify(item.processes.map((process: { identifier: string }) => process.identifier).sort()) ===
			JSON.stringify([...sent.processes].sort());
	const lost = acknowledged.filter((participant) => {
		const item = byOrganization.get(participant.organizationIdentifier);
		return !same(item, participant) || item?.identifier !== participant.identifier;
	});
	expect(lost.map((participant) => `${participant.organizationIdentifier} (round ${participant.round})`)).toEqual([]);
	const halfWritten = cutOff.filter(
		(sent) =>
			byOrganization.has(sent.organizationIdentifier) &&
			!same(byOrganization.get(sent.organizationIdentifier), sent),
	);
	expect(halfWritten.map((sent) => sent.organizationIdentifier)).toEqual([]);

	// A few by UUID through the single-participant path too (the latest round's, and a random earlier one's).
	for (const participant of [...acknowledged.slice(-3), acknowledged[Math.floor(acknowledged.length / 2)]].filter(
		Boolean,
	)) {
		const single = await get(
			`/rest/api/participants/${participant.identifier}`,
			"application/vnd.registry.participants.get.v1+json",
		);
		expect(single.status).toBe(200);
		expect(same(JSON.parse(single.text), participant)).toBe(true);
	}

	// The lookup agrees with the participants (the relay delivers what a kill left in the outbox).
	const ours = withLookup
		? stored.filter((item) => String(item.organizationIdentifier).startsWith(`crash-${process.pid}-`))
		: [];
	const started = Date.now();
	const deadline = started + 40000;
	let lagging = 0;
	for (const item of ours) {
		const expected = item.processes.map((process: { identifier: string }) => process.identifier).sort();
		let actual: unknown;
		for (let attempt = 0; ; attempt++) {
			const answer = await get(
				`/rest/api/organizations/${qualified(item.organizationIdentifier)}/processes`,
				"application/vnd.registry.organizations.processes.v1+json",
			);
			actual =
				answer.status === 200
					? (JSON.parse(answer.text) as Array<{ identifier: string }>)
							.map((process) => process.identifier)
							.sort()
					: answer.status;
			if (JSON.stringify(actual) === JSON.stringify(expected) || Date.now() > deadline) break;
			if (attempt === 0) lagging++;
			await new Promise((resolve) => setTimeout(resolve, 500));
		}
		expect({ organization: item.organizationIdentifier, lookup: actual }).toEqual({
			organization: item.organizationIdentifier,
			lookup: expected,
		});
	}
	return { lagging, lagMs: lagging > 0 ? Date.now() - started : 0 };
}
