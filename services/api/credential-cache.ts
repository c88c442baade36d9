/**
 * Verified Basic credentials, remembered by one gateway (decisions §3: "a verified credential
 * may be cached in memory, keyed by a hash of the header, short TTL, dropped when the account
 * changes") so that scrypt is paid once per credential and TTL, not per request.
 *
 * Concurrent requests with the same header share one verification: without that, the first
 * burst of N connections after a start (or after every TTL) ran N scrypt derivations at once
 * (32 MiB and tens of milliseconds each), starving the event loop's thread pool
 * (docs/performance.md). Only a successful verification is remembered; a failure is never
 * cached, so every wrong attempt still costs its caller the full check and counts as a
 * failure. A `clear()` (an account changed) also discards verifications still in flight: they
 * answer their own requests but are not remembered.
 */
export class CredentialCache<Caller> {
	private readonly verified = new Map<string, { caller: Caller; expiresAt: number }>();
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

	/** Runs `verify` once for all concurrent callers of the same key; remembers a non-null answer. */
	verify(key: string, verify: () => Promise<Caller | null>): Promise<Caller | null> {
		const running = this.pending.get(key);
		if (running) return running;
		const generation = this.generation;
		const check = verify()
			.then((caller) => {
				if (caller !== null && generation === this.generation) this.verified.set(key, { caller, expiresAt: Date.now() + this.ttlMs() });
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
