/** The per-caller rate limit: token buckets, shared between gateways through Redis (docs/internals.md "Rate limit"). */
import type Redis from "ioredis";
import { digest } from "./counters";

interface Bucket {
	tokens: number;
	/** When `tokens` was last brought up to date. */
	at: number;
	/** Spent here since the last sync round. */
	unsynced: number;
	/** The minute of the shared counter the figures below are about. */
	minute: number;
	/** Synced spending of this gateway, and the other gateways' spending known, in that minute. */
	mine: number;
	others: number;
}

export interface RateLimiterOptions {
	perMinute: number;
	/** Redis for sharing with other gateways (absent: this gateway alone). */
	redis?: Redis | null;
	/** Key prefix of the shared counters (per namespace). */
	prefix?: string;
	syncIntervalMs?: number;
	onSyncError?: (error: unknown) => void;
	/** A round shared this gateway's spending and learned the others' (registry_rate_limit_sync_rounds_total). */
	onSynced?: () => void;
}

/** Buckets untouched this long are dropped (they are full again by then). */
const IDLE_MS = 120_000;
/** Buckets touched this recently take part in sync rounds even when they spent nothing here. */
const RECENT_MS = 10_000;

/** Who a bucket is for: an account (by username) or an anonymous client (by address). */
export type CallerKind = "user" | "addr";

export class RateLimiter {
	/** Buckets by kind, then by the caller's username or address (no `user:…`/`addr:…` key string made per request). */
	private readonly buckets: Record<CallerKind, Map<string, Bucket>> = { user: new Map(), addr: new Map() };
	private readonly perMs: number;
	private timer?: NodeJS.Timeout;
	private syncing = false;
	/** Requests a minute per caller; 0: no limit. */
	readonly perMinute: number;

	constructor(private readonly options: RateLimiterOptions) {
		this.perMinute = options.perMinute;
		this.perMs = options.perMinute / 60_000;
	}

	/** Takes a token for the caller: 0 when it may go on, else the seconds until one is free. */
	take(kind: CallerKind, caller: string, now = Date.now()): number {
		const bucket = this.bucketOf(this.buckets[kind], caller, now);
		if (bucket.tokens >= 1) {
			bucket.tokens -= 1;
			bucket.unsynced += 1;
			return 0;
		}
		return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000));
	}

	start(): void {
		if (!this.options.redis || this.options.perMinute <= 0) return;
		this.timer = setInterval(() => void this.sync(), this.options.syncIntervalMs ?? 500);
		this.timer.unref();
	}

	stop(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}

	/** One sync round (also called by tests): share what was spent here, learn what was spent elsewhere. */
	async sync(now = Date.now()): Promise<void> {
		const redis = this.options.redis;
		if (!redis || this.syncing) return;
		this.syncing = true;
		try {
			const minute = Math.floor(now / 60_000);
			const active: [string, Bucket][] = [];
			for (const kind of ["user", "addr"] as const) {
				const buckets = this.buckets[kind];
				for (const [caller, bucket] of buckets) {
					if (bucket.unsynced === 0 && now - bucket.at >= IDLE_MS) buckets.delete(caller);
					else if (bucket.unsynced > 0 || now - bucket.at < RECENT_MS)
						active.push([`${kind}:${caller}`, bucket]);
				}
			}
			if (active.length === 0) return;
			const pipeline = redis.pipeline();
			const spent = active.map(([, bucket]) => bucket.unsynced);
			active.forEach(([key], index) => {
				const counter = `${this.options.prefix ?? ""}rate:${digest(key)}:${minute}`;
				pipeline.incrby(counter, spent[index]).expire(counter, 120);
			});
			const results = await pipeline.exec();
			active.forEach(([, bucket], index) => {
				bucket.unsynced -= spent[index];
				const total = Number(results?.[index * 2]?.[1]);
				if (!Number.isFinite(total)) return;
				if (bucket.minute !== minute) Object.assign(bucket, { minute, mine: 0, others: 0 });
				bucket.mine += spent[index];
				const others = total - bucket.mine;
				if (others > bucket.others) bucket.tokens -= others - bucket.others;
				bucket.others = Math.max(bucket.others, others);
			});
			this.options.onSynced?.();
		} catch (error) {
			this.options.onSyncError?.(error);
		} finally {
			this.syncing = false;
		}
	}

	private bucketOf(buckets: Map<string, Bucket>, caller: string, now: number): Bucket {
		let bucket = buckets.get(caller);
		if (!bucket) {
			bucket = { tokens: this.options.perMinute, at: now, unsynced: 0, minute: 0, mine: 0, others: 0 };
			buckets.set(caller, bucket);
			return bucket;
		}
		if (now > bucket.at) {
			bucket.tokens = Math.min(this.options.perMinute, bucket.tokens + (now - bucket.at) * this.perMs);
			bucket.at = now;
		}
		return bucket;
	}
}
