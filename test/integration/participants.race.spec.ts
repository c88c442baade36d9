/**
 * Uniqueness under concurrency (decisions §6, architecture "Storage"): one participant per
 * provider and organization, one provider per organization and process, enforced by the
 * store, not by a read before the write. Many requests race here; exactly one may win.
 */
import request from "supertest";
import { demoAccount, demoAuth, startRegistry, TOPOLOGY, type RunningRegistry } from "../support/registry";

const ADD = "application/vnd.registry.participants.add.v1+json";
const BILLING = "55555555-0000-4000-8000-000000000001";
const PROCESSES = [
	"55555555-0000-4000-8000-000000000002",
	"55555555-0000-4000-8000-000000000003",
	"55555555-0000-4000-8000-000000000004",
	"55555555-0000-4000-8000-000000000005",
	"55555555-0000-4000-8000-000000000007",
];
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };

let registry: RunningRegistry;
let sp1: string;
let sp2: string;

beforeAll(async () => {
	registry = await startRegistry();
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	// Verified credentials are cached by the gateway: warm it, so the 50 requests reach the
	// participants service together instead of queuing behind 50 password hashes.
	for (const auth of [sp1, sp2, demoAuth("ADMIN")])
		await request(registry.url).get("/rest/api/participants").set("Authorization", auth);
});
afterAll(() => registry.stop());

interface ProcessSet {
	participant: string;
	organizationKey: string;
	processes: string[];
	version: number;
}

function setsOf(organizationKey: string): Promise<ProcessSet[]> {
	return registry.broker.call<ProcessSet[], { organizationKey: string }>("participants.organizationProcessSets", {
		organizationKey,
	});
}

function add(auth: string, organizationIdentifier: string, processes: string[]) {
	return request(registry.url)
		.post("/rest/api/participants")
		.set("Authorization", auth)
		.set("Accept", ADD)
		.set("Content-Type", ADD)
		.send({
			icd: "0088",
			organizationIdentifier,
			processes: processes.map((identifier) => ({ identifier })),
			contact,
		});
}

const participantPath = (qualifiedIdentifier: string, suffix = "") =>
	`/rest/api/participants/${encodeURIComponent(qualifiedIdentifier)}${suffix}`;

/** The lookup answer for an organization once it equals `expected` (at once in one process; within a deadline in the cluster). */
async function lookupIds(qualifiedIdentifier: string, expected: string[] | 404): Promise<string[] | 404> {
	const read = async (): Promise<string[] | 404> => {
		const response = await request(registry.url)
			.get(`/rest/api/organizations/${encodeURIComponent(qualifiedIdentifier)}/processes`)
			.set("Authorization", demoAuth("ADMIN"))
			.set("Accept", "application/vnd.registry.organizations.processes.v1+json");
		return response.status === 404
			? 404
			: (response.body as { identifier: string }[]).map((process) => process.identifier).sort();
	};
	let value = await read();
	const deadline = Date.now() + (TOPOLOGY === "one-process" ? 0 : 10000);
	while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 50));
		value = await read();
	}
	return value;
}

test("50 concurrent adds of the same organization and process by two providers: exactly one holder, 409 for the rest", async () => {
	const organization = `race-${process.pid}-one-holder`;
	const countBefore = await registry.broker.call<number, { identifier: string }>("participants.countUsingProcess", {
		identifier: BILLING,
	});
	const responses = await Promise.all(
		Array.from({ length: 50 }, (_, index) => add(index % 2 === 0 ? sp1 : sp2, organization, [BILLING])),
	);
	const statuses = responses.map((response) => response.status);
	expect(statuses.filter((status) => status === 201)).toHaveLength(1);
	expect(statuses.filter((status) => status === 409)).toHaveLength(49);
	for (const response of responses.filter((candidate) => candidate.status === 409))
		expect(response.body.exception).toBe("ConflictException");

	const sets = await setsOf(`0088:${organization}`);
	expect(sets).toHaveLength(1);
	expect(sets[0].processes).toEqual([BILLING]);
	expect(await registry.broker.call("participants.countUsingProcess", { identifier: BILLING })).toBe(countBefore + 1);
	expect(await lookupIds(`iso6523-actorid-upis::0088:${organization}`, [BILLING])).toEqual([BILLING]);
});

test("50 concurrent adds of one organization by one provider with different processes: one participant, 409 for the rest", async () => {
	const organization = `race-${process.pid}-one-participant`;
	const responses = await Promise.all(
		Array.from({ length: 50 }, (_, index) => add(sp1, organization, [PROCESSES[index % PROCESSES.length]])),
	);
	const statuses = responses.map((response) => response.status);
	expect(statuses.filter((status) => status === 201)).toHaveLength(1);
	expect(statuses.filter((status) => status === 409)).toHaveLength(49);
	expect(await setsOf(`0088:${organization}`)).toHaveLength(1);
});

test("concurrent updates, a transfer and a delete of one participant leave a state one serial order gives", async () => {
	const organization = `race-${process.pid}-serial`;
	const created = await add(sp1, organization, [PROCESSES[0]]);
	expect(created.status).toBe(201);
	const qualifiedIdentifier = created.body.qualifiedIdentifier as string;
	const updateBodies = PROCESSES.map((identifier) => ({ processes: [{ identifier }], contact }));
	const sp2Identifier = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;

	const updates = updateBodies.map((body) =>
		request(registry.url)
			.put(participantPath(qualifiedIdentifier))
			.set("Authorization", sp1)
			.set("Accept", "application/vnd.registry.participants.update.v1+json")
			.set("Content-Type", "application/json")
			.send(body),
	);
	const transfer = request(registry.url)
		.put(participantPath(qualifiedIdentifier, `/transfer/${sp2Identifier}`))
		.set("Authorization", sp1);
	const remove = request(registry.url).delete(participantPath(qualifiedIdentifier)).set("Authorization", sp1);
	const [transferred, removed, ...updated] = await Promise.all([transfer, remove, ...updates]);

	// Every request either happened (2xx) or found the participant already gone from sp1 (404).
	for (const response of [transferred, removed, ...updated]) expect([200, 204, 404]).toContain(response.status);
	// sp1's delete can only miss if the transfer happened first; the transfer can only miss if the delete did.
	expect(removed.status === 204 || transferred.status === 200).toBe(true);
	expect(removed.status === 204 && transferred.status === 200).toBe(false);

	const sets = await setsOf(`0088:${organization}`);
	if (removed.status === 204) {
		expect(sets).toEqual([]);
		expect(await lookupIds(qualifiedIdentifier, 404)).toBe(404);
		return;
	}
	// Transferred and kept: its version counts exactly the changes that answered success.
	const succeeded = updated.filter((response) => response.status === 200);
	expect(sets).toHaveLength(1);
	expect(sets[0].version).toBe(1 + succeeded.length + 1);
	const expected = succeeded.length > 0 ? null : [PROCESSES[0]];
	if (expected) expect(sets[0].processes).toEqual(expected);
	else
		expect(
			succeeded.map((response) =>
				JSON.stringify(response.body.processes.map((process: { identifier: string }) => process.identifier)),
			),
		).toContain(JSON.stringify(sets[0].processes));
	expect(await lookupIds(qualifiedIdentifier, [...sets[0].processes].sort())).toEqual([...sets[0].processes].sort());
});
