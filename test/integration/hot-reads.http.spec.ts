/**
 * The hot reads: the organization lookup (answered from the lookup's cache, services/lookup/
 * answer-cache.ts) and a service provider's read of its participant by qualified identifier. A
 * repeated request gets the first one's answer, byte for byte and header for header; each is
 * counted as a request of its action; each is refused as any request is; and a write, a catalog
 * change or a lockout shows within 1 s (decisions §11), in one process and in the cluster (where
 * participants and the lookup run in processes of their own).
 */
import request from "supertest";
import { organizationNumberSource } from "../support/bulk";
import { rawRequest, type RawAnswer } from "../support/raw-http";
import {
	basic,
	demoAccount,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";

const LOOKUP_PLURAL = "application/vnd.registry.organizations.processes.v1+json";
const LOOKUP_SINGULAR = "application/vnd.registry.organization.processes.v1+json";
const MEDIA = (operation: string) => `application/vnd.registry.participants.${operation}.v1+json`;
const NORDLYS = "iso6523-actorid-upis::0192:991825827"; // sp1's
const HAVBLIKK = "iso6523-actorid-upis::0192:986252932"; // sp2's
const BILLING = "55555555-0000-4000-8000-000000000001";
const SELF_BILLING = "55555555-0000-4000-8000-000000000002";
const lookupPath = (qualifiedIdentifier: string) =>
	`/rest/api/organizations/${encodeURIComponent(qualifiedIdentifier)}/processes`;
const readPath = (qualifiedIdentifier: string) => `/rest/api/participants/${encodeURIComponent(qualifiedIdentifier)}`;
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };

const USER_MAX_FAILURES = 3;
const LOCKOUT_SECONDS = 1;

let registry: RunningRegistry;
let sp1: string;
let sp2: string;

