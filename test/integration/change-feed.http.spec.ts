/**
 * The change feed (docs/decisions.md "Change feed"): GET /rest/api/changes in both forms (pages
 * after a cursor, Server-Sent Events), its scope, its cursors, `modifiedSince` on the participant
 * finds, and a follower (examples/follow-changes.ts) killed and resumed during a random stream of
 * changes that ends with exactly the registry's state. Runs against the one-process registry and
 * again against the cluster.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { organizationNumberSource } from "../support/bulk";
import {
	demoAccount,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";

const ROOT = path.join(__dirname, "..", "..");
const CHANGES = "application/vnd.registry.changes.find.v1+json";
const MEDIA = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const contact = (name: string) => ({ name, email: "kari@example.no", phoneNumber: "+47 22 33 44 55" });
const refs = (...ids: string[]) => ids.map((identifier) => ({ identifier }));
const qid = (organization: string) => `iso6523-actorid-upis::0192:${organization}`;
const organizationNumber = organizationNumberSource(33_000_000);

interface Change {
	sequence: number;
	at: string;
	operation: string;
	resource: string;
	identifier: string;
	version: number;
	deleted: boolean;
	record: Record<string, unknown> | null;
}

let registry: RunningRegistry;
let sp1: string;
let sp2: string;
let admin: string;
let authority: string;
let SP2: string;

beforeAll(async () => {
	registry = await startRegistry();
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	admin = demoAuth("ADMIN");
	authority = demoAuth("NETWORK_AUTHORITY");
	SP2 = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

async function page(
	auth: string,
	after: string,
	limit = 1000,
): Promise<{ changes: Change[]; cursor: string; more: boolean }> {
	const answer = await request(registry.url)
		.get("/rest/api/changes")
		.query({ after, limit })
		.set({ Authorization: auth, Accept: CHANGES });
	expect(answer.status).toBe(200);
	expect(answer.headers["content-type"]).toBe(`${CHANGES};charset=UTF-8`);
	return answer.body;
}

/** Every change after `after` (pages of `limit`). */
async function all(auth: string, after = "0", limit = 1000): Promise<Change[]> {
	const changes: Change[] = [];
	for (let cursor = after; ;) {
		const next = await page(auth, cursor, limit);
		changes.push(...next.changes);
		cursor = next.cursor;
		if (!next.more) return changes;
	}
}

