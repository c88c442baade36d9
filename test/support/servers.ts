/**
 * The real servers the distributed-mode tests use (NATS with JetStream on 4222, Redis on
 * 6379). In CI (CI=true) a missing server is a failure; elsewhere those suites skip and say so.
 */
import { reachable } from "./local-network";

export const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export async function distributedServersAvailable(): Promise<boolean> {
	const [nats, redis] = await Promise.all([reachable(NATS_URL), reachable(REDIS_URL)]);
	return nats && redis;
}
