import { MemoryCounters } from "../../services/api/counters";
import { LoginThrottle, rateLimitWait } from "../../services/api/login-throttle";

const settings = { userMaxFailures: 3, addressMaxFailures: 5, windowSeconds: 300, lockoutSeconds: 300, maxLockoutSeconds: 3600 };

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
				for (let attempt = 0; attempt < settings.userMaxFailures; attempt++) await throttle.recordFailure("mallory", `10.9.${lockout}.${attempt}`);
				const wait = await throttle.retryAfter("mallory", "10.9.255.1");
				waits.push(wait);
				jest.advanceTimersByTime(wait * 1000 + 1000);
			}
			expect(waits).toEqual([300, 600, 1200, 2400, 3600, 3600, 3600]);
			// A quiet spell of twice the longest lockout: the next lockout is the first one again.
			jest.advanceTimersByTime(settings.maxLockoutSeconds * 2 * 1000 + 1000);
			for (let attempt = 0; attempt < settings.userMaxFailures; attempt++) await throttle.recordFailure("mallory", `10.8.0.${attempt}`);
			expect(await throttle.retryAfter("mallory", "10.9.255.1")).toBe(300);
		} finally {
			jest.useRealTimers();
		}
	});
});

describe("per-caller rate limit", () => {
	test("the request over the limit waits until the next minute", async () => {
		const counters = new MemoryCounters();
		const now = Date.UTC(2026, 0, 1, 0, 0, 30);
		for (let request = 0; request < 3; request++) expect(await rateLimitWait(counters, "user:a", 3, now)).toBe(0);
		expect(await rateLimitWait(counters, "user:a", 3, now)).toBe(30);
		expect(await rateLimitWait(counters, "user:b", 3, now)).toBe(0);
	});
});
