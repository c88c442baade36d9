/**
 * Idempotent adds (docs/decisions.md "Safe writes"): a POST with an `Idempotency-Key` header
 * runs once per caller and key; a retry with the same key and the same request gets the first
 * answer again (marked `Idempotent-Replayed: true`), the same key with another request 422.
 * Concurrent retries wait for the first. Keys live 24 hours in Redis when the gateways share
 * one (CACHER), else in this process's memory.
 *
 * Without Redis the key cannot protect anything: the adds then run as if no key had been sent,
 * and the store's unique keys (one participant per provider and organization, one process per
 * qualified identifier) still refuse a second record with 409.
 */
import { createHash } from "node:crypto";
import type Redis from "ioredis";
import { Conflict, RegistryError, TypeMismatch } from "../../src/contract/errors";
import type { RecordedAnswer } from "./respond";

export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
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

/** Where the entries live. `claim` stores the entry unless the key exists, and returns what is there instead (null: claimed). */
export interface KeyEntries {
	claim(key: string, entry: KeyEntry): Promise<KeyEntry | null>;
	get(key: string): Promise<KeyEntry | null>;
	finish(key: string, entry: KeyEntry): Promise<void>;
	release(key: string): Promise<void>;
}

export class MemoryKeyEntries implements KeyEntries {
	private readonly entries = new Map<string, { entry: KeyEntry; expiresAt: number }>();

	constructor(private readonly ttlMs = IDEMPOTENCY_TTL_SECONDS * 1000) {}

	// Look and take in one synchronous step: no other request's claim can come in between.
	async claim(key: string, entry: KeyEntry): Promise<KeyEntry | null> {
		const found = this.live(key);
		if (found) return found;
		this.sweep();
		this.entries.set(key, { entry, expiresAt: Date.now() + this.ttlMs });
		return null;
	}

	async get(key: string): Promise<KeyEntry | null> {
		return this.live(key);
	}

	private live(key: string): KeyEntry | null {
		const found = this.entries.get(key);
		if (found && found.expiresAt <= Date.now()) this.entries.delete(key);
		return found && found.expiresAt > Date.now() ? found.entry : null;
	}

	async finish(key: string, entry: KeyEntry): Promise<void> {
		this.entries.set(key, { entry, expiresAt: Date.now() + this.ttlMs });
	}

	async release(key: string): Promise<void> {
		this.entries.delete(key);
	}

	/** Expired keys go on every thousandth claim, so distinct keys cannot grow memory forever. */
	private claims = 0;
	private sweep(): void {
		if (++this.claims % 1000 !== 0) return;
		const now = Date.now();
		for (const [key, { expiresAt }] of this.entries) if (expiresAt <= now) this.entries.delete(key);
	}
}

export class RedisKeyEntries implements KeyEntries {
	constructor(
		private readonly redis: Redis,
		private readonly prefix: string,
	) {}

	async claim(key: string, entry: KeyEntry): Promise<KeyEntry | null> {
		const set = await this.redis.set(this.prefix + key, JSON.stringify(entry), "EX", IDEMPOTENCY_TTL_SECONDS, "NX");
		return set === "OK" ? null : ((await this.get(key)) ?? { fingerprint: entry.fingerprint, answer: null });
	}

	async get(key: string): Promise<KeyEntry | null> {
		const text = await this.redis.get(this.prefix + key);
		return text === null ? null : (JSON.parse(text) as KeyEntry);
	}

	async finish(key: string, entry: KeyEntry): Promise<void> {
		await this.redis.set(this.prefix + key, JSON.stringify(entry), "EX", IDEMPOTENCY_TTL_SECONDS);
	}

	async release(key: string): Promise<void> {
		await this.redis.del(this.prefix + key);
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

export interface IdempotentRun {
	answer: RecordedAnswer;
	replayed: boolean;
}

export class Idempotency {
	constructor(
		private readonly entries: KeyEntries,
		private readonly onStoreError: (error: unknown) => void,
	) {}

	/**
	 * Runs `execute` once for this caller's key, or replays its answer. An answer of 5xx is not
	 * kept (a retry runs again); `execute` answers errors as recorded answers, it never throws them.
	 */
	async run(
		caller: string,
		key: string,
		fingerprint: string,
		execute: () => Promise<RecordedAnswer>,
	): Promise<IdempotentRun> {
		// A Basic username has no colon, so the first colon ends it.
		const scoped = `${caller}:${key}`;
		const deadline = Date.now() + WAIT_FOR_FIRST_MS;
		for (;;) {
			let found: KeyEntry | null;
			try {
				found = await this.entries.claim(scoped, { fingerprint, answer: null });
			} catch (error) {
				this.onStoreError(error);
				return { answer: await execute(), replayed: false };
			}
			if (found === null) return { answer: await this.first(scoped, fingerprint, execute), replayed: false };
			if (found.fingerprint !== fingerprint) throw reusedKey();
			if (found.answer) return { answer: found.answer, replayed: true };
			const finished = await this.waitForFirst(scoped, deadline);
			if (finished === "gone") continue; // the first failed with 5xx and let the key go: this one runs
			if (finished.fingerprint !== fingerprint) throw reusedKey();
			return { answer: finished.answer as RecordedAnswer, replayed: true };
		}
	}

	private async first(
		key: string,
		fingerprint: string,
		execute: () => Promise<RecordedAnswer>,
	): Promise<RecordedAnswer> {
		let answer: RecordedAnswer;
		try {
			answer = await execute();
		} catch (error) {
			await this.entries.release(key).catch(this.onStoreError);
			throw error;
		}
		const keep =
			answer.status < 500 ? this.entries.finish(key, { fingerprint, answer }) : this.entries.release(key);
		await keep.catch(this.onStoreError);
		return answer;
	}

	private async waitForFirst(key: string, deadline: number): Promise<KeyEntry | "gone"> {
		while (Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, POLL_MS));
			let entry: KeyEntry | null;
			try {
				entry = await this.entries.get(key);
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
