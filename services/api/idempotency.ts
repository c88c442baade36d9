/** Idempotent adds (docs/decisions.md "Idempotent adds"), keyed in Redis (CACHER) or in memory. */
import { createHash } from "node:crypto";
import type Redis from "ioredis";
import { Conflict, RegistryError, TypeMismatch } from "../../src/contract/errors";
import type { RecordedAnswer } from "./respond";

const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
const DEFAULT_KEYS_PER_CALLER = 1000;
/** How long a retry waits for the first request with its key to finish before it answers 409. */
const WAIT_FOR_FIRST_MS = 30_000;
const POLL_MS = 20;
/** RFC 9110 token-ish: printable ASCII without spaces, as clients send UUIDs or random strings. */
const KEY_FORM = /^[\x21-\x7e]{1,255}$/;

/** What is kept per key: the request it was first used for, and its answer once there is one. */
interface KeyEntry {
	fingerprint: string;
	answer: RecordedAnswer | null;
}

/**
 * Entries per caller and key. `claim` stores one unless the key exists (null: claimed; else what is there)
 * and drops the caller's oldest key beyond its bound; `finish` records the answer only while the key is there.
 */
export interface KeyEntries {
	claim(caller: string, key: string, entry: KeyEntry): Promise<KeyEntry | null>;
	get(caller: string, key: string): Promise<KeyEntry | null>;
	finish(caller: string, key: string, entry: KeyEntry): Promise<void>;
	release(caller: string, key: string): Promise<void>;
}

export class MemoryKeyEntries implements KeyEntries {
	/** Each caller's keys in the order they were claimed (a Map iterates in insertion order): the first is the oldest. */
	private readonly callers = new Map<string, Map<string, { entry: KeyEntry; expiresAt: number }>>();
	private readonly perCaller: number;
	private claims = 0;

	constructor(bounds: { perCaller?: number } = {}) {
		this.perCaller = bounds.perCaller ?? DEFAULT_KEYS_PER_CALLER;
	}

	// Look and take in one synchronous step: no other request's claim can come in between.
	async claim(caller: string, key: string, entry: KeyEntry): Promise<KeyEntry | null> {
		const found = this.live(caller, key);
		if (found) return found;
		// Expired keys go on every thousandth claim, so many callers' keys cannot grow memory forever.
		if (++this.claims % 1000 === 0) this.sweep();
		let keys = this.callers.get(caller);
		if (!keys) this.callers.set(caller, (keys = new Map()));
		keys.set(key, { entry, expiresAt: Date.now() + IDEMPOTENCY_TTL_SECONDS * 1000 });
		while (keys.size > this.perCaller) keys.delete(keys.keys().next().value as string);
		return null;
	}

	async get(caller: string, key: string): Promise<KeyEntry | null> {
		return this.live(caller, key);
	}

	private live(caller: string, key: string): KeyEntry | null {
		const held = this.callers.get(caller)?.get(key);
		if (held && held.expiresAt > Date.now()) return held.entry;
		if (held) this.drop(caller, key);
		return null;
	}

	async finish(caller: string, key: string, entry: KeyEntry): Promise<void> {
		// Only a key still there (newer keys may have pushed it out); it keeps its place and its expiry.
		const held = this.callers.get(caller)?.get(key);
		if (held) held.entry = entry;
	}

	async release(caller: string, key: string): Promise<void> {
		this.drop(caller, key);
	}

	/** How many keys a caller holds now (tests, metrics). */
	size(caller: string): number {
		return this.callers.get(caller)?.size ?? 0;
	}

	private drop(caller: string, key: string): void {
		const keys = this.callers.get(caller);
		keys?.delete(key);
		if (keys?.size === 0) this.callers.delete(caller);
	}

	private sweep(): void {
		const now = Date.now();
		for (const [caller, keys] of this.callers)
			for (const [key, { expiresAt }] of keys) if (expiresAt <= now) this.drop(caller, key);
	}
}

/**
 * Claims a key and keeps the caller's bound in one step (a script runs alone: two gateways cannot both slip
 * under it). KEYS: the entry, the caller's keys by claim time (scores strictly increase, so claims in one
 * millisecond keep their order). ARGV: entry JSON, TTL seconds, now (ms), bound, the key, the entries' prefix.
 */
const CLAIM_SCRIPT = `
if not redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then
	return redis.call('GET', KEYS[1])
end
local now = tonumber(ARGV[3])
local score = now
local newest = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) >= score then score = tonumber(newest[2]) + 1 end
redis.call('ZADD', KEYS[2], score, ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]) * 1000)
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if excess > 0 then
	for _, oldest in ipairs(redis.call('ZRANGE', KEYS[2], 0, excess - 1)) do
		redis.call('DEL', ARGV[6] .. oldest)
	end
	redis.call('ZREMRANGEBYRANK', KEYS[2], 0, excess - 1)
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
return false
`;

