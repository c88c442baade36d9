/**
 * The gateway's short path for a service provider's read of its participant by qualified
 * identifier (services/api/participant-read-fast-path.ts, services/participants/read-answers.ts): when
 * the credential is cached, the login throttle lets it through and the participants service
 * of the gateway's process holds the answer, the gateway answers without routing or a broker
 * call. Its answers must be the full path's, byte for byte and header for header, and never
 * older than the last write, catalog change or lockout. A query string always takes the full
 * path, so the same URL with and without "?" compares the two. In the cluster participants
 * run in another process: every request takes the full path there, and all of this still holds.
 */
import request from "supertest";
import { rawRequest, type RawAnswer } from "../support/raw-http";
import { basic, demoAccount, demoAuth, startRegistry, TOPOLOGY, type RunningRegistry } from "../support/registry";
import { organizationNumberSource } from "../support/bulk";

const MEDIA = (operation: string) => `application/vnd.registry.participants.${operation}.v1+json`;
const NORDLYS = "iso6523-actorid-upis::0192:991825827"; // sp1's
const HAVBLIKK = "iso6523-actorid-upis::0192:986252932"; // sp2's
const BILLING = "55555555-0000-4000-8000-000000000001";
const SELF_BILLING = "55555555-0000-4000-8000-000000000002";
const readPath = (qualifiedIdentifier: string) => `/rest/api/participants/${encodeURIComponent(qualifiedIdentifier)}`;
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };

const USER_MAX_FAILURES = 3;
const LOCKOUT_SECONDS = 1;

let registry: RunningRegistry;
let sp1: string;
let sp2: string;

beforeAll(async () => {
	registry = await startRegistry({ env: { AUTH_USER_MAX_FAILURES: String(USER_MAX_FAILURES), AUTH_LOCKOUT_SECONDS: String(LOCKOUT_SECONDS), AUTH_MAX_LOCKOUT_SECONDS: String(LOCKOUT_SECONDS) } });
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
}, 180000);
afterAll(() => registry.stop());

function get(path: string, headers: Record<string, string>): Promise<RawAnswer> {
	return rawRequest(registry.url, { method: "GET", path, headers });
}

/** The same read twice on the short path (the first fills it) and once on the full path. */
async function shortAndFull(qualifiedIdentifier: string, headers: Record<string, string>): Promise<{ short: RawAnswer; full: RawAnswer }> {
	await get(readPath(qualifiedIdentifier), headers);
	const short = await get(readPath(qualifiedIdentifier), headers);
	const full = await get(`${readPath(qualifiedIdentifier)}?`, headers);
	return { short, full };
}

/** An answer without what differs between any two answers by nature (date, request id, an error's timestamp). */
function comparable(answer: RawAnswer) {
	const headers = { ...answer.headers };
	delete headers.date;
	delete headers["x-request-id"];
	return { status: answer.status, headers, body: answer.status >= 400 ? { ...JSON.parse(answer.text), timestamp: undefined } : answer.text };
}

/** moleculer's count of participants.get calls in this process (the full path calls it, the short one does not). */
async function readCalls(): Promise<number> {
	const text = (await request(registry.url).get("/metrics")).text;
	const lines = text.split("\n").filter((entry) => entry.startsWith("moleculer_request_total{") && entry.includes('action="participants.get"'));
	return lines.reduce((total, line) => total + Number(line.split(" ").pop()), 0);
}

/** A fresh valid Norwegian organization number (MOD11) per call. */
const organizationNumber = organizationNumberSource(31_000_000);

function send(method: "post" | "put" | "delete", path: string, auth: string, operation: string, body?: object) {
	const call = request(registry.url)[method](path).set("Authorization", auth).set("Accept", MEDIA(operation));
	return body ? call.set("Content-Type", MEDIA(operation)).send(body) : call;
}

async function addParticipant(auth: string): Promise<string> {
	const body = { icd: "0192", organizationIdentifier: organizationNumber(), name: "Kortvei Testfirma AS", processes: [{ identifier: BILLING }], contact };
	const response = await send("post", "/rest/api/participants", auth, "add", body);
	expect(response.status).toBe(201);
	return response.body.qualifiedIdentifier as string;
}

/** A read on the short path (when it can be) that must equal the full path's answer. */
async function readBoth(qualifiedIdentifier: string, auth: string): Promise<RawAnswer> {
	const short = await get(readPath(qualifiedIdentifier), { Authorization: auth });
	const full = await get(`${readPath(qualifiedIdentifier)}?`, { Authorization: auth });
	expect(comparable(short)).toEqual(comparable(full));
	return short;
}

