import { CredentialCache } from "../../services/api/credential-cache";

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
		expect(cache.get("key")).toBe("sp1");
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
		expect(cache.get("key", Date.now() + 500)).toBe("sp1");
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
		expect(cache.get("key")).toBe("sp1");
	});

	test("a verification that throws reaches every waiting request and leaves nothing behind", async () => {
		const cache = new CredentialCache<string>(() => 60_000);
		const failing = () => Promise.reject(new Error("accounts unavailable"));
		await expect(Promise.all([cache.verify("key", failing), cache.verify("key", failing)])).rejects.toThrow("accounts unavailable");
		expect(cache.get("key")).toBeUndefined();
		expect(await cache.verify("key", async () => "sp1")).toBe("sp1");
	});
});