/** Entries at `<prefix><caller>:<key>`, a caller's keys in the sorted set `<prefix><caller>` (no colon in a name). */
export class RedisKeyEntries implements KeyEntries {
	private readonly perCaller: number;

	constructor(
		private readonly redis: Redis,
		private readonly prefix: string,
		bounds: { perCaller?: number } = {},
	) {
		this.perCaller = bounds.perCaller ?? DEFAULT_KEYS_PER_CALLER;
	}

	private entryKey(caller: string, key: string): string {
		return `${this.prefix}${caller}:${key}`;
	}

	async claim(caller: string, key: string, entry: KeyEntry): Promise<KeyEntry | null> {
		const found = (await this.redis.eval(
			CLAIM_SCRIPT,
			2,
			this.entryKey(caller, key),
			this.prefix + caller,
			JSON.stringify(entry),
			IDEMPOTENCY_TTL_SECONDS,
			Date.now(),
			this.perCaller,
			key,
			this.entryKey(caller, ""),
		)) as string | null;
		return found === null ? null : (JSON.parse(found) as KeyEntry);
	}

	async get(caller: string, key: string): Promise<KeyEntry | null> {
		const text = await this.redis.get(this.entryKey(caller, key));
		return text === null ? null : (JSON.parse(text) as KeyEntry);
	}

	async finish(caller: string, key: string, entry: KeyEntry): Promise<void> {
		// XX: a key pushed out stays out; KEEPTTL: it lives 24 hours from its claim.
		await this.redis.set(this.entryKey(caller, key), JSON.stringify(entry), "KEEPTTL", "XX");
	}

	async release(caller: string, key: string): Promise<void> {
		await this.redis
			.multi()
			.del(this.entryKey(caller, key))
			.zrem(this.prefix + caller, key)
			.exec();
	}
}

/** The request a key stands for: the operation, its path values and body, as the gateway bound them. */
export function fingerprintOf(operationId: string, params: unknown): string {
	return createHash("sha256").update(operationId).update("\n").update(JSON.stringify(params)).digest("base64url");
}

/** The header's value, checked; undefined when the request has none. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
	if (header === undefined) return undefined;
	if (typeof header !== "string" || !KEY_FORM.test(header))
		throw new TypeMismatch("Header 'Idempotency-Key' must be 1 to 255 printable ASCII characters without spaces");
	return header;
}

export class Idempotency {
	constructor(
		private readonly entries: KeyEntries,
		private readonly onStoreError: (error: unknown) => void,
	) {}

	/** Runs `execute` (it records errors, never throws) once per caller and key, or replays its answer; not a 5xx. */
	async run(
		caller: string,
		key: string,
		fingerprint: string,
		execute: () => Promise<RecordedAnswer>,
	): Promise<{ answer: RecordedAnswer; replayed: boolean }> {
		const deadline = Date.now() + WAIT_FOR_FIRST_MS;
		for (;;) {
			let found: KeyEntry | null;
			try {
				found = await this.entries.claim(caller, key, { fingerprint, answer: null });
			} catch (error) {
				this.onStoreError(error);
				return { answer: await execute(), replayed: false };
			}
			if (found === null) return { answer: await this.first(caller, key, fingerprint, execute), replayed: false };
			if (found.fingerprint !== fingerprint) throw reusedKey();
			if (found.answer) return { answer: found.answer, replayed: true };
			const finished = await this.waitForFirst(caller, key, deadline);
			if (finished === "gone") continue; // the first failed with 5xx and let the key go: this one runs
			if (finished.fingerprint !== fingerprint) throw reusedKey();
			return { answer: finished.answer as RecordedAnswer, replayed: true };
		}
	}

	private async first(
		caller: string,
		key: string,
		fingerprint: string,
		execute: () => Promise<RecordedAnswer>,
	): Promise<RecordedAnswer> {
		let answer: RecordedAnswer;
		try {
			answer = await execute();
		} catch (error) {
			await this.entries.release(caller, key).catch(this.onStoreError);
			throw error;
		}
		const keep =
			answer.status < 500
				? this.entries.finish(caller, key, { fingerprint, answer })
				: this.entries.release(caller, key);
		await keep.catch(this.onStoreError);
		return answer;
	}

	private async waitForFirst(caller: string, key: string, deadline: number): Promise<KeyEntry | "gone"> {
		while (Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, POLL_MS));
			let entry: KeyEntry | null;
			try {
				entry = await this.entries.get(caller, key);
			} catch (error) {
				this.onStoreError(error);
				return "gone";
			}
			if (!entry) return "gone";
			if (entry.answer) return entry;
		}
		throw new Conflict("A request with this Idempotency-Key is still being processed; retry later");
	}
}

function reusedKey(): RegistryError {
	return new RegistryError(
		422,
		"UnprocessableEntityException",
		"This Idempotency-Key was used for another request; use a new key for a new request",
	);
}
