/**
 * Races (issue 8, decisions §6): concurrent updates, transfers and deletes of the same
 * participants, many seeded rounds of mixed requests over HTTP, each checked against a
 * serial model: some order of all the round's requests, applied one at a time, must give
 * every status that was answered, every updated participant that was answered, and the
 * final state (owner, processes, contact, version; or gone). So no update is lost, none is
 * applied twice or half, and a deleted participant stays deleted. After each round the
 * process claims and the organization lookup agree with the participants (the lookup answer
 * is the union of the organization's participants' processes).
 *
 * Each round races on one organization with two participants: P (sp1) and, in most rounds,
 * Q (sp2), so that transfers and process claims collide too. A second node with its own
 * participants service works on the same SQLite files (the two brokers share an in-process
 * transporter), as production runs two participants replicas on one MongoDB: each request
 * goes either through the gateway (first node) or straight to the second node's service, so
 * the in-process queue of one node does not serialize them, and the store's versions and
 * unique keys must.
 *
 * test/integration/participants.race.spec.ts covers concurrent adds (one winner) and one
 * round of this; test/integration/lookup.consistency.spec.ts random sequences with a few
 * requests at a time.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import { importSeed } from "../../src/exchange/seed";
import type { Caller } from "../../src/contract/model";
import { callerMeta } from "../../src/platform/caller-signature";
import { rawRequest, type RawAnswer } from "../support/raw-http";
import { demoAccount, demoAuth, demoSeed } from "../support/registry";
import { seededRandom as random } from "../support/seeded-random";

const SEED = 4_2026;
const ROUNDS = 100;
const OPS_PER_ROUND = { min: 6, max: 11 };
/** Processes without dependencies, ICD limits or restrictions, so that any set is valid for ICD 0088. */
const POOL = ["01", "02", "03", "04", "05", "07", "08", "09"].map(
	(suffix) => `55555555-0000-4000-8000-0000000000${suffix}`,
);

type Provider = "sp1" | "sp2" | "sp3";
const PROVIDERS: Record<Provider, string> = {
	sp1: demoAccount("SERVICE_PROVIDER", 0).serviceProvider as string,
	sp2: demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string,
	sp3: "11111111-0000-4000-8000-000000000003",
};
const AUTH: Record<"sp1" | "sp2" | "admin", string> = {
	sp1: demoAuth("SERVICE_PROVIDER", 0),
	sp2: demoAuth("SERVICE_PROVIDER", 1),
	admin: demoAuth("ADMIN"),
};

type Name = "P" | "Q";
type Op =
	| { kind: "update"; caller: "sp1" | "sp2"; processes: string[]; contactName: string }
	| { kind: "transfer"; caller: "sp1" | "sp2"; to: Provider }
	| { kind: "delete"; caller: "sp1" | "sp2"; by: "qualifiedIdentifier" }
	| { kind: "delete"; caller: "sp1" | "sp2" | "admin"; by: "uuid"; target: Name };

interface Participant {
	owner: Provider;
	processes: string[];
	contactName: string;
	version: number;
}
type State = Partial<Record<Name, Participant>>;

interface Observed {
	status: number;
	/** An update's answer: what the participant became. */
	answer?: { owner: string; processes: string[]; contactName: string };
	/** A 409 that says "changed concurrently, try again": refused, nothing changed. */
	retryLater?: boolean;
}

// ---------------------------------------------------------------------------------------
// The serial model (decisions §4, §6)
// ---------------------------------------------------------------------------------------

const sorted = (values: string[]) => [...new Set(values)].sort();
const ownedBy = (state: State, provider: string): Name | undefined =>
	(["P", "Q"] as Name[]).find((name) => state[name]?.owner === provider);

