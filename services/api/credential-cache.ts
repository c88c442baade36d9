/**
 * Verified Basic credentials, remembered by one gateway (decisions §3: "a verified credential
 * may be cached in memory, short TTL, dropped when the account changes"; keyed by a digest of the
 * username and password, bounded) so that scrypt is paid once per credential and TTL, not per
 * request.
 *
 * Concurrent requests with the same header share one verification: without that, the first
 * burst of N connections after a start (or after every TTL) ran N scrypt derivations at once
 * (32 MiB and tens of milliseconds each), starving the event loop's thread pool. Only a successful verification is remembered; a failure is never
 * cached, so every wrong attempt still costs its caller the full check and counts as a
 * failure. A `clear()` (an account changed) also discards verifications still in flight: they
 * answer their own requests but are not remembered.
 *
 * A credential in use is verified again before its TTL ends: in the last fifth of its life a
 * request is answered from it and starts one re-verification in the background, so a busy
 * caller never waits for a derivation when its TTL runs out (docs/reliability.md).
 */
import { LRUCache } from "lru-cache";

/** The part of a remembered credential's life after which a request starts its re-verification. */
const REFRESH_AFTER = 0.8;
/** Credentials remembered at most; the least recently used goes first (a credential costs one derivation to verify again). */
const MAX_CREDENTIALS = 10_000;

export class CredentialCache<Caller extends NonNullable<unknown>> {
	private readonly verified = new LRUCache<string, { caller: Caller; refreshAt: number; expiresAt: number }>({
		max: MAX_CREDENTIALS,
	});
	private readonly pending = new Map<string, Promise<Caller | null>>();
	private generation = 0;

	constructor(private readonly ttlMs: () => number) {}

	/** The caller a header was verified as, while its TTL lasts. */
	get(key: string, now = Date.now()): Caller | undefined {
		const entry = this.verified.get(key);
		if (!entry) return undefined;
		if (entry.expiresAt > now) return entry.caller;
		this.verified.delete(key);
		return undefined;
	}

	/** Is the remembered credential of `key` near its end, with no verification of it running? */
	refreshDue(key: string, now = Date.now()): boolean {
		const entry = this.verified.get(key);
		return entry !== undefined && entry.refreshAt <= now && !this.pending.has(key);
	}

	/** Runs `verify` once for all concurrent callers of the same key; remembers a non-null answer and forgets the key on a null one. */
	verify(key: string, verify: () => Promise<Caller | null>): Promise<Caller | null> {
		const running = this.pending.get(key);
		if (running) return running;
		const generation = this.generation;
		const check = verify()
			.then((caller) => {
				if (caller === null) this.verified.delete(key);
				else if (generation === this.generation) {
					const now = Date.now();
					const ttl = this.ttlMs();
					this.verified.set(key, { caller, refreshAt: now + ttl * REFRESH_AFTER, expiresAt: now + ttl });
				}
				return caller;
			})
			.finally(() => {
				// Only its own entry: a clear() may have let a newer verification take the key.
				if (this.pending.get(key) === check) this.pending.delete(key);
			});
		this.pending.set(key, check);
		return check;
	}

	/** Forget everything (an account changed: any remembered credential may be revoked). */
	clear(): void {
		this.generation++;
		this.verified.clear();
		this.pending.clear();
	}

	get size(): number {
		return this.verified.size;
	}
}