/** The feed's head as this caller sees it now (writes reach the feed within milliseconds: wait for `predicate`). */
async function until(
	auth: string,
	after: string,
	predicate: (changes: Change[]) => boolean,
	timeoutMs = 10_000,
): Promise<Change[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const changes = await all(auth, after);
		if (predicate(changes)) return changes;
		if (Date.now() > deadline)
			throw new Error(
				`the feed did not show the expected changes: ${JSON.stringify(changes.map((change) => [change.sequence, change.operation, change.identifier]))}`,
			);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

async function head(auth: string): Promise<string> {
	return (await all(auth)).at(-1)?.sequence.toString() ?? "0";
}

async function addParticipant(
	auth: string,
	processes = [BILLING],
): Promise<{ identifier: string; organization: string }> {
	const organization = organizationNumber();
	const answer = await request(registry.url)
		.post("/rest/api/participants")
		.set({
			Authorization: auth,
			Accept: MEDIA("participants", "add"),
			"Content-Type": MEDIA("participants", "add"),
		})
		.send({
			icd: "0192",
			organizationIdentifier: organization,
			name: "Feed AS",
			processes: refs(...processes),
			contact: contact("Kari"),
		});
	expect(answer.status).toBe(201);
	return { identifier: answer.body.identifier, organization };
}

function updateParticipant(auth: string, organization: string, name: string, processes = [BILLING]) {
	return request(registry.url)
		.put(`/rest/api/participants/${encodeURIComponent(qid(organization))}`)
		.set({
			Authorization: auth,
			Accept: MEDIA("participants", "update"),
			"Content-Type": MEDIA("participants", "update"),
		})
		.send({ processes: refs(...processes), contact: contact(name) });
}

function deleteParticipant(auth: string, organization: string) {
	return request(registry.url)
		.delete(`/rest/api/participants/${encodeURIComponent(qid(organization))}`)
		.set({ Authorization: auth, Accept: MEDIA("participants", "delete") });
}

function transferParticipant(auth: string, organization: string, to: string) {
	return request(registry.url)
		.put(`/rest/api/participants/${encodeURIComponent(qid(organization))}/transfer/${to}`)
		.set({ Authorization: auth, Accept: MEDIA("participants", "transfer") });
}

describe("GET /rest/api/changes", () => {
	test("every committed change after the cursor, in order, with versions and tombstones", async () => {
		const start = await head(authority);
		const { identifier, organization } = await addParticipant(sp1);
		expect((await updateParticipant(sp1, organization, "Ola", [BILLING, ORDERING])).status).toBe(200);
		const process = await request(registry.url)
			.post("/rest/api/processes")
			.set({ Authorization: admin, Accept: MEDIA("processes", "add"), "Content-Type": MEDIA("processes", "add") })
			.send({
				domain: "Feed",
				title: "Feed process",
				capabilities: [],
				documentTypes: [],
				dependencies: [{ identifier: BILLING }],
				requiredICDs: ["0192"],
			});
		expect(process.status).toBe(201);
		expect((await deleteParticipant(sp1, organization)).status).toBe(204);

		const changes = await until(authority, start, (found) =>
			found.some((change) => change.identifier === identifier && change.deleted),
		);
		const sequences = changes.map((change) => change.sequence);
		expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
		expect(new Set(sequences).size).toBe(sequences.length);

		const mine = changes.filter((change) => change.identifier === identifier);
		expect(mine.map((change) => [change.operation, change.version, change.deleted])).toEqual([
			["addParticipant", 1, false],
			["updateParticipant", 2, false],
			["deleteParticipantByQualifiedIdentifier", 3, true],
		]);
		expect(mine[0].record).toMatchObject({
			identifier,
			qualifiedIdentifier: qid(organization),
			icd: "0192",
			organizationIdentifier: organization,
			name: "Feed AS",
			contact: contact("Kari"),
			provider: { identifier: demoAccount("SERVICE_PROVIDER", 0).serviceProvider },
			processes: refs(BILLING),
		});
		expect(mine[1].record).toMatchObject({ contact: contact("Ola"), processes: refs(BILLING, ORDERING) });
		expect(mine[2].record).toBeNull();

		const added = changes.find((change) => change.identifier === process.body.identifier);
		expect(added).toMatchObject({ resource: "process", operation: "addProcess", version: 1, deleted: false });
		expect(added?.record).toEqual({
			identifier: process.body.identifier,
			domain: "Feed",
			title: "Feed process",
			restricted: false,
			visible: true,
			capabilities: [],
			documentTypes: [],
			dependencies: refs(BILLING),
			requiredICDs: ["0192"],
		});
	});

	test("pages resume exactly: small pages give the same changes as one large page, nothing twice", async () => {
		for (let i = 0; i < 3; i++) await addParticipant(sp1);
		const whole = await all(authority);
		const paged = await all(authority, "0", 2);
		expect(paged.map((change) => change.sequence)).toEqual(whole.map((change) => change.sequence));
		const last = whole.at(-1) as Change;
		const after = await page(authority, String(last.sequence));
		expect(after.changes.filter((change) => change.sequence <= last.sequence)).toEqual([]);
		const empty = await page(authority, String(last.sequence + 1_000_000));
		expect(empty).toEqual({ changes: [], cursor: String(last.sequence + 1_000_000), more: false });
	});

	test("a service provider sees its own participants' changes only; a participant transferred away is gone for the old owner", async () => {
		const start = await head(authority);
		const sp1Start = (await all(sp1)).at(-1)?.sequence.toString() ?? "0";
		const sp2Start = (await all(sp2)).at(-1)?.sequence.toString() ?? "0";
		const { identifier, organization } = await addParticipant(sp1);
		const other = await addParticipant(sp2, [ORDERING]);
		expect((await transferParticipant(sp1, organization, SP2)).status).toBe(200);
		await until(authority, start, (found) =>
			found.some((change) => change.identifier === identifier && change.operation === "transferParticipant"),
		);

		const seenBySp1 = await all(sp1, sp1Start);
		expect(seenBySp1.some((change) => change.identifier === other.identifier)).toBe(false);
		expect(seenBySp1.every((change) => change.resource === "participant")).toBe(true);
		expect(
			seenBySp1
				.filter((change) => change.identifier === identifier)
				.map((change) => [change.operation, change.deleted]),
		).toEqual([
			["addParticipant", false],
			["transferParticipant", true],
		]);
		const seenBySp2 = await all(sp2, sp2Start);
		expect(
			seenBySp2
				.filter((change) => change.identifier === identifier)
				.map((change) => [change.operation, change.deleted]),
		).toEqual([["transferParticipant", false]]);
		expect(seenBySp2.find((change) => change.identifier === identifier)?.record).toMatchObject({
			provider: { identifier: SP2 },
		});
		expect(seenBySp2.some((change) => change.identifier === other.identifier)).toBe(true);
	});

	test("refusals: no credentials 401, an access point provider 403, a bad cursor or limit 400", async () => {
		expect((await request(registry.url).get("/rest/api/changes").set("Accept", CHANGES)).status).toBe(401);
		expect(
			(
				await request(registry.url)
					.get("/rest/api/changes")
					.set({ Accept: CHANGES, Authorization: demoAuth("ACCESS_POINT_PROVIDER") })
			).status,
		).toBe(403);
		for (const query of [{ after: "abc" }, { after: "-1" }, { limit: "0" }, { limit: "1001" }, { limit: "ten" }]) {
			const answer = await request(registry.url)
				.get("/rest/api/changes")
				.query(query)
				.set({ Accept: CHANGES, Authorization: admin });
			expect(answer.status).toBe(400);
			expect(answer.body.exception).toBe("MethodArgumentTypeMismatchException");
		}
	});
});

describe("GET /rest/api/changes as Server-Sent Events", () => {
	/** Reads events from an open stream until `count` changes arrived. */
	async function events(
		response: Response,
		count: number,
		timeoutMs = 10_000,
	): Promise<Array<{ id: string; data: Change }>> {
		const reader = (response.body as ReadableStream<Uint8Array>).getReader();
		const decoder = new TextDecoder();
		const found: Array<{ id: string; data: Change }> = [];
		let text = "";
		const timer = setTimeout(() => void reader.cancel(), timeoutMs);
		try {
			while (found.length < count) {
				const { value, done } = await reader.read();
				if (done) break;
				text += decoder.decode(value, { stream: true });
				const blocks = text.split("\n\n");
				text = blocks.pop() as string;
				for (const block of blocks) {
					const lines = block.split("\n");
					const data = lines.find((line) => line.startsWith("data: "));
					if (!data) continue;
					expect(lines.find((line) => line.startsWith("event: "))).toBe("event: change");
					found.push({
						id: (lines.find((line) => line.startsWith("id: ")) ?? "").slice(4),
						data: JSON.parse(data.slice(6)) as Change,
					});
				}
			}
		} finally {
			clearTimeout(timer);
			await reader.cancel().catch(() => undefined);
		}
		return found;
	}

	test("a stream from Last-Event-ID brings each new change as it happens, and a reconnect resumes after the last one received", async () => {
		const start = await head(sp1);
		const stream = await fetch(`${registry.url}/rest/api/changes`, {
			headers: { Accept: "text/event-stream", Authorization: sp1, "Last-Event-ID": start },
		});
		expect(stream.status).toBe(200);
		expect(stream.headers.get("content-type")).toBe("text/event-stream;charset=UTF-8");
		expect(stream.headers.get("cache-control")).toBe("no-cache, no-store, max-age=0, must-revalidate");
		const reading = events(stream, 2);
		const { identifier, organization } = await addParticipant(sp1);
		expect((await updateParticipant(sp1, organization, "Streamed")).status).toBe(200);
		const received = await reading;
		expect(received.map((event) => [event.data.identifier, event.data.operation])).toEqual([
			[identifier, "addParticipant"],
			[identifier, "updateParticipant"],
		]);
		for (const event of received) expect(event.id).toBe(String(event.data.sequence));

		// Reconnect after the first: the second again, and nothing before it.
		const again = await fetch(`${registry.url}/rest/api/changes?after=${start}`, {
			headers: { Accept: "text/event-stream", Authorization: sp1, "Last-Event-ID": received[0].id },
		});
		const resumed = await events(again, 1);
		expect(resumed.map((event) => event.data.sequence)).toEqual([received[1].data.sequence]);
	});

	test("the stream is refused like the paged form", async () => {
		expect(
			(await fetch(`${registry.url}/rest/api/changes`, { headers: { Accept: "text/event-stream" } })).status,
		).toBe(401);
		const bad = await fetch(`${registry.url}/rest/api/changes`, {
			headers: { Accept: "text/event-stream", Authorization: sp1, "Last-Event-ID": "x" },
		});
		expect(bad.status).toBe(400);
		expect(((await bad.json()) as { exception: string }).exception).toBe("MethodArgumentTypeMismatchException");
	});
});

describe("modifiedSince on the participant finds", () => {
	test("only participants changed at or after the instant; a bad value is 400", async () => {
		const { identifier: before } = await addParticipant(sp1);
		await new Promise((resolve) => setTimeout(resolve, 20));
		const since = new Date().toISOString();
		const { identifier: after } = await addParticipant(sp1);
		const found = await request(registry.url)
			.get("/rest/api/participants")
			.query({ modifiedSince: since, size: 100 })
			.set({ Authorization: sp1, Accept: MEDIA("participants", "find") });
		expect(found.status).toBe(200);
		const identifiers = found.body.content.map((participant: { identifier: string }) => participant.identifier);
		expect(identifiers).toContain(after);
		expect(identifiers).not.toContain(before);
		const bad = await request(registry.url)
			.get("/rest/api/participants")
			.query({ modifiedSince: "yesterday" })
			.set({ Authorization: sp1, Accept: MEDIA("participants", "find") });
		expect(bad.status).toBe(400);
		expect(bad.body.exception).toBe("MethodArgumentTypeMismatchException");
	});
});

describe("a follower (examples/follow-changes.ts)", () => {
	const FOLLOWER = path.join(ROOT, "dist", "examples", "follow-changes.js");
	let directory: string;
	let follower: ChildProcess | null = null;
	/** Exits other than our kills (a follower that saw a change twice exits with an error). */
	const failures: string[] = [];

	beforeAll(() => {
		// The example is compiled as `npm run example:follow` does.
		execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "examples/tsconfig.json"], {
			cwd: ROOT,
			stdio: "inherit",
		});
		directory = fs.mkdtempSync(path.join(os.tmpdir(), "registry-follower-"));
	}, 120_000);
	afterAll(() => {
		follower?.kill("SIGKILL");
		fs.rmSync(directory, { recursive: true, force: true });
	});

	function startFollower(file: string): ChildProcess {
		const child = spawn(process.execPath, [FOLLOWER, registry.url, file], {
			env: { ...process.env, REGISTRY_USERNAME: "authority", REGISTRY_PASSWORD: "authority-demo-password" },
			stdio: ["ignore", "ignore", "pipe"],
		});
		let errors = "";
		child.stderr?.on("data", (chunk) => (errors += String(chunk)));
		child.on("exit", (code, signal) => {
			if (signal !== "SIGKILL") failures.push(`exited with ${code}: ${errors}`);
		});
		return child;
	}

	/** The registry's state as the feed's records say it: participants from the export, the catalog from its finds. */
	async function registryState(): Promise<Record<string, unknown>> {
		const state: Record<string, unknown> = {};
		const exported = await request(registry.url)
			.get("/rest/api/exports/participants")
			.set({ Authorization: admin, Accept: "application/x-ndjson" });
		for (const line of exported.text.split("\n").filter(Boolean)) {
			const participant = JSON.parse(line) as Record<string, unknown> & { provider: { identifier: string } };
			state[`participant:${participant.identifier}`] = {
				...participant,
				provider: { identifier: participant.provider.identifier },
			};
		}
		const processes = await request(registry.url)
			.get("/rest/api/processes")
			.set({ Authorization: admin, Accept: MEDIA("processes", "stream") });
		for (const process of processes.body as Array<
			Record<string, unknown> & {
				capabilities: Array<{ identifier: string }>;
				documentTypes: Array<{ identifier: string }>;
				dependencies: Array<{ identifier: string }>;
			}
		>) {
			const ids = (items: Array<{ identifier: string }>) => items.map(({ identifier }) => ({ identifier }));
			state[`process:${process.identifier}`] = {
				...process,
				capabilities: ids(process.capabilities),
				documentTypes: ids(process.documentTypes),
				dependencies: ids(process.dependencies),
			};
		}
		const documentTypes = await request(registry.url)
			.get("/rest/api/document-types")
			.query({ size: 1000 })
			.set({ Authorization: admin, Accept: MEDIA("document-types", "find") });
		for (const documentType of documentTypes.body.content as Array<Record<string, unknown>>) {
			const { processes: _processes, ...own } = documentType;
			state[`documentType:${documentType.identifier}`] = own;
		}
		return state;
	}

	function mirrorOf(file: string): {
		cursor: string;
		applied: number;
		records: Record<string, { version: number; record: unknown }>;
	} {
		return fs.existsSync(file)
			? JSON.parse(fs.readFileSync(file, "utf8"))
			: { cursor: "0", applied: 0, records: {} };
	}

	test("killed and resumed during a random stream of changes, it ends with exactly the registry's state and saw nothing twice", async () => {
		const file = path.join(directory, "mirror.json");
		follower = startFollower(file);
		const live: Array<{ organization: string; auth: string }> = [];
		let kills = 0;
		const random = (() => {
			let seed = 20261125;
			return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
		})();
		for (let step = 0; step < 60; step++) {
			const roll = random();
			if (roll < 0.4 || live.length === 0) {
				const auth = random() < 0.5 ? sp1 : sp2;
				live.push({ ...(await addParticipant(auth, auth === sp1 ? [BILLING] : [ORDERING])), auth });
			} else if (roll < 0.7) {
				const target = live[Math.floor(random() * live.length)];
				expect(
					(
						await updateParticipant(
							target.auth,
							target.organization,
							`Step ${step}`,
							target.auth === sp1 ? [BILLING] : [ORDERING],
						)
					).status,
				).toBe(200);
			} else if (roll < 0.85) {
				const [target] = live.splice(Math.floor(random() * live.length), 1);
				expect((await deleteParticipant(target.auth, target.organization)).status).toBe(204);
			} else {
				const answer = await request(registry.url)
					.post("/rest/api/document-types")
					.set({
						Authorization: admin,
						Accept: MEDIA("document-types", "add"),
						"Content-Type": MEDIA("document-types", "add"),
					})
					.send({ title: `Follower ${step}`, visible: random() < 0.5, processes: [] });
				expect(answer.status).toBe(201);
			}
			if (random() < 0.12) {
				follower.kill("SIGKILL");
				kills++;
				await new Promise((resolve) => follower?.once("exit", resolve));
				follower = startFollower(file);
			}
			await new Promise((resolve) => setTimeout(resolve, random() * 40));
		}
		expect(kills).toBeGreaterThan(2);

		// Every change reached the feed; the follower catches up with its head.
		const expected = await registryState();
		const feed = await until(authority, "0", (changes) => {
			const keys = new Set(
				changes.filter((change) => !change.deleted).map((change) => `${change.resource}:${change.identifier}`),
			);
			return Object.keys(expected).every((key) => keys.has(key));
		});
		const headSequence = String((feed.at(-1) as Change).sequence);
		const deadline = Date.now() + 20_000;
		while (mirrorOf(file).cursor !== headSequence && Date.now() < deadline)
			await new Promise((resolve) => setTimeout(resolve, 100));
		follower.kill("SIGKILL");
		follower = null;

		const mirror = mirrorOf(file);
		expect(failures).toEqual([]);
		expect(mirror.cursor).toBe(headSequence);
		expect(mirror.applied).toBe(feed.length); // each change applied once, over all the runs
		const mirrored = Object.fromEntries(Object.entries(mirror.records).map(([key, entry]) => [key, entry.record]));
		const capabilities = Object.keys(mirrored).filter((key) => key.startsWith("capability:"));
		for (const key of capabilities) delete mirrored[key]; // capabilities have no find to compare with
		expect(mirrored).toEqual(expected);
	}, 120_000);
});