/** One request applied alone to a state: its status, the state after it, and an update's answer. */
function apply(state: State, op: Op): { status: number; next: State; answer?: Observed["answer"] } {
	const target =
		op.kind === "delete" && op.by === "uuid"
			? state[op.target] && (op.caller === "admin" || state[op.target]?.owner === op.caller)
				? op.target
				: undefined
			: ownedBy(state, op.caller);
	if (!target) return { status: 404, next: state };
	const current = state[target] as Participant;
	const other = state[target === "P" ? "Q" : "P"];
	switch (op.kind) {
		case "update": {
			const processes = sorted(op.processes);
			if (other && processes.some((process) => other.processes.includes(process)))
				return { status: 409, next: state };
			const after = { ...current, processes, contactName: op.contactName, version: current.version + 1 };
			return {
				status: 200,
				next: { ...state, [target]: after },
				answer: { owner: after.owner, processes, contactName: op.contactName },
			};
		}
		case "transfer":
			if (op.to === current.owner) return { status: 400, next: state };
			if (other?.owner === op.to) return { status: 409, next: state };
			return {
				status: 200,
				next: { ...state, [target]: { ...current, owner: op.to, version: current.version + 1 } },
			};
		case "delete": {
			const next = { ...state };
			delete next[target];
			return { status: 204, next };
		}
	}
}

const stateKey = (state: State) => JSON.stringify([state.P ?? null, state.Q ?? null]);

/**
 * An order of all requests, applied one by one from `initial`, that answers exactly what was
 * observed and ends in `final`; null when there is none. Depth-first over subsets of the
 * requests, remembering dead ends (subset, state): a round of 11 requests is instant.
 */
function serialOrder(initial: State, ops: Op[], observed: Observed[], final: State): number[] | null {
	const dead = new Set<string>();
	const search = (done: number, state: State, order: number[]): number[] | null => {
		if (order.length === ops.length) return stateKey(state) === stateKey(final) ? order : null;
		const key = `${done}|${stateKey(state)}`;
		if (dead.has(key)) return null;
		for (let index = 0; index < ops.length; index++) {
			if (done & (1 << index)) continue;
			const seen = observed[index];
			if (seen.retryLater) {
				// Refused without effect: fits anywhere.
				const found = search(done | (1 << index), state, [...order, index]);
				if (found) return found;
				continue;
			}
			const result = apply(state, ops[index]);
			if (result.status !== seen.status) continue;
			if (seen.answer && JSON.stringify(seen.answer) !== JSON.stringify(result.answer)) continue;
			const found = search(done | (1 << index), result.next, [...order, index]);
			if (found) return found;
		}
		dead.add(key);
		return null;
	};
	return search(0, initial, []);
}

// ---------------------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------------------

const CALLERS = {
	sp1: {
		username: demoAccount("SERVICE_PROVIDER", 0).username,
		role: "SERVICE_PROVIDER",
		serviceProvider: PROVIDERS.sp1,
	},
	sp2: {
		username: demoAccount("SERVICE_PROVIDER", 1).username,
		role: "SERVICE_PROVIDER",
		serviceProvider: PROVIDERS.sp2,
	},
	admin: { username: demoAccount("ADMIN").username, role: "ADMIN" },
};

/** The first node (the whole registry, with the gateway) and the second (participants only). */
const registry = { url: "", broker: undefined as unknown as ServiceBroker };
let second: ServiceBroker;
let dataDir: string;
const previousEnv = { ...process.env };
const CONTACT = { email: "race@example.no", phoneNumber: "+47 22 33 44 55" };
let lookupWaits = 0;

