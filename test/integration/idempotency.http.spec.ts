/**
 * Idempotent adds (docs/decisions.md "Safe writes"): a POST with an Idempotency-Key runs once
 * per caller and key; retries with the same key and body get the first answer again, the same
 * key with another body 422. Runs against the one-process registry and again against the cluster.
 */
import request from "supertest";
import { organizationNumberSource } from "../support/bulk";
import { demoAuth, REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";

const ADD = "application/vnd.registry.participants.add.v1+json";
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const organizationNumber = organizationNumberSource(32_000_000);

let registry: RunningRegistry;
let sp1: string;
let sp2: string;
let admin: string;

beforeAll(async () => {
	registry = await startRegistry();
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	admin = demoAuth("ADMIN");
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

const body = (organization: string, processes = [BILLING]) => ({
	icd: "0192",
	organizationIdentifier: organization,
	name: "Idempotent AS",
	processes: processes.map((identifier) => ({ identifier })),
	contact,
});

function add(auth: string, key: string | null, payload: unknown) {
	const req = request(registry.url)
		.post("/rest/api/participants")
		.set({ Authorization: auth, Accept: ADD, "Content-Type": ADD });
	return (key === null ? req : req.set("Idempotency-Key", key)).send(payload as object);
}

async function participantsOf(auth: string, organization: string): Promise<Array<{ identifier: string }>> {
	const found = await request(registry.url)
		.get("/rest/api/participants")
		.query({ query: organization })
		.set({ Authorization: auth, Accept: "application/vnd.registry.participants.stream.v1+json" });
	expect(found.status).toBe(200);
	return found.body;
}

describe("Idempotency-Key", () => {
	test("50 concurrent retries of one add with one key: one participant, 50 equal answers", async () => {
		const organization = organizationNumber();
		const key = `retry-${organization}`;
		const answers = await Promise.all(Array.from({ length: 50 }, () => add(sp1, key, body(organization))));
		expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(201));
		const [first] = answers;
		for (const answer of answers) {
			expect(answer.text).toBe(first.text);
			expect(answer.headers.location).toBe(first.headers.location);
			expect(answer.headers["content-type"]).toBe(first.headers["content-type"]);
		}
		expect(answers.filter((answer) => answer.headers["idempotent-replayed"] === "true")).toHaveLength(49);
		const stored = await participantsOf(sp1, organization);
		expect(stored.map((participant) => participant.identifier)).toEqual([first.body.identifier]);
		// Every add is in the audit trail once.
		const events = await request(registry.url)
			.get("/rest/api/events")
			.query({ participant: first.body.identifier, operation: "addParticipant" })
			.set({ Authorization: admin, Accept: "application/vnd.registry.events.find.v1+json" });
		expect(events.body.totalElements).toBe(1);
	});

	test("a later retry with the same key and body replays the first answer", async () => {
		const organization = organizationNumber();
		const first = await add(sp1, `later-${organization}`, body(organization));
		expect(first.status).toBe(201);
		expect(first.headers["idempotent-replayed"]).toBeUndefined();
		const again = await add(sp1, `later-${organization}`, body(organization));
		expect(again.status).toBe(201);
		expect(again.text).toBe(first.text);
		expect(again.headers["idempotent-replayed"]).toBe("true");
		expect(again.headers["x-request-id"]).not.toBe(first.headers["x-request-id"]);
		// Without a key, the same add is refused as a duplicate (the store's rule, unchanged).
		expect((await add(sp1, null, body(organization))).status).toBe(409);
	});

	test("the same key with another body is 422 in the error shape and creates nothing", async () => {
		const organization = organizationNumber();
		const other = organizationNumber();
		expect((await add(sp1, `reuse-${organization}`, body(organization))).status).toBe(201);
		const reused = await add(sp1, `reuse-${organization}`, body(other));
		expect(reused.status).toBe(422);
		expect(reused.body).toMatchObject({
			status: 422,
			error: "Unprocessable Entity",
			exception: "UnprocessableEntityException",
			path: "/rest/api/participants",
		});
		expect(await participantsOf(sp1, other)).toEqual([]);
	});

	test("keys are per caller: another provider's request with the same key runs on its own", async () => {
		const organization = organizationNumber();
		const key = `shared-${organization}`;
		const mine = await add(sp1, key, body(organization, [BILLING]));
		const theirs = await add(sp2, key, body(organization, [ORDERING]));
		expect(mine.status).toBe(201);
		expect(theirs.status).toBe(201);
		expect(theirs.headers["idempotent-replayed"]).toBeUndefined();
		expect(theirs.body.identifier).not.toBe(mine.body.identifier);
	});

	test("a refused add is replayed as refused; a malformed key is 400", async () => {
		const organization = organizationNumber();
		const invalid = { ...body(organization), contact: { ...contact, email: "not-an-address" } };
		const first = await add(sp1, `invalid-${organization}`, invalid);
		expect(first.status).toBe(400);
		const again = await add(sp1, `invalid-${organization}`, invalid);
		expect(again.status).toBe(400);
		expect(again.text).toBe(first.text);
		expect(again.headers["idempotent-replayed"]).toBe("true");
		const malformed = await add(sp1, "has spaces in it", body(organizationNumber()));
		expect(malformed.status).toBe(400);
		expect(malformed.body.message).toMatch(/Idempotency-Key/);
	});

	test("catalog adds honour the key too", async () => {
		const number = organizationNumber();
		const form = { domain: "Idempotency", title: `Process ${number}` };
		const post = () =>
			request(registry.url)
				.post("/rest/api/processes")
				.set({
					Authorization: admin,
					Accept: "application/vnd.registry.processes.add.v1+json",
					"Content-Type": "application/vnd.registry.processes.add.v1+json",
					"Idempotency-Key": `process-${number}`,
				})
				.send(form);
		const [a, b] = await Promise.all([post(), post()]);
		expect([a.status, b.status]).toEqual([201, 201]);
		expect(a.body.identifier).toBe(b.body.identifier);
	});
});
