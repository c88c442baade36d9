/**
 * Issue 4, "Redis stopped (a separate redis-server that the test starts on its own port)
 * while lookups run: no 5xx; restarted: cache hits again". The cluster's CACHER is a
 * redis-server of this test's own; requests run in a bounded loop while it is killed and
 * started again. src/platform/resilient-cacher.ts makes every cache operation a quick miss while Redis
 * is away, and the gateway's login-failure counters fail open on the same client.
 */
import { organizationKey } from "../../src/contract/identifiers";
import { ONE_PROCESS_PER_SERVICE, type Cluster } from "../support/cluster";
import { basic, demoAuth, REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import {
	FREE_PROCESSES,
	LOOKUP,
	metricOf,
	Participants,
	pollUntil,
	PrivateRedis,
	qid,
	send,
	startSeededCluster,
	type Answer,
} from "./support";
import { freePort } from "../support/local-network";

let redis: PrivateRedis;
let cluster: Cluster;

/** The Redis hash of an organization's lookup answers, of any cache generation (services/lookup/answer-cache.ts). */
function lookupHash(namespace: string, organization: string): RegExp {
	const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	return new RegExp(`^registry-${literal(namespace)}-lookup:(\\d+:)?${literal(organization)}$`);
}
const sp1Auth = demoAuth("SERVICE_PROVIDER", 0);

beforeAll(async () => {
	redis = new PrivateRedis(await freePort());
	await redis.start();
	cluster = await startSeededCluster({ topology: ONE_PROCESS_PER_SERVICE, env: { CACHER: redis.url } });
}, REGISTRY_START_TIMEOUT_MS);
afterAll(async () => {
	await cluster?.stop();
	await redis?.kill();
	redis?.dispose();
});

const lookupUrl = (organization: string) =>
	`${cluster.url}/rest/api/organizations/${encodeURIComponent(qid(organization))}/processes`;
const idsOf = (answer: Answer) => (answer.body as { identifier: string }[]).map((process) => process.identifier).sort();

interface Observation {
	phase: string;
	what: string;
	answer: Answer;
}

/**
 * Requests in a loop until `stop()`: anonymous lookups (the hot path and its Redis-cached
 * answers), catalog reads (Moleculer's cacher middleware), a service provider's participants
 * (credential checks read the Redis counters) and now and then a wrong password (a counter
 * increment). Every answer is recorded with the phase it happened in.
 */
function requestLoop(organizations: string[], phase: () => string) {
	const observations: Observation[] = [];
	let stopped = false;
	let round = 0;
	const one = async (what: string, request: Promise<Answer>) => {
		const at = phase();
		observations.push({ phase: at, what, answer: await request });
	};
	const run = async (worker: number) => {
		// Each worker walks every organization in turn, on a counter of its own: with one shared
		// counter, two workers in step always read the same parity of it and looked up only every
		// other organization (never the changing one, whose cached answer is awaited below).
		for (let turn = worker; !stopped; turn++) {
			round++;
			const organization = organizations[turn % organizations.length];
			await one(`lookup ${organization}`, send(lookupUrl(organization), { headers: { Accept: LOOKUP } }));
			await one(
				"catalog processes",
				send(`${cluster.url}/rest/api/processes?size=5&sort=title`, {
					headers: { Accept: "application/vnd.registry.processes.find.v1+json" },
				}),
			);
			await one(
				"participants of sp1",
				send(`${cluster.url}/rest/api/participants?size=5`, {
					headers: { Accept: "application/vnd.registry.participants.find.v1+json", Authorization: sp1Auth },
				}),
			);
			if (round % 25 === 0)
				await one(
					"wrong password",
					send(`${cluster.url}/rest/api/participants?size=1`, {
						headers: { Authorization: basic(`nobody-${round}`, "wrong") },
					}),
				);
		}
	};
	const workers = [run(0), run(1)];
	return {
		observations,
		async stop() {
			stopped = true;
			await Promise.all(workers);
		},
	};
}

test("Redis killed while lookups run: no 5xx and right answers from the stores; Redis started again: the cache is used again", async () => {
	const sp1 = new Participants(cluster);
	const organizations = Array.from({ length: 6 }, (_, index) => `redis-${cluster.namespace}-${index}`);
	const expected = new Map<string, string[]>();
	for (const [index, organization] of organizations.entries()) {
		const processes = [
			FREE_PROCESSES[index % FREE_PROCESSES.length],
			FREE_PROCESSES[(index + 2) % FREE_PROCESSES.length],
		];
		expect((await sp1.add(organization, processes)).status).toBe(201);
		expected.set(organization, [...processes].sort());
	}
	// One organization changes while Redis is down, and again after it is back: its answers go
	// through these states in order, never back.
	const changing = organizations[0];
	const changed = [FREE_PROCESSES[5], FREE_PROCESSES[6]].sort();
	const changedAgain = [FREE_PROCESSES[7]];
	const states = [JSON.stringify(expected.get(changing)), JSON.stringify(changed), JSON.stringify(changedAgain)];

	let phase = "redis up";
	const loop = requestLoop(organizations, () => phase);
	const timings: Record<string, number> = {};
	try {
		// The cache is in use: answers of this namespace are in Redis.
		await pollUntil("cache keys of this namespace in Redis", 30000, async () =>
			(await redis.cacheKeys(cluster.namespace)).length > 0 ? true : undefined,
		);

		phase = "redis down";
		const killedAt = Date.now();
		await redis.kill();
		// A participant change while Redis is away: answered, and the lookup shows it (from the store).
		const update = await sp1.update(changing, changed);
		expect(update.status).toBe(200);
		timings.updateDuringOutageMs = update.ms;
		await pollUntil("the lookup to show the change made while Redis is away", 30000, async () => {
			const answer = await send(lookupUrl(changing), { headers: { Accept: LOOKUP } });
			return answer.status === 200 && JSON.stringify(idsOf(answer)) === JSON.stringify(changed)
				? true
				: undefined;
		});
		expected.set(changing, changed);
		const changeSeenAt = Date.now();
		// Keep the loop running against the Redis-less cluster for a while.
		await pollUntil(
			"requests while Redis is away",
			30000,
			async () => {
				const down = loop.observations.filter((observation) => observation.phase === "redis down").length;
				return down >= 150 && Date.now() - killedAt >= 5000 ? true : undefined;
			},
			50,
		);

		phase = "redis restarted";
		timings.downForMs = Date.now() - killedAt;
		const restartedAt = Date.now();
		await redis.start();
		const foundBefore = await metricOf(cluster, "catalog", "moleculer_cacher_found_total");
		// Every process of the cluster (and the test's own broker) is connected to Redis again.
		await pollUntil("every process to reconnect to Redis", 30000, async () => {
			const info = String(await redis.command("INFO", "clients"));
			const connected = Number(/connected_clients:(\d+)/.exec(info)?.[1] ?? 0);
			// + the test's broker, + this INFO connection
			return connected >= cluster.processes.size + 2 ? true : undefined;
		});
		timings.reconnectedMs = Date.now() - restartedAt;
		// The lookup answers the others from its memory; a change makes it ask Redis and the store again.
		expect((await sp1.update(changing, changedAgain)).status).toBe(200);
		await pollUntil("lookup answers and catalog reads cached in Redis again", 30000, async () => {
			const keys = await redis.cacheKeys(cluster.namespace);
			return keys.some((key) => lookupHash(cluster.namespace, organizationKey("0088", changing)).test(key)) &&
				keys.some((key) => key.includes("-catalog."))
				? true
				: undefined;
		});
		timings.cacheRefilledMs = Date.now() - restartedAt;
		await pollUntil("catalog reads answered from the cache again", 30000, async () =>
			(await metricOf(cluster, "catalog", "moleculer_cacher_found_total")) > foundBefore ? true : undefined,
		);
		timings.cacheHitsAgainMs = Date.now() - restartedAt;
		await pollUntil(
			"requests after the restart",
			30000,
			async () =>
				loop.observations.filter((observation) => observation.phase === "redis restarted").length >= 150
					? true
					: undefined,
			50,
		);
		await loop.stop();

		const { observations } = loop;
		const byPhase = (name: string) => observations.filter((observation) => observation.phase === name);
		const slowest = (list: Observation[]) => Math.max(0, ...list.map((observation) => observation.answer.ms));
		// eslint-disable-next-line no-console
		console.info(
			`redis-outage: ${observations.length} requests (up ${byPhase("redis up").length}, down ${byPhase("redis down").length}, restarted ${byPhase("redis restarted").length}); ` +
				`slowest while down ${slowest(byPhase("redis down"))} ms, overall ${slowest(observations)} ms; Redis down ${timings.downForMs} ms; ` +
				`update during the outage ${timings.updateDuringOutageMs} ms, seen by the lookup ${changeSeenAt - killedAt} ms after the kill; ` +
				`every process reconnected ${timings.reconnectedMs} ms, cache keys back ${timings.cacheRefilledMs} ms and catalog cache hits ${timings.cacheHitsAgainMs} ms after the restart`,
		);

		// No 5xx, and no request without an answer.
		const failed = observations.filter(
			(observation) => observation.answer.status === 0 || observation.answer.status >= 500,
		);
		expect(
			failed.map(
				(observation) =>
					`${observation.phase} ${observation.what}: ${observation.answer.status} ${observation.answer.error ?? JSON.stringify(observation.answer.body)}`,
			),
		).toEqual([]);
		// Every answer is the expected one (the changing organization: one of its states, never an older one once a newer one was seen).
		const wrong: string[] = [];
		let state = 0;
		for (const { phase: at, what, answer } of observations) {
			if (what === "wrong password") {
				if (answer.status !== 401) wrong.push(`${at} ${what}: ${answer.status}`);
				continue;
			}
			if (answer.status !== 200) {
				wrong.push(`${at} ${what}: ${answer.status}`);
				continue;
			}
			if (!what.startsWith("lookup ")) continue;
			const organization = what.slice("lookup ".length);
			const ids = JSON.stringify(idsOf(answer));
			if (organization === changing) {
				const seen = states.indexOf(ids);
				if (seen < state) wrong.push(`${at} ${what}: ${ids} (state ${seen}) after state ${state} was seen`);
				else state = seen;
				continue;
			}
			if (ids !== JSON.stringify(expected.get(organization))) wrong.push(`${at} ${what}: ${ids}`);
		}
		expect(wrong).toEqual([]);
		// No request waited on the absent Redis.
		expect(slowest(byPhase("redis down"))).toBeLessThan(3000);
	} finally {
		await loop.stop();
	}
}, 240000);

test("a Redis that kept its data comes back: the hashes the lookup could not mark while it was away are never trusted again (no stale lookup)", async () => {
	const sp1 = new Participants(cluster);
	const organization = `kept-${cluster.namespace}`;
	const before = [FREE_PROCESSES[0]];
	const after = [FREE_PROCESSES[1], FREE_PROCESSES[2]].sort();
	expect((await sp1.add(organization, before)).status).toBe(201);
	// The lookup's answers of one organization: one hash under the cacher's prefix and the cache
	// generation (services/lookup/answer-cache.ts).
	const hashes = async (): Promise<Map<string, string>> => {
		const keys = (await redis.cacheKeys(cluster.namespace)).filter((key) =>
			lookupHash(cluster.namespace, organizationKey("0088", organization)).test(key),
		);
		const found = new Map<string, string>();
		for (const key of keys) found.set(key, JSON.stringify(await redis.command("HGETALL", key)));
		return found;
	};
	// The anonymous answer is cached in Redis.
	const stale = await pollUntil("the answer cached in Redis", 30000, async () => {
		const answer = await send(lookupUrl(organization), { headers: { Accept: LOOKUP } });
		if (answer.status !== 200 || JSON.stringify(idsOf(answer)) !== JSON.stringify(before)) return undefined;
		return [...(await hashes())].find(([, answers]) => answers.includes(before[0]))?.[0];
	});
	// Redis keeps its data (a snapshot, as a Redis with persistence would), then dies.
	await redis.command("SAVE");
	await redis.kill();
	// The change while Redis is away: the lookup cannot mark the cached answer stale.
	expect((await sp1.update(organization, after)).status).toBe(200);
	await pollUntil("the lookup to show the change", 30000, async () => {
		const answer = await send(lookupUrl(organization), { headers: { Accept: LOOKUP } });
		return answer.status === 200 && JSON.stringify(idsOf(answer)) === JSON.stringify(after) ? true : undefined;
	});
	// Redis is back with the old answer in it; the refused mark moved the cache generation on, so the
	// answers are cached again in another hash.
	const restartedAt = Date.now();
	await redis.start();
	await pollUntil("the answer cached again in a hash of a later cache generation", 30000, async () => {
		await send(lookupUrl(organization), { headers: { Accept: LOOKUP } });
		const found = await hashes();
		return [...found].some(([key, answers]) => key !== stale && answers.includes(after[0])) ? true : undefined;
	});
	const replayedMs = Date.now() - restartedAt;
	// A lookup node that never saw the change (a fresh process: empty memory) answers right too,
	// from the moment the gateway routes to it again.
	await cluster.restart("lookup");
	const first = await pollUntil("the restarted lookup to answer", 30000, async () => {
		const answer = await send(lookupUrl(organization), { headers: { Accept: LOOKUP } });
		return answer.status === 503 ? undefined : answer;
	});
	const answers = [
		first,
		...(await Promise.all(
			Array.from({ length: 5 }, () => send(lookupUrl(organization), { headers: { Accept: LOOKUP } })),
		)),
	];
	// eslint-disable-next-line no-console
	console.info(`redis-outage (kept data): the answer cached in a new hash ${replayedMs} ms after Redis came back`);
	for (const answer of answers) {
		expect(answer.status).toBe(200);
		expect(idsOf(answer)).toEqual(after);
	}
}, 180000);
