/**
 * The lookup's read model agrees with the participants (architecture "Lookup"): after a
 * seeded random sequence of adds, updates, transfers and deletes over HTTP (some of them
 * racing), every organization's lookup equals the union of its participants' processes as
 * the participants service reports them.
 */
import request from "supertest";
import { demoAccount, demoAuth, startRegistry, TOPOLOGY, type RunningRegistry } from "../support/registry";
import { seededRandom as random } from "../support/seeded-random";

const SEED = 20261122;
const OPERATIONS = 240;
const CONCURRENCY = 6;
const ORGANIZATIONS = Array.from({ length: 8 }, (_, index) => `consistency-${index}`);
/** Processes without rules that would refuse most random sets (dependencies, ICD limits, restrictions). */
const PROCESSES = ["01", "02", "03", "04", "05", "07", "08", "09", "10"].map(
	(suffix) => `55555555-0000-4000-8000-0000000000${suffix}`,
);
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };

let registry: RunningRegistry;
let providers: { auth: string; identifier: string }[];
let admin: string;

beforeAll(async () => {
	registry = await startRegistry();
	providers = [0, 1].map((index) => ({
		auth: demoAuth("SERVICE_PROVIDER", index),
		identifier: demoAccount("SERVICE_PROVIDER", index).serviceProvider as string,
	}));
	admin = demoAuth("ADMIN");
});
afterAll(() => registry.stop());

const qid = (organization: string) => `iso6523-actorid-upis::0088:${organization}`;
const participantPath = (organization: string, suffix = "") =>
	`/rest/api/participants/${encodeURIComponent(qid(organization))}${suffix}`;

function operation(next: () => number): () => Promise<number> {
	const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)];
	const organization = pick(ORGANIZATIONS);
	const provider = pick(providers);
	const processes = PROCESSES.filter(() => next() < 0.3).map((identifier) => ({ identifier }));
	const kind = next();
	const send = async (req: request.Test) => (await req).status;
	if (kind < 0.35) {
		return () =>
			send(
				request(registry.url)
					.post("/rest/api/participants")
					.set("Authorization", provider.auth)
					.set("Content-Type", "application/json")
					.send({ icd: "0088", organizationIdentifier: organization, processes, contact }),
			);
	}
	if (kind < 0.7) {
		return () =>
			send(
				request(registry.url)
					.put(participantPath(organization))
					.set("Authorization", provider.auth)
					.set("Content-Type", "application/json")
					.send({ processes, contact }),
			);
	}
	if (kind < 0.85) {
		const target = providers.find((candidate) => candidate !== provider) as { identifier: string };
		return () =>
			send(
				request(registry.url)
					.put(participantPath(organization, `/transfer/${target.identifier}`))
					.set("Authorization", provider.auth),
			);
	}
	return () => send(request(registry.url).delete(participantPath(organization)).set("Authorization", provider.auth));
}

interface ProcessSet {
	participant: string;
	processes: string[];
}

async function expectedAnswer(organization: string): Promise<string[] | 404> {
	const sets = await registry.broker.call<ProcessSet[], { organizationKey: string }>(
		"participants.organizationProcessSets",
		{ organizationKey: `0088:${organization}` },
	);
	if (sets.length === 0) return 404;
	return [...new Set(sets.flatMap((set) => set.processes))].sort();
}

async function lookupAnswer(organization: string): Promise<string[] | 404> {
	const response = await request(registry.url)
		.get(`/rest/api/organizations/${encodeURIComponent(qid(organization))}/processes`)
		.set("Authorization", admin)
		.set("Accept", "application/vnd.registry.organizations.processes.v1+json");
	if (response.status === 404) return 404;
	expect(response.status).toBe(200);
	return (response.body as { identifier: string }[]).map((process) => process.identifier).sort();
}

test(`after ${OPERATIONS} random adds, updates, transfers and deletes, every organization's lookup equals its participants' union`, async () => {
	const next = random(SEED);
	const statuses = new Map<number, number>();
	const operations = Array.from({ length: OPERATIONS }, () => operation(next));
	for (let start = 0; start < operations.length; start += CONCURRENCY) {
		const batch = await Promise.all(operations.slice(start, start + CONCURRENCY).map((run) => run()));
		for (const status of batch) statuses.set(status, (statuses.get(status) ?? 0) + 1);
	}
	// The sequence did real work, and nothing failed on the server.
	expect(statuses.get(201) ?? 0).toBeGreaterThan(5);
	expect(statuses.get(200) ?? 0).toBeGreaterThan(5);
	expect(statuses.get(204) ?? 0).toBeGreaterThan(2);
	for (const status of statuses.keys()) expect([200, 201, 204, 400, 404, 409]).toContain(status);

	// One process: applied before each request answered. Cluster: JetStream delivers it shortly after.
	const deadline = Date.now() + (TOPOLOGY === "one-process" ? 0 : 15000);
	for (const organization of ORGANIZATIONS) {
		const expected = await expectedAnswer(organization);
		let actual = await lookupAnswer(organization);
		while (JSON.stringify(actual) !== JSON.stringify(expected) && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			actual = await lookupAnswer(organization);
		}
		expect({ organization, answer: actual }).toEqual({ organization, answer: expected });
	}
});

test("a rebuild from the participants gives the same answers", async () => {
	const before = await Promise.all(ORGANIZATIONS.map(lookupAnswer));
	await registry.broker.call("lookup.rebuild", {});
	const after = await Promise.all(ORGANIZATIONS.map(lookupAnswer));
	expect(after).toEqual(before);
	expect(after).toEqual(await Promise.all(ORGANIZATIONS.map(expectedAnswer)));
});
