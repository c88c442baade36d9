/**
 * Issue 43, "never stale" (decisions §11; services/lookup/answer-cache.ts says how fresh an answer
 * is): a build that began before a change never puts the old state back, and a mark Redis refused
 * is not forgotten when the node that owed it stops. The Redis half uses the real Redis of the
 * machine (127.0.0.1:6379) under a namespace of this run's own, removed after; without that Redis
 * it skips and says so; in CI (CI=true) it fails.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Redis from "ioredis";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import { AnswerCache, type Built } from "../../services/lookup/answer-cache";
import type { ParticipantChange } from "../../src/platform/channels";
import { reachable } from "../support/local-network";
import { REDIS_URL } from "../support/servers";

describe("a build that began before a change (one process, no expiry)", () => {
	test("never puts the old state back after the organization is forgotten", async () => {
		const cache = new AnswerCache({
			redis: null,
			prefix: "",
			localTtlMs: 0,
			sharedTtlMs: 60_000,
			maxLocalOrganizations: 100,
			onRedisError: () => undefined,
		});
		let release!: () => void;
		const held = new Promise<void>((resolve) => (release = resolve));
		let readStarted!: () => void;
		const reading = new Promise<void>((resolve) => (readStarted = resolve));
		// The store read before the change: the old state, answered after the change was applied.
		const before = cache.get("0088:org", "visible", "d", async (): Promise<Built<string>> => {
			readStarted();
			await held;
			return { version: 1, answer: "old" };
		});
		await reading;
		cache.forget("0088:org");
		release();
		expect(await before).toBe("old");
		const after = await cache.get("0088:org", "visible", "d", async () => ({ version: 2, answer: "new" }));
		expect(after).toBe("new");
		cache.stop();
	});
});

describe("a mark Redis refused", () => {
	const namespace = `lookupfresh${process.pid}x${Date.now().toString(36)}`;
	const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lookup-freshness-"));
	let redis: Redis | null = null;
	const brokers: ServiceBroker[] = [];

	beforeAll(async () => {
		const up = await reachable(REDIS_URL);
		if (!up && process.env.CI === "true") throw new Error(`CI=true and no Redis at ${REDIS_URL}`);
		// eslint-disable-next-line no-console
		if (!up) console.warn(`lookup marks in Redis skipped: no Redis at ${REDIS_URL}`);
		if (up) redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
	});
	afterAll(async () => {
		await Promise.all(brokers.map((broker) => broker.stop().catch(() => undefined)));
		if (redis) {
			const keys: string[] = [];
			let cursor = "0";
			do {
				const [next, found] = await redis.scan(cursor, "MATCH", `registry-${namespace}-*`, "COUNT", 1000);
				keys.push(...found);
				cursor = next;
			} while (cursor !== "0");
			if (keys.length) await redis.del(...keys);
			redis.disconnect();
		}
		fs.rmSync(dataDir, { recursive: true, force: true });
	});

	/** A lookup node (with the catalog it waits for) on this run's read-model store and Redis; no transporter. */
	async function startNode(): Promise<ServiceBroker> {
		const broker = createRegistryBroker({
			env: { DATA_DIR: dataDir, CACHER: REDIS_URL, NAMESPACE: namespace },
			services: ["catalog", "lookup"],
			overrides: { logger: false },
		});
		brokers.push(broker);
		await broker.start();
		return broker;
	}

	interface LookupInternals {
		applyChange(change: ParticipantChange): Promise<boolean>;
	}
	const organization = "0088:marks-refused";

	async function status(broker: ServiceBroker): Promise<number> {
		try {
			await broker.call("lookup.organizationProcesses", {
				qualifiedIdentifier: `iso6523-actorid-upis::${organization}`,
			});
			return 200;
		} catch (error) {
			return (error as { code: number }).code;
		}
	}

	test("a node started afterwards (another node, or the one that owed it, restarted) does not answer the unmarked hash", async () => {
		if (!redis) return;
		const first = await startNode();
		// Redis keeps the answer "no participant" (404) for the organization.
		expect(await status(first)).toBe(404);
		expect(await redis.keys(`registry-${namespace}-lookup:*`)).not.toEqual([]);

		// Redis refuses this node's marks (a fault injected for this test); its fills still go through.
		const client = (first.cacher as unknown as { client: Record<string, (...args: unknown[]) => Promise<number>> })
			.client;
		const write = client.lookupWrite.bind(client);
		const refused = jest
			.spyOn(client, "lookupWrite")
			.mockImplementation((key, version, field, ...rest) =>
				field === ""
					? Promise.reject(new Error("READONLY You can't write against a read only replica."))
					: write(key, version, field, ...rest),
			);
		const lookup = first.getLocalService("lookup") as unknown as LookupInternals;
		await lookup.applyChange({
			participant: "p-marks",
			organizationKey: organization,
			processes: [],
			version: 1,
			deleted: false,
		});
		expect(refused).toHaveBeenCalled();

		// The node that owed the mark stops before it is asked again (its own fill would have marked the hash);
		// another starts on the same store and Redis.
		await first.stop();
		refused.mockRestore();
		const second = await startNode();
		expect(await status(second)).toBe(200);
	});
});
