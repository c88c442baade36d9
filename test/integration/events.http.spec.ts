/**
 * GET /rest/api/events through real HTTP (docs/operations.md "Audit trail"; issue 8 "Audit
 * trail"): a service provider sees its own participants' events and nothing of another
 * provider's, NETWORK_AUTHORITY the participants' and the catalog's, ADMIN everything (account
 * changes included), filters participant/operation/from/to, the page envelope, 401/403 by role.
 * Records reach `audit` through the writing services' outbox relays, asynchronously: the
 * tests poll with a deadline. Runs against the one-process registry and again against the
 * cluster (one OS process per service).
 */
import request from "supertest";
import {
	demoAccount,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";
import { organizationNumberSource } from "../support/bulk";

const EVENTS = "/rest/api/events";
const EVENTS_MEDIA = "application/vnd.registry.events.find.v1+json";
const PARTICIPANTS = "/rest/api/participants";
const MEDIA = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;

const BILLING = "55555555-0000-4000-8000-000000000001";
const CATALOGUE = "55555555-0000-4000-8000-000000000007";
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };

interface AuditEvent {
	identifier: string;
	at: string;
	actor: { username: string; role: string; serviceProvider?: string } | null;
	operation: string;
	resource: string;
	resourceId: string;
	serviceProviders: string[];
	before: Record<string, unknown> | null;
	after: Record<string, unknown> | null;
}

let registry: RunningRegistry;
let sp1: string;
let sp2: string;
let admin: string;
let authority: string;
let app: string;
let SP1: string;
let SP2: string;

/** Set up once: sp1 adds, updates and transfers a participant to sp2; sp2 adds one of its own; ADMIN changes the catalog. */
const story = {
	moved: { identifier: "", qualifiedIdentifier: "" },
	kept: { identifier: "", qualifiedIdentifier: "" },
	process: "",
	startedAt: "",
};

/** A fresh valid Norwegian organization number (MOD11) per call. */
const organizationNumber = organizationNumberSource(40_000_000);

function events(auth: string | null, query: Record<string, string | number> = {}) {
	const req = request(registry.url).get(EVENTS).query(query).set("Accept", EVENTS_MEDIA);
	return auth ? req.set("Authorization", auth) : req;
}

async function content(auth: string, query: Record<string, string | number> = {}): Promise<AuditEvent[]> {
	const response = await events(auth, { size: 1000, ...query });
	expect(response.status).toBe(200);
	return response.body.content as AuditEvent[];
}

/** Polls until `check` passes or the deadline: records arrive through the relays asynchronously. */
async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 20000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value !== undefined && value !== false) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 25));
	}
}

async function addParticipant(auth: string, processes: string[]) {
	const organizationIdentifier = organizationNumber();
	const response = await request(registry.url)
		.post(PARTICIPANTS)
		.set("Authorization", auth)
		.set("Accept", MEDIA("participants", "add"))
		.set("Content-Type", MEDIA("participants", "add"))
		.send({
			icd: "0192",
			organizationIdentifier,
			name: "Revisjon AS",
			processes: processes.map((identifier) => ({ identifier })),
			contact,
		});
	expect(response.status).toBe(201);
	return response.body as { identifier: string; qualifiedIdentifier: string };
}

