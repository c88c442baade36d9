/** Expiring counters the gateways share: Redis when CACHER is set, else memory; a Redis error counts as 0. */
import { createHash } from "node:crypto";
import type Redis from "ioredis";

export interface Counters {
	/** Adds one and returns the count; the key expires ttlSeconds after its first (or `"latest"`) increment. */
	increment(key: string, ttlSeconds: number, expiresAfter?: "first" | "latest"): Promise<number>;
	/** Seconds until the key expires, or 0 (absent). */
	ttl(key: string): Promise<number>;
	/** Sets the key (to 1) for ttlSeconds. */
	mark(key: string, ttlSeconds: number): Promise<void>;
	remove(key: string): Promise<void>;
}

/** Counter keys never hold a raw username (it may be a mistyped password) or address. */
export function digest(value: string): string {
	return createHash("sha256").update(value).digest("base64url").slice(0, 22);
}

interface Entry {
	value: number;
	expiresAt: number;
}

export class MemoryCounters implements Counters {
	private readonly entries = new Map<string, Entry>();
	private sweeps = 0;

	private live(key: string): Entry | undefined {
		const entry = this.entries.get(key);
		if (entry && entry.expiresAt <= Date.now()) {
			this.entries.delete(key);
			return undefined;
		}
		return entry;
	}

	/** Drops expired keys now and then, so a flood of distinct usernames cannot grow memory forever. */
	private sweep(): void {
		if (++this.sweeps % 1000 !== 0) return;
		const now = Date.now();
		for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
	}

	async increment(key: string, ttlSeconds: number, expiresAfter: "first" | "latest" = "first"): Promise<number> {
		this.sweep();
		const entry = this.live(key) ?? { value: 0, expiresAt: 0 };
		if (entry.value === 0 || expiresAfter === "latest") entry.expiresAt = Date.now() + ttlSeconds * 1000;
		entry.value += 1;
		this.entries.set(key, entry);
		return entry.value;
	}

	async ttl(key: string): Promise<number> {
		const entry = this.live(key);
		return entry ? Math.ceil((entry.expiresAt - Date.now()) / 1000) : 0;
	}

	async mark(key: string, ttlSeconds: number): Promise<void> {
		this.sweep();
		this.entries.set(key, { value: 1, expiresAt: Date.now() + ttlSeconds * 1000 });
	}

	async remove(key: string): Promise<void> {
		this.entries.delete(key);
	}
}

export class RedisCounters implements Counters {
	constructor(
		private readonly redis: Redis,
		private readonly prefix: string,
		private readonly onError: (error: unknown) => void,
	) {}

	private async guard<T>(fallback: T, work: () => Promise<T>): Promise<T> {
		try {
			return await work();
		} catch (error) {
			this.onError(error);
			return fallback;
		}
	}

	increment(key: string, ttlSeconds: number, expiresAfter: "first" | "latest" = "first"): Promise<number> {
		return this.guard(0, async () => {
			const full = this.prefix + key;
			const transaction = this.redis.multi().incr(full);
			const results = await (
				expiresAfter === "latest"
					? transaction.expire(full, ttlSeconds)
					: transaction.expire(full, ttlSeconds, "NX")
			).exec();
			return Number(results?.[0]?.[1] ?? 0);
		});
	}

	ttl(key: string): Promise<number> {
		return this.guard(0, async () => Math.max(0, await this.redis.ttl(this.prefix + key)));
	}

	mark(key: string, ttlSeconds: number): Promise<void> {
		return this.guard(undefined, async () => void (await this.redis.set(this.prefix + key, "1", "EX", ttlSeconds)));
	}

	remove(key: string): Promise<void> {
		return this.guard(undefined, async () => void (await this.redis.del(this.prefix + key)));
	}
}
