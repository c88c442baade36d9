/**
 * The array form of the participant list (GET /rest/api/participants, Accept
 * application/vnd.registry.participants.stream.v1+json) is streamed from the store page by page,
 * and its bytes are exactly the JSON array of the paged form's items over every page: the same
 * order, the same fields, `processes=true` and `query` honoured, a provider's scope kept. More
 * participants than one store page and one stream chunk (500 each). Runs against the one-process
 * registry and again against the cluster, where the action's stream travels over NATS.
 */
import type { Readable } from "node:stream";
import request from "supertest";
import { callerMeta } from "../../src/platform/caller-signature";
import { addParticipants } from "../support/bulk";
import {
	demoAccount,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";

const PARTICIPANTS = "/rest/api/participants";
const STREAM = "application/vnd.registry.participants.stream.v1+json";
const FIND = "application/vnd.registry.participants.find.v1+json";
const SP1_BULK = 1100;
const SP2_BULK = 150;

let registry: RunningRegistry;
let admin: string;
let sp1: string;
let sp2: string;

beforeAll(async () => {
	registry = await startRegistry();
	admin = demoAuth("ADMIN");
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	const SP1 = demoAccount("SERVICE_PROVIDER", 0).serviceProvider as string;
	const SP2 = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;
	expect(await addParticipants(registry.broker, SP1_BULK, { serviceProvider: SP1, base: 61000000 })).toBe(SP1_BULK);
	expect(await addParticipants(registry.broker, SP2_BULK, { serviceProvider: SP2, base: 62000000 })).toBe(SP2_BULK);
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

/** The body as text, as it came over the wire. */
function text(
	response: NodeJS.ReadableStream & { setEncoding(encoding: string): void },
	callback: (error: Error | null, body: string) => void,
): void {
	let body = "";
	response.setEncoding("utf8");
	response.on("data", (chunk: string) => (body += chunk));
	response.on("end", () => callback(null, body));
}

async function streamed(auth: string, query: Record<string, string> = {}) {
	const response = await request(registry.url)
		.get(PARTICIPANTS)
		.query(query)
		.set({ Authorization: auth, Accept: STREAM })
		.buffer(true)
		.parse(text as never);
	expect(response.status).toBe(200);
	expect(response.headers["content-type"]).toBe(`${STREAM};charset=UTF-8`);
	return response;
}

/** The paged form's items over every page, in its order, as the JSON text of one array. */
async function pagedAsArrayText(auth: string, query: Record<string, string> = {}): Promise<string> {
	const items: unknown[] = [];
	for (let page = 0; ; page++) {
		const response = await request(registry.url)
			.get(PARTICIPANTS)
			.query({ ...query, page: String(page), size: "250" })
			.set({ Authorization: auth, Accept: FIND });
		expect(response.status).toBe(200);
		items.push(...response.body.content);
		if (response.body.last) break;
	}
	return JSON.stringify(items);
}

test("ADMIN's array is the paged form's content over all pages, byte for byte, and is sent as it is read", async () => {
	const response = await streamed(admin);
	const expected = await pagedAsArrayText(admin);
	expect(response.body).toBe(expected);
	expect(JSON.parse(response.body as string).length).toBeGreaterThan(SP1_BULK + SP2_BULK);
	// Streamed: no length known before the last page was read.
	expect(response.headers["content-length"]).toBeUndefined();
	expect(response.headers["transfer-encoding"]).toBe("chunked");
});

test("processes=true adds each participant's processes, exactly as the paged form does", async () => {
	const response = await streamed(admin, { processes: "true" });
	expect(response.body).toBe(await pagedAsArrayText(admin, { processes: "true" }));
	expect(JSON.parse(response.body as string)[0]).toHaveProperty("processes");
});

test("a query is honoured: name words, an organization number, and one matching nothing is []", async () => {
	// 610000002: the first bulk organization number (8-digit prefix 61000000, its MOD11 digit).
	for (const [query, least] of [
		["bulk participant", SP1_BULK + SP2_BULK],
		["Bulk 10", 2],
		["0192:610000002", 1],
		["nothing-matches-this", 0],
	] as const) {
		const response = await streamed(admin, { query });
		expect(response.body).toBe(await pagedAsArrayText(admin, { query }));
		expect(JSON.parse(response.body as string).length).toBeGreaterThanOrEqual(least);
	}
	expect((await streamed(admin, { query: "nothing-matches-this" })).body).toBe("[]");
});

test("a service provider's array holds its own participants only, as its paged form does", async () => {
	for (const [auth, count] of [
		[sp1, SP1_BULK],
		[sp2, SP2_BULK],
	] as const) {
		const response = await streamed(auth, { processes: "true" });
		expect(response.body).toBe(await pagedAsArrayText(auth, { processes: "true" }));
		const own = JSON.parse(response.body as string) as Array<{ provider: { identifier: string } }>;
		expect(own.length).toBeGreaterThanOrEqual(count);
		expect(new Set(own.map((participant) => participant.provider.identifier)).size).toBe(1);
	}
});

test("participants.stream answers a stream whose first chunk comes before the rest is read", async () => {
	const stream = await registry.broker.call<Readable, object>(
		"participants.stream",
		{},
		{ meta: callerMeta(registry.broker, { username: "admin", role: "ADMIN" }) },
	);
	expect(typeof stream.pipe).toBe("function");
	const chunks: string[] = [];
	for await (const chunk of stream) chunks.push((chunk as Buffer).toString("utf8"));
	const body = chunks.join("");
	expect(chunks[0].startsWith('[{"')).toBe(true);
	expect(JSON.parse(body).length).toBeGreaterThan(SP1_BULK + SP2_BULK);
	expect(chunks.length).toBeGreaterThan(1);
	expect(chunks[0].length).toBeLessThan(body.length / 2);
});
