/**
 * Lookup nodes (decisions §12): a process started with SERVICES=lookup answers the organization
 * lookup over HTTP on its PORT with the same statuses, headers and bodies as the gateway, through
 * the same steps (authentication, negotiation, rate limit, metrics); other API paths answer 404
 * there; health and metrics are there too. Operators scale lookups by scaling these nodes.
 */
import { rawRequest, type RawAnswer } from "../support/raw-http";
import { ONE_PROCESS_PER_SERVICE, type Cluster } from "../support/cluster";
import { demoAuth, REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { metricOf, startSeededCluster } from "./support";

const NORDLYS = "iso6523-actorid-upis::0192:991825827";
const LOOKUP_PLURAL = "application/vnd.registry.organizations.processes.v1+json";
const lookupPath = (qualifiedIdentifier: string) =>
	`/rest/api/organizations/${encodeURIComponent(qualifiedIdentifier)}/processes`;
/** Requests a minute per caller on the lookup node: more than this file's other tests send it, few enough to reach. */
const RATE_LIMIT = 60;

let cluster: Cluster;

beforeAll(async () => {
	cluster = await startSeededCluster({
		topology: ONE_PROCESS_PER_SERVICE,
		processEnv: { lookup: { RATE_LIMIT: String(RATE_LIMIT) } },
	});
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => cluster?.stop());

const urlOf = (name: string) => `http://127.0.0.1:${cluster.processes.get(name)?.port}`;

function ask(name: string, method: string, path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
	return rawRequest(urlOf(name), { method, path, headers });
}

/** An answer without what differs between any two answers by nature (date, request id, an error's timestamp). */
function comparable(answer: RawAnswer) {
	const headers = { ...answer.headers };
	delete headers.date;
	delete headers["x-request-id"];
	delete headers["keep-alive"];
	return {
		status: answer.status,
		headers,
		body: answer.status >= 400 && answer.text ? { ...JSON.parse(answer.text), timestamp: undefined } : answer.text,
	};
}

test.each([
	["an anonymous lookup", "GET", lookupPath(NORDLYS), {}],
	[
		"an authenticated lookup (hidden processes too)",
		"GET",
		lookupPath(NORDLYS),
		{ Authorization: demoAuth("ADMIN") },
	],
	[
		"the singular media type",
		"GET",
		lookupPath(NORDLYS),
		{ Accept: "application/vnd.registry.organization.processes.v1+json" },
	],
	["HEAD", "HEAD", lookupPath(NORDLYS), { Accept: LOOKUP_PLURAL }],
	["an organization with no participant (404)", "GET", lookupPath("iso6523-actorid-upis::0192:999999999"), {}],
	["a value that is no qualified identifier (400)", "GET", lookupPath("not-an-identifier"), {}],
	["an Accept it does not answer (406)", "GET", lookupPath(NORDLYS), { Accept: "text/html" }],
	["wrong credentials (401)", "GET", lookupPath(NORDLYS), { Authorization: "Basic bm9ib2R5Ondyb25n" }],
	["a method the path does not have (405)", "DELETE", lookupPath(NORDLYS), {}],
	["OPTIONS", "OPTIONS", lookupPath(NORDLYS), {}],
])("%s: the lookup node answers as the gateway does", async (_name, method, path, headers) => {
	const fromGateway = await ask("gateway", method, path, headers);
	const fromNode = await ask("lookup", method, path, headers);
	expect(comparable(fromNode)).toEqual(comparable(fromGateway));
	// OPTIONS is answered before the API (services/api/operational.ts): no request ID on either.
	if (method !== "OPTIONS") expect(fromNode.headers["x-request-id"]).toBeDefined();
});

test("every other API path answers 404 on a lookup node, and the console and docs are not there", async () => {
	for (const [method, path] of [
		["GET", "/rest/api/processes"],
		["POST", "/rest/api/participants"],
		["GET", "/rest/api/participants/iso6523-actorid-upis::0192:991825827"],
		["GET", "/rest/api/openapi.json"],
		["GET", "/console"],
		["GET", "/docs"],
	]) {
		const answer = await ask("lookup", method, path, { Authorization: demoAuth("SERVICE_PROVIDER") });
		expect({ method, path, status: answer.status }).toEqual({ method, path, status: 404 });
		if (path.startsWith("/rest/api/"))
			expect(JSON.parse(answer.text)).toMatchObject({ status: 404, exception: "NotFoundException" });
	}
	expect((await ask("gateway", "GET", "/rest/api/processes")).status).toBe(200);
});

test("a lookup node answers health and metrics, and counts its lookups as requests of the lookup action", async () => {
	expect((await ask("lookup", "GET", "/health/live")).status).toBe(200);
	const ready = await ask("lookup", "GET", "/health/ready");
	expect(ready.status).toBe(200);
	expect(JSON.parse(ready.text).checks).toMatchObject({ "service:lookup": "UP", "service:api": "UP" });
	const counted = () =>
		metricOf(cluster, "lookup", "moleculer_request_total", {
			action: "lookup.organizationProcesses",
			caller: "api",
		});
	const before = await counted();
	for (let i = 0; i < 5; i++) expect((await ask("lookup", "GET", lookupPath(NORDLYS))).status).toBe(200);
	expect(await counted()).toBe(before + 5);
	expect(await metricOf(cluster, "lookup", "moleculer_request_total", { action: "api.rest" })).toBeGreaterThan(0);
});

test("the per-caller rate limit applies on a lookup node as on the gateway", async () => {
	let answer: RawAnswer | undefined;
	for (let i = 0; i <= 3 * RATE_LIMIT; i++) {
		answer = await ask("lookup", "GET", lookupPath(NORDLYS));
		if (answer.status === 429) break;
	}
	expect(answer?.status).toBe(429);
	expect(JSON.parse(answer?.text ?? "{}")).toMatchObject({ status: 429, exception: "TooManyRequestsException" });
	expect(Number(answer?.headers["retry-after"])).toBeGreaterThan(0);
});