beforeAll(async () => {
	registry = await startRegistry();
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	admin = demoAuth("ADMIN");
	authority = demoAuth("NETWORK_AUTHORITY");
	app = demoAuth("ACCESS_POINT_PROVIDER");
	SP1 = demoAccount("SERVICE_PROVIDER", 0).serviceProvider as string;
	SP2 = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;

	story.startedAt = new Date().toISOString();
	story.moved = await addParticipant(sp1, [BILLING]);
	const path = `${PARTICIPANTS}/${encodeURIComponent(story.moved.qualifiedIdentifier)}`;
	const updated = await request(registry.url)
		.put(path)
		.set("Authorization", sp1)
		.set("Accept", MEDIA("participants", "update"))
		.set("Content-Type", MEDIA("participants", "update"))
		.send({ processes: [{ identifier: BILLING }, { identifier: CATALOGUE }], contact });
	expect(updated.status).toBe(200);
	const transferred = await request(registry.url)
		.put(`${path}/transfer/${SP2}`)
		.set("Authorization", sp1)
		.set("Accept", MEDIA("participants", "transfer"));
	expect(transferred.status).toBe(200);
	story.kept = await addParticipant(sp2, [CATALOGUE]);
	const process = await request(registry.url)
		.post("/rest/api/processes")
		.set("Authorization", admin)
		.set("Accept", MEDIA("processes", "add"))
		.set("Content-Type", MEDIA("processes", "add"))
		.send({ domain: "Audit", title: "Audited over HTTP" });
	expect(process.status).toBe(201);
	story.process = process.body.identifier;
	// Everything above has reached `audit` once ADMIN sees the last change.
	await eventually(
		async () =>
			(await content(admin, { participant: story.kept.identifier })).length === 1 &&
			(await content(admin, { participant: story.moved.identifier })).length === 3,
		"the story's records",
	);
	await eventually(
		async () =>
			(await content(admin, { operation: "addProcess" })).some((event) => event.resourceId === story.process),
		"the catalog record",
	);
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

/** ADMIN's and NETWORK_AUTHORITY's view holds the story: both providers' participants and the catalog record. */
function expectTheStory(seen: AuditEvent[]): void {
	const participants = new Set(seen.map((event) => event.resourceId));
	expect(participants).toContain(story.moved.identifier);
	expect(participants).toContain(story.kept.identifier);
	const catalog = seen.find((event) => event.resourceId === story.process)!;
	expect(catalog).toMatchObject({
		operation: "addProcess",
		resource: "process",
		actor: { username: "admin", role: "ADMIN" },
		before: null,
		after: { title: "Audited over HTTP" },
	});
}

function adminCall(method: "post" | "put", path: string, resource: string, operation: string, body?: object) {
	const req = request(registry.url)
		[method](path)
		.set("Authorization", admin)
		.set("Accept", MEDIA(resource, operation))
		.set("Content-Type", MEDIA(resource, operation));
	return body ? req.send(body) : req;
}

describe("GET /rest/api/events: who sees what", () => {
	test("a service provider sees its participant's add, update and transfer, with who, role, provider, when, before and after", async () => {
		const seen = await content(sp1, { participant: story.moved.identifier });
		expect(seen.map((event) => event.operation).sort()).toEqual([
			"addParticipant",
			"transferParticipant",
			"updateParticipant",
		]);
		const add = seen.find((event) => event.operation === "addParticipant")!;
		expect(add).toMatchObject({
			resource: "participant",
			resourceId: story.moved.identifier,
			actor: { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: SP1 },
			serviceProviders: [SP1],
			before: null,
			after: { serviceProvider: SP1, processIds: [BILLING] },
		});
		expect(add.at >= story.startedAt).toBe(true);
		const update = seen.find((event) => event.operation === "updateParticipant")!;
		expect(update).toMatchObject({
			before: { processIds: [BILLING] },
			after: { processIds: [BILLING, CATALOGUE] },
		});
	});

	test("after a transfer both the old and the new provider see the transfer, naming both", async () => {
		for (const auth of [sp1, sp2]) {
			const transfer = (await content(auth, { operation: "transferParticipant" })).find(
				(event) => event.resourceId === story.moved.identifier,
			);
			expect(transfer).toMatchObject({
				before: { serviceProvider: SP1 },
				after: { serviceProvider: SP2 },
				actor: { username: "sp1" },
			});
			expect([...transfer!.serviceProviders].sort()).toEqual([SP1, SP2].sort());
		}
		// The new provider does not see the history from before it held the participant.
		expect((await content(sp2, { participant: story.moved.identifier })).map((event) => event.operation)).toEqual([
			"transferParticipant",
		]);
	});

	test("a service provider sees nothing of another provider's participants, nor catalog or account changes", async () => {
		expect(await content(sp1, { participant: story.kept.identifier })).toEqual([]);
		for (const [auth, provider] of [
			[sp1, SP1],
			[sp2, SP2],
		]) {
			const seen = await content(auth);
			expect(seen.length).toBeGreaterThan(0);
			for (const event of seen) {
				expect(event.resource).toBe("participant");
				expect(event.serviceProviders).toContain(provider);
			}
		}
	});

	test("ADMIN sees everything: participants of every provider, catalog, accounts, service providers, access points", async () => {
		const everyResource = [
			"accessPoint",
			"accessPointProvider",
			"account",
			"capability",
			"documentType",
			"participant",
			"process",
			"serviceProvider",
		];
		// The seed import's records come from four services' relays: each may still be on its way.
		const seen = await eventually(async () => {
			const found = await content(admin);
			return everyResource.every((resource) => found.some((event) => event.resource === resource))
				? found
				: undefined;
		}, "a record of every resource");
		expectTheStory(seen);
	});

	test("NETWORK_AUTHORITY sees the trail of participants and the catalog, and no record of accounts, service providers or access points (decisions §4)", async () => {
		const username = `audited-${process.pid}-${Date.now()}`;
		const added = await adminCall("post", "/rest/api/accounts", "accounts", "add", {
			username,
			password: "first-password-123",
			role: "NETWORK_AUTHORITY",
		});
		expect(added.status).toBe(201);
		const account = added.body.identifier as string;
		const accountPath = `/rest/api/accounts/${account}`;
		expect(
			(
				await adminCall("put", `${accountPath}/password`, "accounts", "password", {
					password: "second-password-456",
				})
			).status,
		).toBe(200);
		expect((await adminCall("post", `${accountPath}/disable`, "accounts", "disable")).status).toBe(200);
		const provider = await adminCall("post", "/rest/api/service-providers", "service-providers", "add", {
			title: `Audited provider ${username}`,
		});
		expect(provider.status).toBe(201);
		const adminOnly = ["addAccount", "resetPassword", "disableAccount", "addServiceProvider"];
		// ADMIN sees each of them once they arrived: then NETWORK_AUTHORITY's answer is a refusal, not a delay.
		for (const operation of adminOnly) {
			await eventually(
				async () =>
					(await content(admin, { operation })).some(
						(event) => event.resourceId === account || event.resourceId === provider.body.identifier,
					),
				`ADMIN's ${operation} record`,
			);
			const response = await events(authority, { operation, size: 1000 });
			expect(response.status).toBe(200);
			expect(response.body).toMatchObject({ content: [], totalElements: 0 });
		}
		const seen = await content(authority);
		const resources = new Set(seen.map((event) => event.resource));
		for (const hidden of ["account", "serviceProvider", "accessPoint", "accessPointProvider"])
			expect(resources).not.toContain(hidden);
		// The seed's account and provider records (operation "seed") are ADMIN's too, and the filters do not reopen them.
		expect((await content(authority, { operation: "seed" })).every((event) => event.resource !== "account")).toBe(
			true,
		);
		expect(await content(authority, { from: story.startedAt.slice(0, 10), operation: "addAccount" })).toEqual([]);
		expect(JSON.stringify(seen)).not.toContain(username);
		expectTheStory(seen);
	});

	test("the change feed gives NETWORK_AUTHORITY participants' and the catalog's changes only, the same as ADMIN's", async () => {
		const feed = async (auth: string) => {
			const response = await request(registry.url)
				.get("/rest/api/changes")
				.query({ limit: 1000 })
				.set("Authorization", auth)
				.set("Accept", "application/vnd.registry.changes.find.v1+json");
			expect(response.status).toBe(200);
			return response.body.changes as { resource: string; identifier: string; record: unknown }[];
		};
		const authorityChanges = await feed(authority);
		expect(authorityChanges.length).toBeGreaterThan(0);
		for (const change of authorityChanges)
			expect(["participant", "process", "documentType", "capability"]).toContain(change.resource);
		expect(JSON.stringify(authorityChanges)).not.toMatch(/passwordHash|scrypt|demo-password/);
		const adminChanges = await feed(admin);
		expect(authorityChanges.map((change) => change.identifier)).toEqual(
			adminChanges.slice(0, authorityChanges.length).map((change) => change.identifier),
		);
	});

	test("no event carries a password or a password hash", async () => {
		const accounts = (await content(admin)).filter((event) => event.resource === "account");
		expect(accounts.length).toBeGreaterThan(0);
		const text = JSON.stringify(accounts);
		expect(text).not.toMatch(/passwordHash|scrypt|demo-password/);
	});
});

describe("GET /rest/api/events: filters and paging", () => {
	test("participant: a qualified identifier is the caller's participant of that organization for a service provider, every one for ADMIN", async () => {
		const qualified = story.moved.qualifiedIdentifier.replace("iso6523-actorid-upis", "ISO6523-ACTORID-UPIS");
		expect((await content(sp1, { participant: qualified })).map((event) => event.resourceId)).toEqual([
			story.moved.identifier,
			story.moved.identifier,
			story.moved.identifier,
		]);
		expect((await content(sp2, { participant: qualified })).map((event) => event.operation)).toEqual([
			"transferParticipant",
		]);
		expect(await content(admin, { participant: qualified })).toHaveLength(3);
		expect(await content(sp1, { participant: story.kept.qualifiedIdentifier })).toEqual([]);
	});

	test("operation is an exact match", async () => {
		const adds = await content(admin, { operation: "addParticipant" });
		expect(adds.length).toBeGreaterThanOrEqual(2);
		expect(adds.every((event) => event.operation === "addParticipant")).toBe(true);
		expect(await content(admin, { operation: "addparticipant" })).toEqual([]);
	});

	test("from and to are inclusive, as dates (whole UTC days) or date-times", async () => {
		const all = await content(admin);
		const newest = all[0];
		const oldest = all[all.length - 1];
		expect(all.every((event, index) => index === 0 || all[index - 1].at >= event.at)).toBe(true);
		expect(await content(admin, { from: oldest.at.slice(0, 10), to: newest.at.slice(0, 10) })).toHaveLength(
			all.length,
		);
		const exactly = await content(admin, { from: newest.at, to: newest.at });
		expect(exactly.map((event) => event.identifier)).toContain(newest.identifier);
		expect(exactly.every((event) => event.at === newest.at)).toBe(true);
		const since = await content(admin, { from: story.startedAt });
		expect(since.every((event) => event.at >= story.startedAt)).toBe(true);
		expect(since.map((event) => event.resourceId)).toContain(story.kept.identifier);
		expect(await content(admin, { to: "2000-12-31" })).toEqual([]);
	});

	test("a bad from, to or participant is 400 MethodArgumentTypeMismatchException in the error shape", async () => {
		const queries: Record<string, string>[] = [
			{ from: "yesterday" },
			{ to: "2026-02-30" },
			{ participant: "not-a-participant" },
		];
		for (const query of queries) {
			const response = await events(admin, query);
			expect(response.status).toBe(400);
			expect(response.body).toMatchObject({
				status: 400,
				exception: "MethodArgumentTypeMismatchException",
				path: EVENTS,
			});
		}
	});

	test("the page envelope: page, size, sort by operation; the media type", async () => {
		const total = (await content(admin)).length;
		const response = await events(admin, { page: 1, size: 3, sort: "operation,asc" });
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${EVENTS_MEDIA};charset=UTF-8`);
		expect(response.body).toMatchObject({
			number: 1,
			size: 3,
			numberOfElements: 3,
			totalElements: total,
			totalPages: Math.ceil(total / 3),
			first: false,
			sort: { sorted: true, unsorted: false },
			pageable: { pageNumber: 1, pageSize: 3, offset: 3, paged: true },
		});
		const operations = (response.body.content as AuditEvent[]).map((event) => event.operation);
		expect([...operations].sort()).toEqual(operations);
		expect((await events(admin, { sort: "resource" })).status).toBe(400);
	});
});

describe("GET /rest/api/events: roles", () => {
	test("anonymous is 401, an ACCESS_POINT_PROVIDER 403", async () => {
		const anonymous = await events(null);
		expect(anonymous.status).toBe(401);
		expect(anonymous.headers["www-authenticate"]).toBe('Basic realm="registry"');
		const denied = await events(app);
		expect(denied.status).toBe(403);
		expect(denied.body).toMatchObject({ exception: "AccessDeniedException" });
	});
});
