/**
 * The gateway's short path for the hot anonymous lookup (services/api/lookup-fast-path.ts): when the
 * lookup of the gateway's own process holds the answer in memory, the gateway answers it
 * without routing or a broker call. Its answers must be the full path's, byte for byte and
 * header for header. A query string always takes the full path, so the same URL with and
 * without "?" compares the two. In the cluster the lookup runs in another process: both
 * URLs take the full path there, and the comparisons still hold.
 */
import request from "supertest";
import { rawRequest, type RawAnswer } from "../support/raw-http";
import { demoAuth, startRegistry, TOPOLOGY, type RunningRegistry } from "../support/registry";

const PLURAL = "application/vnd.registry.organizations.processes.v1+json";
const SINGULAR = "application/vnd.registry.organization.processes.v1+json";
const DEMO_ORGANIZATION = "iso6523-actorid-upis::0192:991825827";
const lookupPath = (qualifiedIdentifier: string) => `/rest/api/organizations/${encodeURIComponent(qualifiedIdentifier)}/processes`;

let registry: RunningRegistry;

beforeAll(async () => {
	registry = await startRegistry();
});
afterAll(() => registry.stop());

function get(path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
	return rawRequest(registry.url, { method: "GET", path, headers });
}

/** Headers that differ between any two answers by nature. */
function comparable(answer: RawAnswer) {
	const headers = { ...answer.headers };
	delete headers.date;
	delete headers["x-request-id"];
	return { status: answer.status, headers, body: answer.text };
}

/** moleculer's count of lookup action calls in this process (the full path calls it, the short one does not). */
async function lookupCalls(): Promise<number> {
	const text = (await request(registry.url).get("/metrics")).text;
	const line = text.split("\n").find((entry) => entry.startsWith("moleculer_request_total{") && entry.includes('action="lookup.organizationProcesses"'));
	return line ? Number(line.split(" ").pop()) : 0;
}

describe("the anonymous lookup's short path", () => {
	test.each([
		["no Accept", {}],
		["the plural media type", { Accept: PLURAL }],
		["the singular media type", { Accept: SINGULAR }],
		["*/*", { Accept: "*/*" }],
		["a list with q-values", { Accept: `text/html;q=0.9, ${SINGULAR};q=0.8` }],
	])("answers as the full path does, with %s", async (_name, headers) => {
		const path = lookupPath(DEMO_ORGANIZATION);
		await get(path, headers); // the first answer fills the lookup's memory
		const short = await get(path, headers);
		const full = await get(`${path}?`, headers);
		expect(short.status).toBe(200);
		expect(JSON.parse(short.text).length).toBeGreaterThan(0);
		expect(comparable(short)).toEqual(comparable(full));
		expect(Object.keys(short.headers)).toEqual(Object.keys(full.headers));
		expect(short.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
	});

	test("echoes the caller's request id, as the full path does", async () => {
		const path = lookupPath(DEMO_ORGANIZATION);
		const short = await get(path, { "X-Request-ID": "trace-4711" });
		const full = await get(`${path}?`, { "X-Request-ID": "trace-4711" });
		expect(short.headers["x-request-id"]).toBe("trace-4711");
		expect(full.headers["x-request-id"]).toBe("trace-4711");
	});

	test("leaves what it cannot answer to the full path: 404, 400, 406, credentials", async () => {
		const unknown = await get(lookupPath("iso6523-actorid-upis::0192:999999999"));
		expect(unknown.status).toBe(404);
		expect(JSON.parse(unknown.text)).toMatchObject({ status: 404, exception: "NotFoundException" });
		// Asked again (the lookup now remembers "no participants"): still the full path's 404.
		const again = await get(lookupPath("iso6523-actorid-upis::0192:999999999"));
		expect(again.status).toBe(404);
		expect(again.headers["content-type"]).toBe(unknown.headers["content-type"]);
		expect((await get(lookupPath("not-an-identifier"))).status).toBe(400);
		expect((await get(lookupPath(DEMO_ORGANIZATION), { Accept: "application/vnd.registry.participants.get.v1+json" })).status).toBe(406);
		expect((await get(lookupPath(DEMO_ORGANIZATION), { Authorization: "Basic bm9ib2R5Ondyb25n" })).status).toBe(401);
		// An authenticated caller sees every process, hidden ones included: not the anonymous answer.
		const admin = await get(lookupPath(DEMO_ORGANIZATION), { Authorization: demoAuth("ADMIN") });
		expect(admin.status).toBe(200);
	});

	(TOPOLOGY === "one-process" ? test : test.skip)("answers from memory without a call to the lookup action (one process)", async () => {
		const path = lookupPath(DEMO_ORGANIZATION);
		await get(path);
		const before = await lookupCalls();
		for (let i = 0; i < 10; i++) expect((await get(path)).status).toBe(200);
		expect(await lookupCalls()).toBe(before);
		expect((await get(`${path}?`)).status).toBe(200);
		expect(await lookupCalls()).toBe(before + 1);
	});
});
