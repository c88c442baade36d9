import type { IncomingMessage } from "node:http";
import { Authenticator, type VerifiedCredential } from "../../services/api/authenticate";
import { MemoryCounters } from "../../services/api/counters";
import { CredentialCache } from "../../services/api/credential-cache";
import { LoginThrottle } from "../../services/api/login-throttle";
import type { Caller } from "../../src/contract/model";

/** A verification the test settles by hand, counting how often it was started. */
function manualVerifier<T>() {
	let calls = 0;
	let settle: (value: T | null) => void = () => undefined;
	const verify = () => {
		calls++;
		return new Promise<T | null>((resolve) => (settle = resolve));
	};
	return { verify, calls: () => calls, settle: (value: T | null) => settle(value) };
}

describe("CredentialCache", () => {
	test("concurrent requests with the same header share one verification, and the answer is remembered", async () => {
		const cache = new CredentialCache<string>(() => 60_000);
		const verifier = manualVerifier<string>();
		const answers = Array.from({ length: 64 }, () => cache.verify("key", verifier.verify));
		expect(verifier.calls()).toBe(1);
		verifier.settle("sp1");
		expect(await Promise.all(answers)).toEqual(Array(64).fill("sp1"));
		expect(cache.get("key")?.caller).toBe("sp1");
	});

	test("a failed verification is shared by the requests that waited for it but never remembered", async () => {
		const cache = new CredentialCache<string>(() => 60_000);
		const verifier = manualVerifier<string>();
		const both = [cache.verify("key", verifier.verify), cache.verify("key", verifier.verify)];
		verifier.settle(null);
		expect(await Promise.all(both)).toEqual([null, null]);
		expect(cache.get("key")).toBeUndefined();
		void cache.verify("key", verifier.verify);
		expect(verifier.calls()).toBe(2);
	});

	test("a remembered credential expires after its TTL", async () => {
		const cache = new CredentialCache<string>(() => 1000);
		await cache.verify("key", async () => "sp1");
		expect(cache.get("key", Date.now() + 500)?.caller).toBe("sp1");
		expect(cache.get("key", Date.now() + 1500)).toBeUndefined();
		expect(cache.size).toBe(0);
	});

	test("clear() forgets remembered credentials and those still being verified", async () => {
		const cache = new CredentialCache<string>(() => 60_000);
		await cache.verify("old", async () => "sp1");
		const verifier = manualVerifier<string>();
		const inFlight = cache.verify("key", verifier.verify);
		cache.clear();
		expect(cache.get("old")).toBeUndefined();
		// A request after the clear verifies afresh instead of joining the old verification.
		const fresh = manualVerifier<string>();
		const after = cache.verify("key", fresh.verify);
		expect(fresh.calls()).toBe(1);
		verifier.settle("revoked-sp1");
		expect(await inFlight).toBe("revoked-sp1");
		expect(cache.get("key")).toBeUndefined();
		fresh.settle("sp1");
		expect(await after).toBe("sp1");
		expect(cache.get("key")?.caller).toBe("sp1");
	});

	test("a verification that throws reaches every waiting request and leaves nothing behind", async () => {
		const cache = new CredentialCache<string>(() => 60_000);
		const failing = () => Promise.reject(new Error("accounts unavailable"));
		await expect(Promise.all([cache.verify("key", failing), cache.verify("key", failing)])).rejects.toThrow(
			"accounts unavailable",
		);
		expect(cache.get("key")).toBeUndefined();
		expect(await cache.verify("key", async () => "sp1")).toBe("sp1");
	});

	test("in the last fifth of its TTL a remembered credential is due for re-verification; one runs at a time; a successful one renews it", async () => {
		let ttl = 1000;
		const cache = new CredentialCache<string>(() => ttl);
		const before = Date.now();
		await cache.verify("key", async () => "sp1");
		const start = Date.now();
		const refreshAt = cache.get("key", start)!.refreshAt;
		expect(refreshAt).toBeGreaterThanOrEqual(before + 800);
		expect(refreshAt).toBeLessThanOrEqual(start + 800);
		const verifier = manualVerifier<string>();
		const renewal = cache.verify("key", verifier.verify);
		// Still answered while the re-verification runs, and a second one joins it instead of starting.
		expect(cache.get("key", start + 850)?.caller).toBe("sp1");
		const second = jest.fn(async () => "sp1");
		expect(cache.verify("key", second)).toBe(renewal);
		expect(second).not.toHaveBeenCalled();
		ttl = 60_000;
		verifier.settle("sp1");
		await renewal;
		const renewed = cache.get("key", start + 5000);
		expect(renewed?.caller).toBe("sp1");
		expect(renewed!.refreshAt).toBeGreaterThan(start + 5000);
	});

	test("a re-verification that refuses forgets the credential", async () => {
		const cache = new CredentialCache<string>(() => 1000);
		await cache.verify("key", async () => "sp1");
		expect(await cache.verify("key", async () => null)).toBeNull();
		expect(cache.get("key")).toBeUndefined();
	});

	test("a request whose remembered credential is near its end is answered at once and renews it in the background, once", async () => {
		jest.useFakeTimers({ doNotFake: ["nextTick", "setImmediate", "queueMicrotask"] });
		try {
			const caller: Caller = {
				username: "sp1",
				role: "SERVICE_PROVIDER",
				serviceProvider: "11111111-0000-4000-8000-000000000001",
			} as Caller;
			let verifications = 0;
			const cache = new CredentialCache<VerifiedCredential>(() => 10_000);
			const throttle = new LoginThrottle(new MemoryCounters(), {
				userMaxFailures: 10,
				addressMaxFailures: 200,
				windowSeconds: 300,
				lockoutSeconds: 300,
				maxLockoutSeconds: 3600,
			});
			const authenticator = new Authenticator(cache, throttle, async () => {
				verifications++;
				return caller;
			});
			const req = {
				headers: { authorization: `Basic ${Buffer.from("sp1:sp1-demo-password").toString("base64")}` },
				socket: {},
			} as unknown as IncomingMessage;
			expect(await authenticator.authenticate(req, "127.0.0.1")).toEqual(caller);
			expect(verifications).toBe(1);
			jest.setSystemTime(Date.now() + 9_000);
			// Answered without a promise (nothing waited for), and one re-verification started for both requests.
			expect(authenticator.authenticate(req, "127.0.0.1")).toEqual(caller);
			expect(authenticator.authenticate(req, "127.0.0.1")).toEqual(caller);
			await new Promise((resolve) => setImmediate(resolve));
			expect(verifications).toBe(2);
			// Renewed: still remembered past the first verification's end.
			jest.setSystemTime(Date.now() + 5_000);
			expect(authenticator.authenticate(req, "127.0.0.1")).toEqual(caller);
			expect(verifications).toBe(2);
		} finally {
			jest.useRealTimers();
		}
	});
});