beforeAll(async () => {
	registry = await startRegistry({
		env: {
			AUTH_USER_MAX_FAILURES: String(USER_MAX_FAILURES),
			AUTH_LOCKOUT_SECONDS: String(LOCKOUT_SECONDS),
			AUTH_MAX_LOCKOUT_SECONDS: String(LOCKOUT_SECONDS),
		},
	});
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

function get(path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
	return rawRequest(registry.url, { method: "GET", path, headers });
}

/** An answer without what differs between any two answers by nature (date, request id, an error's timestamp). */
function comparable(answer: RawAnswer) {
	const headers = { ...answer.headers };
	delete headers.date;
	delete headers["x-request-id"];
	return {
		status: answer.status,
		headers,
		body: answer.status >= 400 ? { ...JSON.parse(answer.text), timestamp: undefined } : answer.text,
	};
}

/** Sum of a counter's samples in the gateway's /metrics, for one action. */
async function counted(metric: string, action: string): Promise<number> {
	const text = (await request(registry.url).get("/metrics")).text;
	const lines = text
		.split("\n")
		.filter((entry) => entry.startsWith(`${metric}{`) && entry.includes(`action="${action}"`));
	return lines.reduce((total, line) => total + Number(line.split(" ").pop()), 0);
}

/** A request and then the same again (the second answered from what the first cached). */
async function twice(path: string, headers: Record<string, string>): Promise<{ first: RawAnswer; again: RawAnswer }> {
	const first = await get(path, headers);
	return { first, again: await get(path, headers) };
}

/** Asks until `accept` takes the answer: a change shows within 1 s (decisions §11). */
async function within1s(path: string, headers: Record<string, string>, accept: (answer: RawAnswer) => boolean) {
	const deadline = Date.now() + 1000;
	for (;;) {
		const answer = await get(path, headers);
		if (accept(answer) || Date.now() > deadline) return answer;
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

/** A fresh valid Norwegian organization number (MOD11) per call. */
const organizationNumber = organizationNumberSource(31_000_000);

function send(method: "post" | "put" | "delete", path: string, auth: string, operation: string, body?: object) {
	const call = request(registry.url)[method](path).set("Authorization", auth).set("Accept", MEDIA(operation));
	return body ? call.set("Content-Type", MEDIA(operation)).send(body) : call;
}

async function addParticipant(auth: string, organizationIdentifier = organizationNumber()): Promise<string> {
	const body = {
		icd: "0192",
		organizationIdentifier,
		name: "Kortvei Testfirma AS",
		processes: [{ identifier: BILLING }],
		contact,
	};
	const response = await send("post", "/rest/api/participants", auth, "add", body);
	expect(response.status).toBe(201);
	return response.body.qualifiedIdentifier as string;
}

/** A read twice: the second (from a cache when there is one) must equal the first. */
async function readTwice(path: string, headers: Record<string, string>): Promise<RawAnswer> {
	const { first, again } = await twice(path, headers);
	expect(comparable(again)).toEqual(comparable(first));
	return again;
}

async function renameBilling(suffix: string): Promise<string> {
	const admin = demoAuth("ADMIN");
	const process = (
		await request(registry.url)
			.get(`/rest/api/processes/${BILLING}`)
			.set("Accept", "application/vnd.registry.processes.get.v1+json")
			.set("Authorization", admin)
	).body;
	const title = `${process.title.replace(/ \(renamed.*\)$/, "")} (renamed ${suffix})`;
	const update = await request(registry.url)
		.put(`/rest/api/processes/${BILLING}`)
		.set("Authorization", admin)
		.set("Accept", "application/vnd.registry.processes.update.v1+json")
		.set("Content-Type", "application/vnd.registry.processes.update.v1+json")
		.send({ domain: process.domain, title });
	expect(update.status).toBe(200);
	return title;
}

describe("the organization lookup", () => {
	test.each([
		["no Accept", {}],
		["the plural media type", { Accept: LOOKUP_PLURAL }],
		["the singular media type", { Accept: LOOKUP_SINGULAR }],
		["*/*", { Accept: "*/*" }],
		["a list with q-values", { Accept: `text/html;q=0.9, ${LOOKUP_SINGULAR};q=0.8` }],
		["credentials (every process, hidden ones too)", { Authorization: demoAuth("ADMIN") }],
	])("answers a repeated request as the first, with %s", async (_name, headers) => {
		const { first, again } = await twice(lookupPath(NORDLYS), headers);
		expect(again.status).toBe(200);
		expect(JSON.parse(again.text).length).toBeGreaterThan(0);
		expect(comparable(again)).toEqual(comparable(first));
		expect(Object.keys(again.headers)).toEqual(Object.keys(first.headers));
		expect(again.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
	});

	test("echoes the caller's request id on a repeated request too", async () => {
		const { first, again } = await twice(lookupPath(NORDLYS), { "X-Request-ID": "trace-4711" });
		expect(first.headers["x-request-id"]).toBe("trace-4711");
		expect(again.headers["x-request-id"]).toBe("trace-4711");
	});

	test("answers 'no participant' again the same: the 404 of an unknown organization, with the spelling asked for", async () => {
		const unknown = "iso6523-actorid-upis::0192:999999999";
		const { first, again } = await twice(lookupPath(unknown), {});
		expect(again.status).toBe(404);
		expect(comparable(again)).toEqual(comparable(first));
		const otherSpelling = await get(lookupPath(unknown.toUpperCase()));
		expect(JSON.parse(otherSpelling.text).message).toContain(unknown.toUpperCase());
	});

	test("counts every request as a request of the lookup action", async () => {
		const path = lookupPath(NORDLYS);
		await get(path);
		const requests = await counted("moleculer_request_total", "lookup.organizationProcesses");
		for (let i = 0; i < 10; i++) expect((await get(path)).status).toBe(200);
		expect(await counted("moleculer_request_total", "lookup.organizationProcesses")).toBe(requests + 10);
	});

	test("refuses a repeated request as the first: 400, 406, 401", async () => {
		await get(lookupPath(NORDLYS));
		expect((await get(lookupPath("not-an-identifier"))).status).toBe(400);
		expect((await get(lookupPath(NORDLYS), { Accept: MEDIA("get") })).status).toBe(406);
		expect((await get(lookupPath(NORDLYS), { Authorization: "Basic bm9ib2R5Ondyb25n" })).status).toBe(401);
	});

	test("a registration, a catalog rename and a removal show within 1 s", async () => {
		const organizationIdentifier = organizationNumber();
		const path = lookupPath(`iso6523-actorid-upis::0192:${organizationIdentifier}`);
		expect((await readTwice(path, {})).status).toBe(404);
		await addParticipant(sp1, organizationIdentifier);
		const registered = await within1s(path, {}, (answer) => answer.status === 200);
		expect(JSON.parse(registered.text).map((process: { identifier: string }) => process.identifier)).toEqual([
			BILLING,
		]);
		const title = await renameBilling("lookup");
		const renamed = await within1s(path, {}, (answer) => JSON.parse(answer.text)[0]?.title === title);
		expect(JSON.parse(renamed.text)[0].title).toBe(title);
		expect(
			(await send("delete", readPath(`iso6523-actorid-upis::0192:${organizationIdentifier}`), sp1, "delete"))
				.status,
		).toBe(204);
		expect((await within1s(path, {}, (answer) => answer.status === 404)).status).toBe(404);
	});
});

describe("a service provider's read of its participant", () => {
	test.each([
		["no Accept", {}],
		["the operation's media type", { Accept: MEDIA("get") }],
		["*/*", { Accept: "*/*" }],
		["a list with q-values", { Accept: `text/html;q=0.9, ${MEDIA("get")};q=0.8` }],
	])("answers a repeated request as the first, with %s", async (_name, headers) => {
		const { first, again } = await twice(readPath(NORDLYS), { Authorization: sp1, ...headers });
		expect(again.status).toBe(200);
		expect(JSON.parse(again.text)).toMatchObject({
			qualifiedIdentifier: NORDLYS,
			provider: { identifier: demoAccount("SERVICE_PROVIDER", 0).serviceProvider },
		});
		expect(JSON.parse(again.text).processes.length).toBeGreaterThan(0);
		expect(comparable(again)).toEqual(comparable(first));
		expect(Object.keys(again.headers)).toEqual(Object.keys(first.headers));
	});

	test("counts every request as a request of participants.get", async () => {
		const path = readPath(NORDLYS);
		await get(path, { Authorization: sp1 });
		const requests = await counted("moleculer_request_total", "participants.get");
		for (let i = 0; i < 10; i++) expect((await get(path, { Authorization: sp1 })).status).toBe(200);
		expect(await counted("moleculer_request_total", "participants.get")).toBe(requests + 10);
	});

	test("of two participants, asked in turn, each carry their own ETag and Content-Length", async () => {
		const other = await addParticipant(sp1);
		const answers = new Map<string, RawAnswer>();
		for (const qualifiedIdentifier of [NORDLYS, other])
			answers.set(qualifiedIdentifier, await readTwice(readPath(qualifiedIdentifier), { Authorization: sp1 }));
		expect(answers.get(NORDLYS)?.headers.etag).not.toBe(answers.get(other)?.headers.etag);
		for (const qualifiedIdentifier of [NORDLYS, other, NORDLYS, other]) {
			const again = await get(readPath(qualifiedIdentifier), { Authorization: sp1 });
			expect(comparable(again)).toEqual(comparable(answers.get(qualifiedIdentifier) as RawAnswer));
		}
	});

	test("never answers another provider's participant, another role, bad credentials or another form", async () => {
		await twice(readPath(NORDLYS), { Authorization: sp1 });
		const foreign = await get(readPath(NORDLYS), { Authorization: sp2 });
		expect(foreign.status).toBe(404);
		expect(JSON.parse(foreign.text)).toMatchObject({ status: 404, exception: "NotFoundException" });
		expect((await get(readPath(NORDLYS), { Authorization: demoAuth("ADMIN") })).status).toBe(403);
		expect((await get(readPath(NORDLYS), { Authorization: demoAuth("ACCESS_POINT_PROVIDER") })).status).toBe(403);
		expect((await get(readPath(NORDLYS), {})).status).toBe(401);
		const account = demoAccount("SERVICE_PROVIDER", 0);
		expect(
			(await get(readPath(NORDLYS), { Authorization: basic(account.username, `${account.password}x`) })).status,
		).toBe(401);
		expect((await get(readPath(NORDLYS), { Authorization: sp1, Accept: MEDIA("find") })).status).toBe(406);
		expect((await get(readPath("iso6523-actorid-upis::0192:99"), { Authorization: sp1 })).status).toBe(404);
		expect((await get(readPath("not-an-identifier"), { Authorization: sp1 })).status).toBe(400);
		const byUuid = await get(
			`/rest/api/participants/${JSON.parse((await get(readPath(NORDLYS), { Authorization: sp1 })).text).identifier}`,
			{ Authorization: sp1 },
		);
		expect(byUuid.status).toBe(200);
	});

	test("a write shows in the very next read: update, transfer, delete", async () => {
		const qualifiedIdentifier = await addParticipant(sp1);
		const again = await readTwice(readPath(qualifiedIdentifier), { Authorization: sp1 });
		expect(JSON.parse(again.text).contact).toEqual(contact);

		const newContact = { ...contact, name: "Ola Nordmann" };
		expect(
			(
				await send("put", readPath(qualifiedIdentifier), sp1, "update", {
					processes: [{ identifier: SELF_BILLING }],
					contact: newContact,
				})
			).status,
		).toBe(200);
		const updated = JSON.parse((await readTwice(readPath(qualifiedIdentifier), { Authorization: sp1 })).text);
		expect(updated.contact).toEqual(newContact);
		expect(updated.processes.map((process: { identifier: string }) => process.identifier)).toEqual([SELF_BILLING]);

		const sp2Provider = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;
		expect(
			(await send("put", `${readPath(qualifiedIdentifier)}/transfer/${sp2Provider}`, sp1, "transfer")).status,
		).toBe(200);
		expect((await readTwice(readPath(qualifiedIdentifier), { Authorization: sp1 })).status).toBe(404);
		const transferred = await readTwice(readPath(qualifiedIdentifier), { Authorization: sp2 });
		expect(JSON.parse(transferred.text).provider.identifier).toBe(sp2Provider);

		expect((await send("delete", readPath(qualifiedIdentifier), sp2, "delete")).status).toBe(204);
		expect((await readTwice(readPath(qualifiedIdentifier), { Authorization: sp2 })).status).toBe(404);
	});

	test("a renamed process shows within 1 s", async () => {
		const qualifiedIdentifier = await addParticipant(sp1);
		await readTwice(readPath(qualifiedIdentifier), { Authorization: sp1 });
		const title = await renameBilling("read");
		const titleOf = (answer: RawAnswer) =>
			JSON.parse(answer.text).processes.find((entry: { identifier: string }) => entry.identifier === BILLING)
				?.title;
		const read = await within1s(
			readPath(qualifiedIdentifier),
			{ Authorization: sp1 },
			(answer) => titleOf(answer) === title,
		);
		expect(titleOf(read)).toBe(title);
	});

	test("a cached credential is still refused while its username is locked out (429)", async () => {
		const account = demoAccount("SERVICE_PROVIDER", 1);
		await readTwice(readPath(HAVBLIKK), { Authorization: sp2 }); // credential cached
		for (let attempt = 0; attempt < USER_MAX_FAILURES; attempt++)
			await get(readPath(HAVBLIKK), { Authorization: basic(account.username, "wrong password") });
		const locked = await get(readPath(HAVBLIKK), { Authorization: sp2 });
		expect(locked.status).toBe(429);
		expect(JSON.parse(locked.text)).toMatchObject({ status: 429, exception: "TooManyRequestsException" });
		expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
		const deadline = Date.now() + 10000;
		let after = locked;
		while (after.status === 429 && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 200));
			after = await get(readPath(HAVBLIKK), { Authorization: sp2 });
		}
		expect(after.status).toBe(200);
	});
});