describe("the authenticated read's short path", () => {
	test.each([
		["no Accept", {}],
		["the operation's media type", { Accept: MEDIA("get") }],
		["*/*", { Accept: "*/*" }],
		["a list with q-values", { Accept: `text/html;q=0.9, ${MEDIA("get")};q=0.8` }],
	])("answers as the full path does, with %s", async (_name, headers) => {
		const { short, full } = await shortAndFull(NORDLYS, { Authorization: sp1, ...headers });
		expect(short.status).toBe(200);
		expect(JSON.parse(short.text)).toMatchObject({ qualifiedIdentifier: NORDLYS, provider: { identifier: demoAccount("SERVICE_PROVIDER", 0).serviceProvider } });
		expect(JSON.parse(short.text).processes.length).toBeGreaterThan(0);
		expect(comparable(short)).toEqual(comparable(full));
		expect(Object.keys(short.headers)).toEqual(Object.keys(full.headers));
		expect(short.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
	});

	test("echoes the caller's request id, as the full path does", async () => {
		const { short, full } = await shortAndFull(NORDLYS, { Authorization: sp1, "X-Request-ID": "trace-4712" });
		expect(short.headers["x-request-id"]).toBe("trace-4712");
		expect(full.headers["x-request-id"]).toBe("trace-4712");
	});

	(TOPOLOGY === "one-process" ? test : test.skip)("answers from memory without a call to participants.get (one process)", async () => {
		const path = readPath(NORDLYS);
		await get(path, { Authorization: sp1 });
		const before = await readCalls();
		for (let i = 0; i < 10; i++) expect((await get(path, { Authorization: sp1 })).status).toBe(200);
		expect(await readCalls()).toBe(before);
		expect((await get(`${path}?`, { Authorization: sp1 })).status).toBe(200);
		expect(await readCalls()).toBe(before + 1);
	});

	test("never answers another provider's participant, another role, bad credentials or another form", async () => {
		await shortAndFull(NORDLYS, { Authorization: sp1 }); // sp1's answer is held
		const foreign = await get(readPath(NORDLYS), { Authorization: sp2 });
		expect(foreign.status).toBe(404);
		expect(JSON.parse(foreign.text)).toMatchObject({ status: 404, exception: "NotFoundException" });
		expect((await get(readPath(NORDLYS), { Authorization: demoAuth("ADMIN") })).status).toBe(403);
		expect((await get(readPath(NORDLYS), { Authorization: demoAuth("ACCESS_POINT_PROVIDER") })).status).toBe(403);
		expect((await get(readPath(NORDLYS), {})).status).toBe(401);
		const account = demoAccount("SERVICE_PROVIDER", 0);
		expect((await get(readPath(NORDLYS), { Authorization: basic(account.username, `${account.password}x`) })).status).toBe(401);
		expect((await get(readPath(NORDLYS), { Authorization: sp1, Accept: MEDIA("find") })).status).toBe(406);
		expect((await get(readPath("iso6523-actorid-upis::0192:99"), { Authorization: sp1 })).status).toBe(404);
		expect((await get(readPath("not-an-identifier"), { Authorization: sp1 })).status).toBe(400);
		// The same participant by UUID is the full path's (its rules differ by role).
		const byUuid = await get(`/rest/api/participants/${JSON.parse((await get(readPath(NORDLYS), { Authorization: sp1 })).text).identifier}`, { Authorization: sp1 });
		expect(byUuid.status).toBe(200);
	});

	test("a write shows in the very next read: update, transfer, delete", async () => {
		const qualifiedIdentifier = await addParticipant(sp1);
		await readBoth(qualifiedIdentifier, sp1);
		const held = await readBoth(qualifiedIdentifier, sp1);
		expect(JSON.parse(held.text).contact).toEqual(contact);

		const newContact = { ...contact, name: "Ola Nordmann" };
		expect((await send("put", readPath(qualifiedIdentifier), sp1, "update", { processes: [{ identifier: SELF_BILLING }], contact: newContact })).status).toBe(200);
		const updated = JSON.parse((await readBoth(qualifiedIdentifier, sp1)).text);
		expect(updated.contact).toEqual(newContact);
		expect(updated.processes.map((process: { identifier: string }) => process.identifier)).toEqual([SELF_BILLING]);

		const sp2Provider = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;
		expect((await send("put", `${readPath(qualifiedIdentifier)}/transfer/${sp2Provider}`, sp1, "transfer")).status).toBe(200);
		expect((await readBoth(qualifiedIdentifier, sp1)).status).toBe(404);
		const transferred = await readBoth(qualifiedIdentifier, sp2);
		expect(JSON.parse(transferred.text).provider.identifier).toBe(sp2Provider);

		expect((await send("delete", readPath(qualifiedIdentifier), sp2, "delete")).status).toBe(204);
		expect((await readBoth(qualifiedIdentifier, sp2)).status).toBe(404);
	});

	test("a renamed process shows in the very next read", async () => {
		const qualifiedIdentifier = await addParticipant(sp1);
		await readBoth(qualifiedIdentifier, sp1);
		const admin = demoAuth("ADMIN");
		const process = (await request(registry.url).get(`/rest/api/processes/${BILLING}`).set("Accept", "application/vnd.registry.processes.get.v1+json").set("Authorization", admin)).body;
		const renamed = { domain: process.domain, title: `${process.title} (renamed)` };
		const update = await request(registry.url)
			.put(`/rest/api/processes/${BILLING}`)
			.set("Authorization", admin)
			.set("Accept", "application/vnd.registry.processes.update.v1+json")
			.set("Content-Type", "application/vnd.registry.processes.update.v1+json")
			.send(renamed);
		expect(update.status).toBe(200);
		const read = JSON.parse((await readBoth(qualifiedIdentifier, sp1)).text);
		expect(read.processes.find((entry: { identifier: string }) => entry.identifier === BILLING).title).toBe(renamed.title);
	});

	test("a cached credential is still refused while its username is locked out (429)", async () => {
		const account = demoAccount("SERVICE_PROVIDER", 1);
		await shortAndFull(HAVBLIKK, { Authorization: sp2 }); // credential cached, answer held
		expect((await get(readPath(HAVBLIKK), { Authorization: sp2 })).status).toBe(200);
		for (let attempt = 0; attempt < USER_MAX_FAILURES; attempt++) await get(readPath(HAVBLIKK), { Authorization: basic(account.username, "wrong password") });
		const locked = await get(readPath(HAVBLIKK), { Authorization: sp2 });
		expect(locked.status).toBe(429);
		expect(JSON.parse(locked.text)).toMatchObject({ status: 429, exception: "TooManyRequestsException" });
		expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
		// After the lockout the same credential reads again.
		const deadline = Date.now() + 10000;
		let after = locked;
		while (after.status === 429 && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 200));
			after = await get(readPath(HAVBLIKK), { Authorization: sp2 });
		}
		expect(after.status).toBe(200);
	});
});
