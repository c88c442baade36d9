/**
 * Removes what a registry NAMESPACE left on the shared servers: its JetStream streams (the
 * durable channels, src/platform/channels.ts) and its Redis keys (cacher entries, counters). The test
 * clusters and the bench give every run a namespace of its own and call this when they stop,
 * because NATS and Redis outlive the runs (JetStream keeps its streams on disk).
 */
import Redis from "ioredis";
import { connect } from "nats";
import { channelPrefix } from "../../src/platform/channels";
import { natsConnectionOptions, redisConnectionOptions } from "../../src/platform/connections";

/** `source`: the environment whose NATS_* / REDIS_* credentials the servers want (src/platform/connections.ts). */
export async function removeNamespace(
	namespace: string,
	servers: { natsUrl: string; redisUrl: string },
	source: NodeJS.ProcessEnv = process.env,
): Promise<void> {
	const connection = await connect({ ...natsConnectionOptions(source, servers.natsUrl), reconnect: false }).catch(
		() => null,
	);
	if (connection) {
		try {
			const manager = await connection.jetstreamManager();
			const prefix = channelPrefix(namespace);
			for await (const stream of manager.streams.list()) {
				const name = stream.config.name;
				if (name.includes(prefix) || stream.config.subjects?.some((subject) => subject.includes(prefix)))
					await manager.streams.delete(name);
			}
		} catch {
			// JetStream not enabled or already gone: nothing of this namespace is left there.
		} finally {
			await connection.close();
		}
	}
	const redis = new Redis({
		...redisConnectionOptions(servers.redisUrl, source),
		lazyConnect: true,
		maxRetriesPerRequest: 1,
	});
	try {
		await redis.connect();
		for (const pattern of [`registry-${namespace}*`, `*${namespace}*`]) {
			let cursor = "0";
			do {
				const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 500);
				cursor = next;
				if (keys.length) await redis.del(...keys);
			} while (cursor !== "0");
		}
	} catch {
		// Redis gone: nothing to clean.
	} finally {
		redis.disconnect();
	}
}
