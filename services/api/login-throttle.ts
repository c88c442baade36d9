/**
 * Brute-force protection for Basic auth (decisions §3). Per username (known or not):
 * `userMaxFailures` failures within the window lock it for `lockoutSeconds`, doubling on
 * repeat up to `maxLockoutSeconds`; while locked every attempt, right or wrong, is 429, so
 * a guess teaches nothing. Per client address: `addressMaxFailures` failures within the
 * window give that address 429 on every request with credentials for `lockoutSeconds`.
 *
 * Failures and locks are counted in the shared counters (Redis in a cluster). A gateway also
 * knows the locks in memory: those it set, those it read, and those other gateways announce
 * (the `auth.locked` notice), so a request whose credential it verified recently is checked
 * without a store round trip (`knownWait`); a credential it must verify is checked against the
 * store too (`retryAfter`).
 */
import { createHash } from "node:crypto";
import type { Counters } from "./counters";

export interface ThrottleSettings {
	userMaxFailures: number;
	addressMaxFailures: number;
	windowSeconds: number;
	lockoutSeconds: number;
	maxLockoutSeconds: number;
}

/** Digests remembered per username or address: the hot path hashes each once. */
const MAX_DIGESTS = 10_000;

export class LoginThrottle {
	/** Lock key (`user:<digest>` or `addr:<digest>`) → until when, in ms. */
	private readonly locks = new Map<string, number>();
	private readonly digests = new Map<string, string>();

	constructor(
		private readonly counters: Counters,
		private readonly settings: ThrottleSettings,
		/** Tells the other gateways of a lock this one set. */
		private readonly announce: (key: string, seconds: number) => void = () => undefined,
	) {}

	/** Keys never hold a raw username (it may be a mistyped password) or address. */
	digest(value: string): string {
		let digest = this.digests.get(value);
		if (digest === undefined) {
			if (this.digests.size >= MAX_DIGESTS) this.digests.clear();
			digest = createHash("sha256").update(value).digest("base64url").slice(0, 22);
			this.digests.set(value, digest);
		}
		return digest;
	}

	/** Seconds to wait as this gateway knows it, from the digests of a username and an address. */
	knownWait(userDigest: string, addressDigest: string, now = Date.now()): number {
		if (this.locks.size === 0) return 0;
		return Math.max(this.knownLock(`user:${userDigest}`, now), this.knownLock(`addr:${addressDigest}`, now));
	}

	/** Seconds the caller must wait, or 0 when it may try: the shared counters' view, which also corrects this gateway's. */
	async retryAfter(username: string, address: string): Promise<number> {
		const keys = [`user:${this.digest(username)}`, `addr:${this.digest(address)}`];
		const waits = await Promise.all(keys.map((key) => this.counters.ttl(`lock:${key}`)));
		keys.forEach((key, index) => this.heard(key, waits[index]));
		return Math.max(...waits);
	}

	/** A lock another gateway announced, or the shared counters' view of one (0: none). */
	heard(key: string, seconds: number): void {
		if (seconds > 0) this.locks.set(key, Date.now() + seconds * 1000);
		else this.locks.delete(key);
	}

	async recordFailure(username: string, address: string): Promise<void> {
		const { settings } = this;
		const userKey = this.digest(username);
		const failures = await this.counters.increment(`fail:user:${userKey}`, settings.windowSeconds);
		if (failures >= settings.userMaxFailures) {
			// The level remembers earlier lockouts so the wait doubles; it is forgotten after a quiet
			// spell of twice the longest lockout since the LAST lockout (docs/decisions.md).
			const level = await this.counters.increment(
				`level:user:${userKey}`,
				settings.maxLockoutSeconds * 2,
				"latest",
			);
			const seconds = Math.min(settings.lockoutSeconds * 2 ** Math.max(0, level - 1), settings.maxLockoutSeconds);
			await this.lock(`user:${userKey}`, seconds);
			await this.counters.remove(`fail:user:${userKey}`);
		}
		const addressKey = this.digest(address);
		const addressFailures = await this.counters.increment(`fail:addr:${addressKey}`, settings.windowSeconds);
		if (addressFailures >= settings.addressMaxFailures) {
			await this.lock(`addr:${addressKey}`, settings.lockoutSeconds);
			await this.counters.remove(`fail:addr:${addressKey}`);
		}
	}

	async recordSuccess(username: string): Promise<void> {
		await this.counters.remove(`fail:user:${this.digest(username)}`);
	}

	private async lock(key: string, seconds: number): Promise<void> {
		await this.counters.write(`lock:${key}`, 1, seconds);
		this.heard(key, seconds);
		this.announce(key, seconds);
	}

	private knownLock(key: string, now: number): number {
		const until = this.locks.get(key);
		if (until === undefined) return 0;
		if (until > now) return Math.ceil((until - now) / 1000);
		this.locks.delete(key);
		return 0;
	}
}
