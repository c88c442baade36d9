/** Failed-login locks no client can turn against another (docs/decisions.md "Failed logins", docs/security.md). */
import { digest, type Counters } from "./counters";

export interface ThrottleSettings {
	userMaxFailures: number;
	addressMaxFailures: number;
	windowSeconds: number;
	lockoutSeconds: number;
	maxLockoutSeconds: number;
}

/** The lock key of a username at an address, and of an address. */
const pairKey = (username: string, address: string) => `user:${digest(`${username}\u0000${address}`)}`;
const addressKey = (address: string) => `addr:${digest(address)}`;

/** How long a username's successful login from an address spares it that address's lock. */
const USED_MEMORY_SECONDS = 7 * 24 * 3600;

export class LoginThrottle {
	/** Lock key → until when, in ms. */
	private readonly locks = new Map<string, number>();

	constructor(
		private readonly counters: Counters,
		private readonly settings: ThrottleSettings,
		/** Tells the other gateways (and the metrics) of a lock this one set. */
		private readonly announce: (key: string, seconds: number, scope: "user" | "address") => void = () => undefined,
	) {}

	/** Seconds to wait, from this gateway's memory, for a credential verified before (its addresses skip that lock). */
	knownWait(username: string, address: string, usedFromAddress: boolean, now = Date.now()): number {
		if (this.locks.size === 0) return 0;
		const pair = this.knownLock(pairKey(username, address), now);
		return usedFromAddress ? pair : Math.max(pair, this.knownLock(addressKey(address), now));
	}

	/** Seconds to wait, from the shared counters (correcting this gateway's memory), for a credential new here. */
	async retryAfter(username: string, address: string): Promise<number> {
		const pair = pairKey(username, address);
		const keys = [pair, addressKey(address)];
		const [pairWait, addressWait] = await Promise.all(keys.map((key) => this.counters.ttl(`lock:${key}`)));
		this.heard(keys[0], pairWait);
		this.heard(keys[1], addressWait);
		if (addressWait === 0 || (await this.counters.ttl(`used:${pair}`)) === 0)
			return Math.max(pairWait, addressWait);
		return pairWait;
	}

	/** A lock another gateway announced, or the shared counters' view of one (0: none). */
	heard(key: string, seconds: number): void {
		if (seconds > 0) this.locks.set(key, Date.now() + seconds * 1000);
		else this.locks.delete(key);
	}

	async recordFailure(username: string, address: string): Promise<void> {
		const { settings } = this;
		const pair = pairKey(username, address);
		if ((await this.counters.increment(`fail:${pair}`, settings.windowSeconds)) >= settings.userMaxFailures) {
			// The level doubles the wait; forgotten after twice the longest lockout since the last one (decisions).
			const level = await this.counters.increment(`level:${pair}`, settings.maxLockoutSeconds * 2, "latest");
			await this.lock(
				pair,
				Math.min(settings.lockoutSeconds * 2 ** Math.max(0, level - 1), settings.maxLockoutSeconds),
				"user",
			);
		}
		const addressLock = addressKey(address);
		const addressFailures = await this.counters.increment(`fail:${addressLock}`, settings.windowSeconds);
		if (addressFailures >= settings.addressMaxFailures)
			await this.lock(addressLock, settings.lockoutSeconds, "address");
	}

	async recordSuccess(username: string, address: string): Promise<void> {
		const pair = pairKey(username, address);
		await Promise.all([
			this.counters.remove(`fail:${pair}`),
			this.counters.mark(`used:${pair}`, USED_MEMORY_SECONDS),
		]);
	}

	/** Locks `key` for `seconds`; its failures count from 0 again. */
	private async lock(key: string, seconds: number, scope: "user" | "address"): Promise<void> {
		await this.counters.mark(`lock:${key}`, seconds);
		this.heard(key, seconds);
		this.announce(key, seconds, scope);
		await this.counters.remove(`fail:${key}`);
	}

	private knownLock(key: string, now: number): number {
		const until = this.locks.get(key);
		if (until === undefined) return 0;
		if (until > now) return Math.ceil((until - now) / 1000);
		this.locks.delete(key);
		return 0;
	}
}
