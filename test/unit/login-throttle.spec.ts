import { MemoryCounters } from "../../services/api/counters";
import { LoginThrottle } from "../../services/api/login-throttle";
import { RateLimiter } from "../../services/api/rate-limit";

const settings = {
	userMaxFailures: 3,
	addressMaxFailures: 5,
	windowSeconds: 300,
	lockoutSeconds: 300,
	maxLockoutSeconds: 3600,
};

describe("failed-login throttling (decisions §3)", () => {
	test("a username is locked after the maximum failures, for right and wrong attempts alike", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), settings);
		for (let attempt = 0; attempt < 2; attempt++) await throttle.recordFailure("alice", "10.0.0.1");
		expect(await throttle.retryAfter("alice", "10.0.0.2")).toBe(0);
		await throttle.recordFailure("alice", "10.0.0.1");
		expect(await throttle.retryAfter("alice", "10.0.0.2")).toBeGreaterThan(290);
		expect(await throttle.retryAfter("bob", "10.0.0.2")).toBe(0);
	});

	test("the lockout doubles on repeat", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), { ...settings, addressMaxFailures: 1000 });
		for (let attempt = 0; attempt < 6; attempt++) await throttle.recordFailure("alice", "10.0.0.1");
		expect(await throttle.retryAfter("alice", "x")).toBeGreaterThan(590);
	});

	test("an address is locked after its maximum failures across usernames", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), settings);
		for (let attempt = 0; attempt < 5; attempt++) await throttle.recordFailure(`user${attempt}`, "10.0.0.9");
		expect(await throttle.retryAfter("anyone", "10.0.0.9")).toBeGreaterThan(0);
		expect(await throttle.retryAfter("anyone", "10.0.0.8")).toBe(0);
	});

	test("a success clears the failure count", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), settings);
		await throttle.recordFailure("alice", "a");
		await throttle.recordFailure("alice", "a");
		await throttle.recordSuccess("alice");
		await throttle.recordFailure("alice", "a");
		expect(await throttle.retryAfter("alice", "b")).toBe(0);
	});

	test("under a sustained attack the lockout stays at its maximum: the level is forgotten after a quiet spell since the last lockout, not the first", async () => {
		jest.useFakeTimers({ now: new Date("2026-11-24T00:00:00Z") });
		try {
			const throttle = new LoginThrottle(new MemoryCounters(), settings);
			const waits: number[] = [];
			// Lockouts of 300, 600, 1200, 2400, 3600, 3600, 3600 s: 3 h 20 min, longer than the level's 2 h.
			for (let lockout = 0; lockout < 7; lockout++) {
				for (let attempt = 0; attempt < settings.userMaxFailures; attempt++)
					await throttle.recordFailure("mallory", `10.9.${lockout}.${attempt}`);
				const wait = await throttle.retryAfter("mallory", "10.9.255.1");
				waits.push(wait);
				jest.advanceTimersByTime(wait * 1000 + 1000);
			}
			expect(waits).toEqual([300, 600, 1200, 2400, 3600, 3600, 3600]);
			// A quiet spell of twice the longest lockout: the next lockout is the first one again.
			jest.advanceTimersByTime(settings.maxLockoutSeconds * 2 * 1000 + 1000);
			for (let attempt = 0; attempt < settings.userMaxFailures; attempt++)
				await throttle.recordFailure("mallory", `10.8.0.${attempt}`);
			expect(await throttle.retryAfter("mallory", "10.9.255.1")).toBe(300);
		} finally {
			jest.useRealTimers();
		}
	});
});

describe("a lock is known without asking the store", () => {
	test("a lock this gateway set, or heard of, is known in memory; an unknown one is not", async () => {
		const announced: [string, number][] = [];
		const throttle = new LoginThrottle(new MemoryCounters(), settings, (key, seconds) =>
			announced.push([key, seconds]),
		);
		for (let attempt = 0; attempt < 3; attempt++) await throttle.recordFailure("alice", "10.0.0.1");
		expect(throttle.knownWait(throttle.digest("alice"), throttle.digest("10.0.0.2"))).toBeGreaterThan(290);
		expect(announced).toEqual([[`user:${throttle.digest("alice")}`, 300]]);
		const other = new LoginThrottle(new MemoryCounters(), settings);
		expect(other.knownWait(other.digest("alice"), other.digest("10.0.0.2"))).toBe(0);
		other.heard(announced[0][0], announced[0][1]);
		expect(other.knownWait(other.digest("alice"), other.digest("10.0.0.2"))).toBeGreaterThan(290);
	});
});

describe("per-caller rate limit (a token bucket per caller)", () => {
	test("a caller may spend the limit at once; the next request waits until a token is back", () => {
		const limiter = new RateLimiter({ perMinute: 3 });
		const now = Date.UTC(2026, 0, 1, 0, 0, 30);
		for (let request = 0; request < 3; request++) expect(limiter.take("user", "a", now)).toBe(0);
		expect(limiter.take("user", "a", now)).toBe(20);
		expect(limiter.take("user", "b", now)).toBe(0);
	});

	test("tokens come back at the limit's rate, up to the limit", () => {
		const limiter = new RateLimiter({ perMinute: 60 });
		const start = Date.UTC(2026, 0, 1);
		for (let request = 0; request < 60; request++) expect(limiter.take("user", "a", start)).toBe(0);
		expect(limiter.take("user", "a", start)).toBe(1);
		expect(limiter.take("user", "a", start + 1000)).toBe(0);
		expect(limiter.take("user", "a", start + 1000)).toBe(1);
		const later = start + 10 * 60_000;
		for (let request = 0; request < 60; request++) expect(limiter.take("user", "a", later)).toBe(0);
		expect(limiter.take("user", "a", later)).toBeGreaterThan(0);
	});
});
