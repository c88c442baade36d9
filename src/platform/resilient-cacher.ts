/** The Redis cacher, degrading instead of failing (docs/operations.md "When Redis, NATS or a node goes away"). */
import type Redis from "ioredis";
import { Cachers, type LoggerInstance, type ServiceBroker } from "moleculer";
import { isRedisAuthError, redisConnectionOptions } from "./connections";

/** Longest a single Redis command may take before it counts as failed (a miss). */
const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** Remembered failed invalidations of single keys; beyond this, whole key families are cleaned. */
const MAX_MISSED_KEYS = 10000;

/** CACHER and the REDIS_* credentials (src/platform/connections.ts) → ioredis options that never wait long. */
export function redisClientOptions(url: string, source: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
	return {
		...redisConnectionOptions(url, source),
		// A command while Redis is away fails at once instead of queuing for a reconnection.
		enableOfflineQueue: false,
		// A command sent but not answered fails after this long (a hung or partitioned Redis).
		commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
		maxRetriesPerRequest: 1,
		connectTimeout: 2000,
		// Commands from before a lost connection are not resent later (a late SET could be stale).
		autoResendUnfulfilledCommands: false,
		// Reconnect for ever, at most every 2 s: the cache comes back when Redis does.
		retryStrategy: (times: number) => Math.min(times * 200, 2000),
	};
}

export class ResilientRedisCacher extends Cachers.Redis<Redis> {
	/** Set by moleculer's cacher, which does not type them. */
	declare logger: LoggerInstance;
	declare connected: boolean;
	private outageSince: number | null = null;
	private failures = 0;
	private readonly missedKeys = new Set<string>();
	private readonly missedPatterns = new Set<string>();
	private replaying: Promise<void> | null = null;
	/** Why Redis refused our credentials (authentication failed), or null: readiness is DOWN meanwhile (src/platform/health.ts). */
	credentialsRefused: string | null = null;

	init(broker: ServiceBroker): void {
		super.init(broker);
		// RedisCacher logs every reconnection failure as an error; one warning per outage is enough.
		this.client.removeAllListeners("error");
		this.client.on("error", (error) => {
			this.connected = false;
			if (isRedisAuthError(error)) this.refused(error);
			this.unavailable(error);
		});
		this.client.on("ready", () => {
			if (this.credentialsRefused !== null)
				this.logger.info("Redis cache accepts the registry's credentials again");
			this.credentialsRefused = null;
			if (this.outageSince !== null) {
				this.logger.info(
					`Redis cache is back after ${Date.now() - this.outageSince} ms (${this.failures} cache operation(s) answered as misses meanwhile)`,
				);
				this.outageSince = null;
				this.failures = 0;
			}
			void this.replay();
		});
	}

	/** Redis refused the credentials (e.g. rotated in Redis, not here): said once, loudly; the process is not ready until it accepts them. */
	private refused(error: unknown): void {
		if (this.credentialsRefused !== null) return;
		const { host, port } = this.opts.redis as { host?: string; port?: number };
		this.credentialsRefused = String((error as Error)?.message ?? error).split("\n")[0];
		this.logger.error(
			`Redis at ${host}:${port} refused the registry's credentials (authentication failed: ${this.credentialsRefused}); check REDIS_USERNAME/REDIS_PASSWORD. Not ready until it accepts them`,
		);
	}

	/** Counts a failed cache operation; the first of an outage is logged. */
	private unavailable(error: unknown): void {
		this.failures++;
		if (this.outageSince !== null) return;
		this.outageSince = Date.now();
		this.logger.warn(
			`Redis cache unavailable (${String((error as Error)?.message ?? error)}): cache operations answer as misses and requests answer from the stores until it is back`,
		);
	}

	private get pendingInvalidations(): boolean {
		return this.missedKeys.size > 0 || this.missedPatterns.size > 0;
	}

	private rememberKeys(keys: string[]): void {
		for (const key of keys) {
			if (this.missedKeys.size < MAX_MISSED_KEYS) this.missedKeys.add(key);
			else this.missedPatterns.add(key.includes(":") ? `${key.slice(0, key.indexOf(":") + 1)}*` : key);
		}
	}

	/** Replays the invalidations that failed; until it succeeded, cached answers are not trusted. */
	private replay(): Promise<void> {
		if (!this.pendingInvalidations) return Promise.resolve();
		this.replaying ??= (async () => {
			try {
				const keys = [...this.missedKeys];
				if (keys.length) {
					await this.client.del(keys.map((key) => `${this.prefix ?? ""}${key}`));
					for (const key of keys) this.missedKeys.delete(key);
				}
				for (const pattern of [...this.missedPatterns]) {
					await super.clean(pattern);
					this.missedPatterns.delete(pattern);
				}
				this.logger.info(
					`Redis cache: replayed ${keys.length} key invalidation(s) missed while it was unavailable`,
				);
			} catch (error) {
				this.unavailable(error);
			} finally {
				this.replaying = null;
			}
		})();
		return this.replaying;
	}

	/** A cache operation that fails soft: `fallback` when Redis errs, once `failed` has kept what was not done. */
	private async soft<T>(fallback: T, work: () => Promise<T>, failed?: () => void): Promise<T> {
		try {
			return await work();
		} catch (error) {
			this.unavailable(error);
			failed?.();
			return fallback;
		}
	}

	/** A cache read: a miss while invalidations wait for their replay or Redis errs. */
	private async read<T>(miss: T, read: () => Promise<T>): Promise<T> {
		if (!this.pendingInvalidations) return this.soft(miss, read);
		void this.replay();
		return miss;
	}

	get(key: string): Promise<null | Record<string, unknown>> {
		return this.read(null, () => super.get(key));
	}

	getWithTTL(key: string): Promise<null | Record<string, unknown>> {
		return this.read({ data: null, ttl: null }, () => super.getWithTTL(key));
	}

	// Moleculer's cacher middleware does not await `set`: a rejection would be unhandled and end the process.
	set(key: string, data: unknown, ttl?: number): Promise<unknown> {
		return this.soft(null, () => super.set(key, data, ttl));
	}

	del(key: string | string[]): Promise<unknown> {
		const keys = Array.isArray(key) ? key : [key];
		const prefixed = keys.map((one) => `${this.prefix ?? ""}${one}`);
		return this.soft(
			0,
			() => this.client.del(prefixed),
			() => this.rememberKeys(keys),
		);
	}

	clean(match: string | string[] = "*"): Promise<unknown> {
		return this.soft(
			null,
			() => super.clean(match),
			() => [match].flat().forEach((one) => this.missedPatterns.add(one)),
		);
	}

	/** Never waits for an absent Redis: QUIT when connected, else just drop the connection. */
	async close(): Promise<unknown> {
		try {
			if (this.client?.status === "ready")
				await Promise.race([
					super.close(),
					new Promise((resolve) => setTimeout(resolve, REDIS_COMMAND_TIMEOUT_MS).unref()),
				]);
		} catch {
			// Closing anyway.
		} finally {
			this.client?.disconnect();
		}
		return undefined;
	}
}