beforeAll(async () => {
	dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-races-"));
	Object.assign(process.env, { DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn" });
	const namespace = `races${process.pid}`;
	const node = (nodeID: string) =>
		({ logger: false, transporter: "Fake", namespace, nodeID: `${namespace}-${nodeID}` }) as const;
	registry.broker = createRegistryBroker({ overrides: node("first") });
	second = createRegistryBroker({ services: ["participants"], overrides: node("second") });
	await registry.broker.start();
	await second.start();
	await second.waitForServices(["catalog", "accounts", "lookup", "participants"], 20000);
	await importSeed(registry.broker, demoSeed());
	registry.url = `http://127.0.0.1:${(registry.broker.getLocalService("api") as unknown as { settings: { port: number } }).settings.port}`;
	// Warm the credential cache: each request then reaches the services at once.
	for (const authorization of Object.values(AUTH))
		await rawRequest(registry.url, {
			method: "GET",
			path: "/rest/api/processes",
			headers: { Authorization: authorization },
		});
}, 120000);

afterAll(async () => {
	await second?.stop();
	await registry.broker?.stop();
	for (const key of Object.keys(process.env)) if (!(key in previousEnv)) delete process.env[key];
	Object.assign(process.env, previousEnv);
	if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A request straight to the second node's participants service, answered like the gateway would. */
async function direct(op: Op, qualifiedIdentifier: string, uuids: Record<Name, string>): Promise<RawAnswer> {
	const meta = { meta: callerMeta(second, CALLERS[op.caller] as Caller) };
	try {
		switch (op.kind) {
			case "update": {
				const body = {
					processes: op.processes.map((identifier) => ({ identifier })),
					contact: { name: op.contactName, ...CONTACT },
				};
				const participant = await second.call("participants.update", { qualifiedIdentifier, body }, meta);
				return { status: 200, headers: {}, text: JSON.stringify(participant) };
			}
			case "transfer":
				await second.call(
					"participants.transfer",
					{ qualifiedIdentifier, serviceProviderIdentifier: PROVIDERS[op.to] },
					meta,
				);
				return { status: 200, headers: {}, text: "" };
			case "delete":
				await second.call(
					"participants.delete",
					op.by === "uuid" ? { identifier: uuids[op.target] } : { qualifiedIdentifier },
					meta,
				);
				return { status: 204, headers: {}, text: "" };
		}
	} catch (error) {
		const { code, message } = error as { code?: number; message?: string };
		return { status: typeof code === "number" ? code : 500, headers: {}, text: JSON.stringify({ message }) };
	}
}

function send(method: string, path: string, authorization: string, body?: unknown): Promise<RawAnswer> {
	const headers: Record<string, string> = { Authorization: authorization };
	if (body !== undefined) headers["Content-Type"] = "application/json";
	return rawRequest(registry.url, {
		method,
		path: `/rest/api${path}`,
		headers,
		body: body === undefined ? undefined : JSON.stringify(body),
	});
}

async function add(caller: "sp1" | "sp2", organization: string, processes: string[]): Promise<string> {
	const answer = await send("POST", "/participants", AUTH[caller], {
		icd: "0088",
		organizationIdentifier: organization,
		name: `Race ${caller}`,
		processes: processes.map((identifier) => ({ identifier })),
		contact: { name: "start", ...CONTACT },
	});
	if (answer.status !== 201) throw new Error(`add ${caller} ${organization}: ${answer.status} ${answer.text}`);
	return JSON.parse(answer.text).identifier;
}

function run(
	op: Op,
	qualifiedIdentifier: string,
	uuids: Record<Name, string>,
	throughSecond: boolean,
): Promise<RawAnswer> {
	if (throughSecond) return direct(op, qualifiedIdentifier, uuids);
	const byQualified = `/participants/${encodeURIComponent(qualifiedIdentifier)}`;
	switch (op.kind) {
		case "update":
			return send("PUT", byQualified, AUTH[op.caller], {
				processes: op.processes.map((identifier) => ({ identifier })),
				contact: { name: op.contactName, ...CONTACT },
			});
		case "transfer":
			return send("PUT", `${byQualified}/transfer/${PROVIDERS[op.to]}`, AUTH[op.caller]);
		case "delete":
			return send(
				"DELETE",
				op.by === "uuid" ? `/participants/${uuids[op.target]}` : byQualified,
				AUTH[op.caller],
			);
	}
}

function observe(op: Op, answer: RawAnswer): Observed {
	if (answer.status === 409 && /changed concurrently/.test(answer.text)) return { status: 409, retryLater: true };
	if (op.kind !== "update" || answer.status !== 200) return { status: answer.status };
	const body = JSON.parse(answer.text) as {
		provider: { identifier: string };
		processes: Array<{ identifier: string }>;
		contact: { name: string };
	};
	const owner = (Object.keys(PROVIDERS) as Provider[]).find(
		(key) => PROVIDERS[key] === body.provider.identifier,
	) as string;
	return {
		status: 200,
		answer: {
			owner,
			processes: sorted(body.processes.map((process) => process.identifier)),
			contactName: body.contact.name,
		},
	};
}

/** What the registry holds for the round's participants, read as ADMIN and from the participants service. */
async function finalState(organizationKey: string, uuids: Record<Name, string>): Promise<State> {
	const sets = await registry.broker.call<
		Array<{ participant: string; version: number; processes: string[] }>,
		object
	>("participants.organizationProcessSets", { organizationKey });
	const state: State = {};
	for (const name of ["P", "Q"] as Name[]) {
		if (!uuids[name]) continue;
		const answer = await send("GET", `/participants/${uuids[name]}`, AUTH.admin);
		const set = sets.find((candidate) => candidate.participant === uuids[name]);
		if (answer.status === 404) {
			expect({ participant: name, inProcessSets: Boolean(set) }).toEqual({
				participant: name,
				inProcessSets: false,
			});
			continue;
		}
		expect(answer.status).toBe(200);
		const body = JSON.parse(answer.text) as {
			provider: { identifier: string };
			processes: Array<{ identifier: string }>;
			contact: { name: string };
		};
		const owner = (Object.keys(PROVIDERS) as Provider[]).find(
			(key) => PROVIDERS[key] === body.provider.identifier,
		) as Provider;
		const processes = sorted(body.processes.map((process) => process.identifier));
		expect({ participant: name, processes: set?.processes ? sorted(set.processes) : null }).toEqual({
			participant: name,
			processes,
		});
		state[name] = { owner, processes, contactName: body.contact.name, version: set?.version ?? -1 };
	}
	return state;
}

/** Claims and lookup agree with the participants of the organization. */
async function expectReadModelsAgree(
	organizationKey: string,
	qualifiedIdentifier: string,
	state: State,
	uuids: Record<Name, string>,
): Promise<void> {
	const participants = registry.broker.getLocalService("participants") as unknown as {
		collections: {
			processClaims: { find(query: object): Promise<Array<{ processId: string; participant: string }>> };
		};
	};
	const claims = await participants.collections.processClaims.find({ filter: { organizationKey } });
	const expectedClaims = (["P", "Q"] as Name[])
		.flatMap((name) => (state[name]?.processes ?? []).map((processId) => `${processId}→${uuids[name]}`))
		.sort();
	expect(claims.map((claim) => `${claim.processId}→${claim.participant}`).sort()).toEqual(expectedClaims);
	const union = sorted([...(state.P?.processes ?? []), ...(state.Q?.processes ?? [])]);
	const expected = state.P || state.Q ? union : "404";
	// Changes made on the second node reach the lookup over the channel, shortly after they answered.
	const deadline = Date.now() + 5000;
	let answered: unknown;
	for (;;) {
		const lookup = await send(
			"GET",
			`/organizations/${encodeURIComponent(qualifiedIdentifier)}/processes`,
			AUTH.admin,
		);
		answered =
			lookup.status === 404
				? "404"
				: sorted(
						(JSON.parse(lookup.text) as Array<{ identifier: string }>).map((process) => process.identifier),
					);
		if (JSON.stringify(answered) === JSON.stringify(expected) || Date.now() > deadline) break;
		lookupWaits++;
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
	expect({ organizationKey, lookup: answered }).toEqual({ organizationKey, lookup: expected });
}

function randomOps(next: () => number, round: number, withQ: boolean): Op[] {
	const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
	const count = OPS_PER_ROUND.min + Math.floor(next() * (OPS_PER_ROUND.max - OPS_PER_ROUND.min + 1));
	const ops: Op[] = [];
	for (let index = 0; index < count; index++) {
		const roll = next();
		if (roll < 0.45) {
			const processes = POOL.filter(() => next() < 0.3).slice(0, 3);
			ops.push({
				kind: "update",
				caller: next() < 0.75 ? "sp1" : "sp2",
				processes,
				contactName: `round ${round} op ${index}`,
			});
		} else if (roll < 0.8) {
			const caller = next() < 0.6 ? "sp1" : "sp2";
			ops.push({
				kind: "transfer",
				caller,
				to: pick<Provider>(caller === "sp1" ? ["sp2", "sp2", "sp3", "sp1"] : ["sp1", "sp1", "sp3", "sp2"]),
			});
		} else if (roll < 0.88) {
			ops.push({ kind: "delete", caller: next() < 0.7 ? "sp1" : "sp2", by: "qualifiedIdentifier" });
		} else {
			ops.push({
				kind: "delete",
				caller: pick<"sp1" | "sp2" | "admin">(["admin", "sp1", "sp2"]),
				by: "uuid",
				target: withQ && next() < 0.3 ? "Q" : "P",
			});
		}
	}
	return ops;
}

test(`${ROUNDS} rounds of concurrent updates, transfers and deletes: each round is one serial order, and claims and lookup agree`, async () => {
	const next = random(SEED);
	const statuses = new Map<string, number>();
	const deleted: string[] = [];
	const kept: Array<{ uuid: string; text: string }> = [];
	let reordered = 0;
	let secondNodeChanges = 0;
	const started = Date.now();
	for (let round = 1; round <= ROUNDS; round++) {
		const organization = `race-${process.pid}-${round}`;
		const organizationKey = `0088:${organization}`;
		const qualifiedIdentifier = `iso6523-actorid-upis::${organizationKey}`;
		const withQ = next() < 0.7;
		const pProcesses = [POOL[0]];
		const qProcesses = [POOL[1]];
		const uuids = {
			P: await add("sp1", organization, pProcesses),
			Q: withQ ? await add("sp2", organization, qProcesses) : "",
		} as Record<Name, string>;
		const initial: State = { P: { owner: "sp1", processes: pProcesses, contactName: "start", version: 1 } };
		if (withQ) initial.Q = { owner: "sp2", processes: qProcesses, contactName: "start", version: 1 };

		const ops = randomOps(next, round, withQ);
		const viaSecond = ops.map(() => next() < 0.5);
		const answers = await Promise.all(
			ops.map((op, index) => run(op, qualifiedIdentifier, uuids, viaSecond[index])),
		);
		const observed = ops.map((op, index) => observe(op, answers[index]));
		for (const [index, seen] of observed.entries()) {
			const key = `${ops[index].kind} ${seen.status}${seen.retryLater ? " (changed concurrently)" : ""}`;
			if (viaSecond[index] && seen.status < 300) secondNodeChanges++;
			statuses.set(key, (statuses.get(key) ?? 0) + 1);
			expect({ op: ops[index], status: seen.status }).toEqual({ op: ops[index], status: expect.any(Number) });
			expect([200, 204, 400, 404, 409]).toContain(seen.status);
		}
		const final = await finalState(organizationKey, uuids);
		const order = serialOrder(initial, ops, observed, final);
		if (!order) {
			throw new Error(
				`round ${round}: no serial order explains it\n  initial ${JSON.stringify(initial)}\n  final ${JSON.stringify(final)}\n  ${ops.map((op, index) => `${JSON.stringify(op)} → ${JSON.stringify(observed[index])}`).join("\n  ")}`,
			);
		}
		if (order.some((value, index) => value !== index)) reordered++;
		await expectReadModelsAgree(organizationKey, qualifiedIdentifier, final, uuids);
		for (const name of ["P", "Q"] as Name[]) {
			if (!uuids[name]) continue;
			if (final[name])
				kept.push({
					uuid: uuids[name],
					text: (await send("GET", `/participants/${uuids[name]}`, AUTH.admin)).text,
				});
			else deleted.push(uuids[name]);
		}
	}
	// Nothing came back or changed later: deleted participants stay deleted, kept ones as they were.
	for (const uuid of deleted)
		expect({ uuid, status: (await send("GET", `/participants/${uuid}`, AUTH.admin)).status }).toEqual({
			uuid,
			status: 404,
		});
	for (const { uuid, text } of kept) expect((await send("GET", `/participants/${uuid}`, AUTH.admin)).text).toBe(text);
	// eslint-disable-next-line no-console
	console.log(
		`races (seed ${SEED}): ${ROUNDS} rounds in ${Date.now() - started} ms, ${[...statuses.values()].reduce((a, b) => a + b, 0)} requests (${secondNodeChanges} changes made on the second node); ${reordered} rounds needed an order other than the sending order; ${lookupWaits} lookup polls for changes from the second node; ${deleted.length} deleted, ${kept.length} kept\n  ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
	);
	expect(statuses.get("update 200") ?? 0).toBeGreaterThan(ROUNDS);
	expect(statuses.get("transfer 200") ?? 0).toBeGreaterThan(ROUNDS / 4);
	expect(statuses.get("delete 204") ?? 0).toBeGreaterThan(ROUNDS / 4);
	expect(secondNodeChanges).toBeGreaterThan(ROUNDS / 2);
}, 240000);
