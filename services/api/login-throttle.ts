/**
 * Brute-force protection for Basic auth (decisions §3). Per username (known or not):
 * `userMaxFailures` failures within the window lock it for `lockoutSeconds`, doubling on
 * repeat up to `maxLockoutSeconds`; while locked every attempt, right or wrong, is 429, so
 * a guess teaches nothing. Per client address: `addressMaxFailures` failures within the
 * window give that address 429 on every request with credentials for `lockoutSeconds`.
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

/** Keys never hold a raw username (it may be a mistyped password). */
function digest(value: string): string {
	return createHash("sha256").update(value).digest("base64url").slice(0, 22);
}

export class LoginThrottle {
	constructor(
		private readonly counters: Counters,
		private readonly settings: ThrottleSettings,
	) {}

	/** Seconds the caller must wait, or 0 when it may try. */
	async retryAfter(username: string, address: string): Promise<number> {
		const [user, addr] = await Promise.all([
			this.counters.ttl(`lock:user:${digest(username)}`),
			this.counters.ttl(`lock:addr:${digest(address)}`),
		]);
		return Math.max(user, addr);
	}

	async recordFailure(username: string, address: string): Promise<void> {
		const { settings } = this;
		const userKey = digest(username);
		const failures = await this.counters.increment(`fail:user:${userKey}`, settings.windowSeconds);
		if (failures >= settings.userMaxFailures) {
			// The level remembers earlier lockouts so the wait doubles; it is forgotten after a quiet
			// spell of twice the longest lockout since the LAST lockout: counted from the first, a
			// sustained attack fell back to the shortest lockout.
			const level = await this.counters.increment(`level:user:${userKey}`, settings.maxLockoutSeconds * 2, "latest");
			const seconds = Math.min(settings.lockoutSeconds * 2 ** Math.max(0, level - 1), settings.maxLockoutSeconds);
			await this.counters.write(`lock:user:${userKey}`, 1, seconds);
			await this.counters.remove(`fail:user:${userKey}`);
		}
		const addressKey = digest(address);
		const addressFailures = await this.counters.increment(`fail:addr:${addressKey}`, settings.windowSeconds);
		if (addressFailures >= settings.addressMaxFailures) {
			await this.counters.write(`lock:addr:${addressKey}`, 1, settings.lockoutSeconds);
			await this.counters.remove(`fail:addr:${addressKey}`);
		}
	}

	async recordSuccess(username: string): Promise<void> {
		await this.counters.remove(`fail:user:${digest(username)}`);
	}
}

/** Per-caller rate limit (RATE_LIMIT requests per minute); returns seconds to wait, or 0. */
export async function rateLimitWait(counters: Counters, callerKey: string, perMinute: number, now = Date.now()): Promise<number> {
	const minute = Math.floor(now / 60000);
	const count = await counters.increment(`rate:${digest(callerKey)}:${minute}`, 61);
	if (count <= perMinute) return 0;
	return Math.max(1, Math.ceil(((minute + 1) * 60000 - now) / 1000));
}
