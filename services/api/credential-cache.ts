/** Verified credentials a gateway remembers (docs/internals.md "Credentials and the login throttle"). */
import { LRUCache } from "lru-cache";

/** The part of a remembered credential's life after which a request starts its re-verification. */
const REFRESH_AFTER = 0.8;
/** Credentials remembered at most; the least recently used goes first (a credential costs one derivation to verify again). */
const MAX_CREDENTIALS = 10_000;

export interface Remembered<Caller> {
	caller: Caller;
	/** From then on a request that uses it starts its verification again, in the background. */
	refreshAt: number;
	expiresAt: number;
}

export class CredentialCache<Caller extends NonNullable<unknown>> {
	private readonly verified = new LRUCache<string, Remembered<Caller>>({ max: MAX_CREDENTIALS });
	private readonly pending = new Map<string, Promise<Caller | null>>();
	/** Bumped by clear(): a verification still in flight answers its request but is not remembered. */
	private generation = 0;

	constructor(private readonly ttlMs: () => number) {}

	/** The caller a header was verified as and when it is due to be verified again, while its TTL lasts. */
	get(key: string, now = Date.now()): Remembered<Caller> | undefined {
		const entry = this.verified.get(key);
		if (!entry) return undefined;
		if (entry.expiresAt > now) return entry;
		this.verified.delete(key);
		return undefined;
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
