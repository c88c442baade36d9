/**
 * The caller carried between services, signed (src/platform/caller-signature.ts): a signature
 * holds only for the caller it was made for, with a key the cluster accepts, until it expires.
 */
import { ServiceBroker } from "moleculer";
import { createBroker } from "../../src/platform/broker";
import {
	callerMeta,
	isSignedAuthentication,
	isSignedCaller,
	signAuthentication,
	signCaller,
	SIGNATURE_CLOCK_MARGIN_MS,
} from "../../src/platform/caller-signature";
import { clusterKeys, keysOf } from "../../src/platform/cluster-key";
import type { Caller } from "../../src/contract/model";

const KEY = "a-cluster-key-for-the-signature-tests-0123456789";
const SP1: Caller = {
	username: "sp1",
	role: "SERVICE_PROVIDER",
	serviceProvider: "11111111-0000-4000-8000-000000000001",
};
const env = (key: string) => ({ CLUSTER_KEY: key, NAMESPACE: "signatures", REQUEST_TIMEOUT: "10000" });
const broker = createBroker({ env: env(KEY), overrides: { logger: false } });
const keys = keysOf(broker);

test("a signed caller verifies, with its expiry a request's lifetime from now", () => {
	const now = Date.now();
	const signature = signCaller(broker, SP1, now);
	expect(isSignedCaller(keys, SP1, signature, now)).toBe(true);
	expect(Number(signature.split(".")[0])).toBe(now + 10000 + SIGNATURE_CLOCK_MARGIN_MS);
	expect(callerMeta(broker, SP1)).toEqual({ user: SP1, userSignature: expect.any(String) });
	// It crosses the transporter as JSON.
	expect(isSignedCaller(keys, JSON.parse(JSON.stringify(SP1)), signature, now)).toBe(true);
});

test("a changed caller, an added field, an unsigned or malformed signature is refused", () => {
	const signature = signCaller(broker, SP1);
	expect(isSignedCaller(keys, { ...SP1, role: "ADMIN" }, signature)).toBe(false);
	expect(isSignedCaller(keys, { ...SP1, serviceProvider: "22222222-0000-4000-8000-000000000001" }, signature)).toBe(
		false,
	);
	expect(isSignedCaller(keys, { ...SP1, accessPointProvider: "x" }, signature)).toBe(false);
	expect(isSignedCaller(keys, { ...SP1, admin: true }, signature)).toBe(false);
	for (const bad of [undefined, "", "abc", `${Date.now() + 60000}.`, `${Date.now() + 60000}.${"A".repeat(43)}`])
		expect(isSignedCaller(keys, SP1, bad)).toBe(false);
	// The expiry is signed too: a later one does not verify.
	const [expiresAt, mac] = signature.split(".");
	expect(isSignedCaller(keys, SP1, `${Number(expiresAt) + 60000}.${mac}`)).toBe(false);
});

test("an expired signature is refused", () => {
	const longAgo = Date.now() - 10 * 60_000;
	expect(isSignedCaller(keys, SP1, signCaller(broker, SP1, longAgo))).toBe(false);
});

test("another cluster's key does not verify; during a rotation both keys do", () => {
	const other = createBroker({ env: env("another-key-of-another-cluster-0123456789"), overrides: { logger: false } });
	expect(isSignedCaller(keys, SP1, signCaller(other, SP1))).toBe(false);
	const rotating = clusterKeys({ ...env("another-key-of-another-cluster-0123456789"), CLUSTER_KEY_PREVIOUS: KEY });
	expect(isSignedCaller(rotating, SP1, signCaller(broker, SP1))).toBe(true);
	expect(isSignedCaller(rotating, SP1, signCaller(other, SP1))).toBe(true);
});

test("a broker not built by createBroker signs with the process's key", () => {
	const plain = new ServiceBroker({ logger: false });
	expect(isSignedCaller(keysOf(plain), SP1, signCaller(plain, SP1))).toBe(true);
});

test("a gateway's authentication signature holds for its username only", () => {
	const signature = signAuthentication(broker, "sp1");
	expect(isSignedAuthentication(broker, "sp1", signature)).toBe(true);
	expect(isSignedAuthentication(broker, "admin", signature)).toBe(false);
	expect(isSignedAuthentication(broker, "sp1", undefined)).toBe(false);
	// A caller's signature is not an authentication's, nor the other way round.
	expect(isSignedAuthentication(broker, "sp1", signCaller(broker, SP1))).toBe(false);
	expect(isSignedAuthentication(broker, "sp1", signAuthentication(broker, "sp1", Date.now() - 10 * 60_000))).toBe(
		false,
	);
});
