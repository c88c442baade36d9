/**
 * A request's ID (decisions §3; services/api/request-state.ts `clientRequestId`): every answer
 * moleculer-web took carries it as X-Request-ID, once, and the calls the gateway makes for the
 * request carry it as their `requestID`: the client's X-Correlation-ID or X-Request-ID when it is
 * at most 200 characters of [A-Za-z0-9._:-], else one the registry makes. The real gateway on an
 * in-memory broker, the lookup service a stand-in that remembers what it was called with.
 */
import http from "node:http";
import { ServiceBroker, type Context } from "moleculer";
import { loadServiceSchema } from "../../services";

const LOOKUP_ACCEPT = "application/vnd.registry.organizations.processes.v1+json";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let broker: ServiceBroker;
let baseUrl: string;
/** The requestID of each call the stand-in lookup answered. */
const calledWith: string[] = [];
/** Each request asks for another organization. */
let organization = 100000000;

beforeAll(async () => {
	const previousPort = process.env.PORT;
	process.env.PORT = "0";
	broker = new ServiceBroker({ logger: false, transporter: null });
	broker.createService({
		name: "lookup",
		actions: {
			organizationProcesses(ctx: Context) {
				calledWith.push(ctx.requestID as string);
				return [];
			},
		},
	});
	const gateway = broker.createService(loadServiceSchema("api"));
	await broker.start();
	if (previousPort === undefined) delete process.env.PORT;
	else process.env.PORT = previousPort;
	baseUrl = `http://127.0.0.1:${(gateway.settings as { port: number }).port}`;
});
afterAll(() => broker.stop());

interface Answer {
	status: number;
	/** Every X-Request-ID line of the head, as sent. */
	requestIds: string[];
}

function get(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Answer> {
	return new Promise((resolve, reject) => {
		const req = http.request(`${baseUrl}${path}`, { method, headers, agent: false }, (res) => {
			res.resume();
			res.once("end", () => {
				const requestIds: string[] = [];
				for (let index = 0; index < res.rawHeaders.length; index += 2)
					if (res.rawHeaders[index].toLowerCase() === "x-request-id")
						requestIds.push(res.rawHeaders[index + 1]);
				resolve({ status: res.statusCode ?? 0, requestIds });
			});
		});
		req.once("error", reject);
		req.end();
	});
}

function lookupPath(): string {
	organization += 7;
	return `/rest/api/organizations/iso6523-actorid-upis::0192:${organization}/processes`;
}

test("an answer carries one X-Request-ID, the requestID of the call the gateway made for it", async () => {
	const answer = await get(lookupPath(), { accept: LOOKUP_ACCEPT });
	expect(answer.status).toBe(200);
	expect(answer.requestIds).toHaveLength(1);
	expect(answer.requestIds[0]).toMatch(UUID);
	expect(calledWith.at(-1)).toBe(answer.requestIds[0]);
});

test("each request has its own ID", async () => {
	const first = await get(lookupPath(), { accept: LOOKUP_ACCEPT });
	const second = await get(lookupPath(), { accept: LOOKUP_ACCEPT });
	expect(first.requestIds[0]).not.toBe(second.requestIds[0]);
});

test("the client's X-Request-ID is the request's ID, and X-Correlation-ID before it", async () => {
	const own = await get(lookupPath(), { accept: LOOKUP_ACCEPT, "x-request-id": "trace-4711" });
	expect(own.requestIds).toEqual(["trace-4711"]);
	expect(calledWith.at(-1)).toBe("trace-4711");
	const both = await get(lookupPath(), {
		accept: LOOKUP_ACCEPT,
		"x-request-id": "trace-4711",
		"x-correlation-id": "correlation-42",
	});
	expect(both.requestIds).toEqual(["correlation-42"]);
	expect(calledWith.at(-1)).toBe("correlation-42");
});

test.each([
	["too long", "a".repeat(201)],
	["15 KB", "b".repeat(15_000)],
	["a space", "trace 4711"],
	["a character outside the set", "trace<4711>"],
	["non-ASCII bytes", "trace-\u00e9\u00e9"],
])("a client request ID with %s is not taken: the registry makes its own", async (_name, value) => {
	const answer = await get(lookupPath(), { accept: LOOKUP_ACCEPT, "x-request-id": value });
	expect(answer.status).toBe(200);
	expect(answer.requestIds).toHaveLength(1);
	expect(answer.requestIds[0]).toMatch(UUID);
	expect(calledWith.at(-1)).toBe(answer.requestIds[0]);
});

test("a client request ID of 200 characters of the allowed set is taken", async () => {
	const value = `A-z0.9_:${"x".repeat(192)}`;
	expect((await get(lookupPath(), { accept: LOOKUP_ACCEPT, "x-request-id": value })).requestIds).toEqual([value]);
});

test("a cached answer, a refusal and a request no route took carry one X-Request-ID too", async () => {
	const path = lookupPath();
	await get(path, { accept: LOOKUP_ACCEPT });
	const cached = await get(path, { accept: LOOKUP_ACCEPT, "x-request-id": "cached-1" });
	const answers: [string, Answer, number][] = [
		["cached answer", cached, 200],
		["HEAD", await get(path, { accept: LOOKUP_ACCEPT }, "HEAD"), 200],
		["406", await get(lookupPath(), { accept: "text/html" }), 406],
		["401", await get("/rest/api/participants", { authorization: "Basic !!" }), 401],
		["404, no route", await get("/rest/api/nothing-here"), 404],
		["405", await get(lookupPath(), {}, "DELETE"), 405],
	];
	for (const [name, answer, status] of answers) {
		expect({ name, status: answer.status }).toEqual({ name, status });
		expect({ name, ids: answer.requestIds.length }).toEqual({ name, ids: 1 });
	}
	expect(cached.requestIds).toEqual(["cached-1"]);
});
