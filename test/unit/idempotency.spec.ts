/**
 * Idempotency-Key records (services/api/idempotency.ts), in memory and in the real Redis of the
 * machine (127.0.0.1:6379, a key prefix of this run's own, removed after): at most the bound of
 * live keys per caller, the oldest going first, and otherwise the behaviour of docs/decisions.md
 * "Safe writes" (the same answer replayed, 422 for another request, a concurrent retry waits).
 * Without that Redis the Redis half skips and says so; in CI (CI=true) it fails.
 */
import Redis from "ioredis";
import { Idempotency, MemoryKeyEntries, RedisKeyEntries, type KeyEntries } from "../../services/api/idempotency";
import type { RecordedAnswer } from "../../services/api/respond";
import { reachable } from "../support/local-network";
import { REDIS_URL } from "../support/servers";

const BOUND = 3;
const PREFIX = `registry-test-${process.pid}-${Date.now()}-idempotency:`;

interface Store {
	entries: KeyEntries;
	/** How many entries a caller holds in the store now. */
	held(caller: string): Promise<number>;
}

let redis: Redis | null = null;
let redisUp = false;

beforeAll(async () => {
	redisUp = await reachable(REDIS_URL);
	if (!redisUp && process.env.CI === "true") throw new Error(`CI=true and no Redis at ${REDIS_URL}`);
	// eslint-disable-next-line no-console
	if (!redisUp) console.warn(`idempotency in Redis skipped: no Redis at ${REDIS_URL}`);
	if (redisUp) redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
});

async function keysOfThisRun(): Promise<string[]> {
	const found: string[] = [];
	let cursor = "0";
	do {
		const [next, keys] = await (redis as Redis).scan(cursor, "MATCH", `${PREFIX}*`, "COUNT", 1000);
		found.push(...keys);
		cursor = next;
	} while (cursor !== "0");
	return found;
}

afterAll(async () => {
	if (!redis) return;
	const keys = await keysOfThisRun();
	if (keys.length) await redis.del(...keys);
	redis.disconnect();
});

const STORES: [string, () => Store | null][] = [
	[
		"in memory",
		() => {
			const entries = new MemoryKeyEntries({ perCaller: BOUND });
			return { entries, held: async (caller) => entries.size(caller) };
		},
	],
	[
		"in Redis",
		() => {
			if (!redis) return null;
			// Each test its own prefix under this run's: the tests stay independent.
			const prefix = `${PREFIX}${Math.random().toString(36).slice(2)}:`;
			const client = redis;
			return {
				entries: new RedisKeyEntries(client, prefix, { perCaller: BOUND }),
				async held(caller) {
					const entries = (await keysOfThisRun()).filter((key) => key.startsWith(`${prefix}${caller}:`));
					const order = await client.zcard(prefix + caller);
					expect(order).toBe(entries.length);
					return entries.length;
				},
			};
		},
	],
];

const answer = (body: string): RecordedAnswer => ({ status: 201, head: [], body });

describe.each(STORES)("Idempotency-Key records %s", (_where, makeStore) => {
	/** Null: this store's server is not there (the suite said so). */
	let store: Store | null;
	let idempotency: Idempotency;
	let runs: string[];

	beforeEach(() => {
		runs = [];
		store = makeStore();
		idempotency = new Idempotency(store?.entries as KeyEntries, (error) => {
			throw error;
		});
	});

	/** Runs `key` for `caller`; the action records that it ran and answers its key. */
	function add(caller: string, key: string, fingerprint = "add-participant") {
		return idempotency.run(caller, key, fingerprint, async () => {
			runs.push(`${caller}:${key}`);
			return answer(`${caller}:${key}`);
		});
	}

	test("a caller's key beyond the bound makes its oldest go; the newer ones still replay", async () => {
		if (!store) return;
		for (const key of ["k1", "k2", "k3", "k4"]) expect((await add("sp1", key)).replayed).toBe(false);
		expect(await store.held("sp1")).toBe(BOUND);
		for (const key of ["k4", "k3", "k2"]) {
			const replay = await add("sp1", key);
			expect(replay).toEqual({ answer: answer(`sp1:${key}`), replayed: true });
		}
		expect(runs).toEqual(["sp1:k1", "sp1:k2", "sp1:k3", "sp1:k4"]);
		// k1 went first: it runs again, as a new key, and pushes out k2, now the oldest.
		expect((await add("sp1", "k1")).replayed).toBe(false);
		expect((await add("sp1", "k2")).replayed).toBe(false);
		expect((await add("sp1", "k4")).replayed).toBe(true);
		expect(runs.slice(4)).toEqual(["sp1:k1", "sp1:k2"]);
		expect(await store.held("sp1")).toBe(BOUND);
	});

	test("the bound is per caller: another caller's many keys push out none of this caller's", async () => {
		if (!store) return;
		await add("sp1", "mine");
		for (let index = 0; index < 4 * BOUND; index++) await add("sp2", `theirs-${index}`);
		expect(await store.held("sp2")).toBe(BOUND);
		expect(await add("sp1", "mine")).toEqual({ answer: answer("sp1:mine"), replayed: true });
		// The same key of another caller is another record.
		expect((await add("sp2", "mine")).replayed).toBe(false);
	});

	test("the same key with another request is 422 and runs nothing", async () => {
		if (!store) return;
		await add("sp1", "k");
		await expect(add("sp1", "k", "another-body")).rejects.toMatchObject({
			code: 422,
			type: "UnprocessableEntityException",
		});
		expect(runs).toEqual(["sp1:k"]);
	});

	test("a concurrent retry waits for the first and gets its answer", async () => {
		if (!store) return;
		let releaseFirst: () => void = () => undefined;
		const firstMayFinish = new Promise<void>((resolve) => (releaseFirst = resolve));
		let firstStarted: () => void = () => undefined;
		const started = new Promise<void>((resolve) => (firstStarted = resolve));
		const first = idempotency.run("sp1", "slow", "f", async () => {
			firstStarted();
			await firstMayFinish;
			runs.push("first");
			return answer("first");
		});
		await started;
		// The key is claimed now: the retry finds it unanswered and waits.
		const retry = idempotency.run("sp1", "slow", "f", async () => {
			runs.push("retry");
			return answer("retry");
		});
		releaseFirst();
		expect(await first).toEqual({ answer: answer("first"), replayed: false });
		expect(await retry).toEqual({ answer: answer("first"), replayed: true });
		expect(runs).toEqual(["first"]);
	});

	test("a key pushed out while its first request runs is not recorded by it: the bound holds", async () => {
		if (!store) return;
		let releaseFirst: () => void = () => undefined;
		const firstMayFinish = new Promise<void>((resolve) => (releaseFirst = resolve));
		let firstStarted: () => void = () => undefined;
		const started = new Promise<void>((resolve) => (firstStarted = resolve));
		const first = idempotency.run("sp1", "pushed-out", "f", async () => {
			firstStarted();
			await firstMayFinish;
			return answer("first");
		});
		await started;
		for (let index = 0; index < BOUND; index++) await add("sp1", `newer-${index}`);
		releaseFirst();
		expect((await first).replayed).toBe(false);
		expect(await store.entries.get("sp1", "pushed-out")).toBeNull();
		expect(await store.held("sp1")).toBe(BOUND);
	});
});
