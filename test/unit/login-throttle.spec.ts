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

describe("failed-login throttling (decisions §3): nobody locks anyone out", () => {
	test("a username is locked at the address that failed, for right and wrong attempts alike; from another address it is not", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), settings);
		for (let attempt = 0; attempt < 2; attempt++) await throttle.recordFailure("alice", "10.0.0.1");
		expect(await throttle.retryAfter("alice", "10.0.0.1")).toBe(0);
		await throttle.recordFailure("alice", "10.0.0.1");
		expect(await throttle.retryAfter("alice", "10.0.0.1")).toBeGreaterThan(290);
		expect(await throttle.retryAfter("alice", "10.0.0.2")).toBe(0);
		expect(await throttle.retryAfter("bob", "10.0.0.1")).toBe(0);
	});

	test("the lockout doubles on repeat", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), { ...settings, addressMaxFailures: 1000 });
		for (let attempt = 0; attempt < 6; attempt++) await throttle.recordFailure("alice", "10.0.0.1");
		expect(await throttle.retryAfter("alice", "10.0.0.1")).toBeGreaterThan(590);
	});

	test("failures of one username from many addresses lock no address's attempts for it", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), { ...settings, addressMaxFailures: 1000 });
		for (let address = 0; address < 50; address++)
			for (let attempt = 0; attempt < 2; attempt++) await throttle.recordFailure("alice", `10.1.0.${address}`);
		expect(await throttle.retryAfter("alice", "10.2.0.1")).toBe(0);
	});

	test("an address is locked after its maximum failures across usernames, for credentials it has not used", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), settings);
		for (let attempt = 0; attempt < 5; attempt++) await throttle.recordFailure(`user${attempt}`, "10.0.0.9");
		expect(await throttle.retryAfter("anyone", "10.0.0.9")).toBeGreaterThan(0);
		expect(await throttle.retryAfter("anyone", "10.0.0.8")).toBe(0);
		// A credential used successfully from there goes on (its username is not locked there).
		expect(throttle.knownWait("carol", "10.0.0.9", true)).toBe(0);
		expect(throttle.knownWait("carol", "10.0.0.9", false)).toBeGreaterThan(0);
	});

	test("a username that logged in from an address before its lock goes on, on every gateway that shares the counters", async () => {
		const counters = new MemoryCounters();
		const gatewayA = new LoginThrottle(counters, settings);
		const gatewayB = new LoginThrottle(counters, settings);
		await gatewayA.recordSuccess("carol", "10.0.0.7");
		for (let attempt = 0; attempt < 5; attempt++) await gatewayA.recordFailure(`user${attempt}`, "10.0.0.7");
		expect(await gatewayB.retryAfter("carol", "10.0.0.7")).toBe(0);
		expect(await gatewayB.retryAfter("dave", "10.0.0.7")).toBeGreaterThan(0);
		// Its own lock at that address still holds.
		for (let attempt = 0; attempt < 3; attempt++) await gatewayB.recordFailure("carol", "10.0.0.7");
		expect(await gatewayA.retryAfter("carol", "10.0.0.7")).toBeGreaterThan(0);
	});

	test("a success clears the failure count of the username at that address", async () => {
		const throttle = new LoginThrottle(new MemoryCounters(), settings);
		await throttle.recordFailure("alice", "a");
		await throttle.recordFailure("alice", "a");
		await throttle.recordSuccess("alice", "a");
		await throttle.recordFailure("alice", "a");
		expect(await throttle.retryAfter("alice", "a")).toBe(0);
	});

	test("under a sustained attack the lockout stays at its maximum: the level is forgotten after a quiet spell since the last lockout, not the first", async () => {
		jest.useFakeTimers({ now: new Date("2026-11-24T00:00:00Z") });
		try {
			const throttle = new LoginThrottle(new MemoryCounters(), { ...settings, addressMaxFailures: 1_000_000 });
			const waits: number[] = [];
			// Lockouts of 300, 600, 1200, 2400, 3600, 3600, 3600 s: 3 h 20 min, longer than the level's 2 h.
			for (let lockout = 0; lockout < 7; lockout++) {
				for (let attempt = 0; attempt < settings.userMaxFailures; attempt++)
					await throttle.recordFailure("mallory", "10.9.0.1");
				const wait = await throttle.retryAfter("mallory", "10.9.0.1");
				waits.push(wait);
				jest.advanceTimersByTime(wait * 1000 + 1000);
			}
			expect(waits).toEqual([300, 600, 1200, 2400, 3600, 3600, 3600]);
			// A quiet spell of twice the longest lockout: the next lockout is the first one again.
			jest.advanceTimersByTime(settings.maxLockoutSeconds * 2 * 1000 + 1000);
			for (let attempt = 0; attempt < settings.userMaxFailures; attempt++)
				await throttle.recordFailure("mallory", "10.9.0.1");
			expect(await throttle.retryAfter("mallory", "10.9.0.1")).toBe(300);
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
		expect(throttle.knownWait("alice", "10.0.0.1", true)).toBeGreaterThan(290);
		expect(throttle.knownWait("alice", "10.0.0.2", true)).toBe(0);
		expect(announced).toHaveLength(1);
		expect(announced[0][0]).not.toContain("alice");
		const other = new LoginThrottle(new MemoryCounters(), settings);
		expect(other.knownWait("alice", "10.0.0.1", true)).toBe(0);
		other.heard(announced[0][0], announced[0][1]);
		expect(other.knownWait("alice", "10.0.0.1", true)).toBeGreaterThan(290);
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
