/** The caller carried between services, signed (docs/internals.md "Roles on every call"). */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ServiceBroker } from "moleculer";
import type { Caller } from "../contract/model";
import { keysOf, type ClusterKeys } from "./cluster-key";
import type { RegistryMeta } from "./context";

/** Beyond the request's own timeout: clocks of two nodes may differ by this much. */
export const SIGNATURE_CLOCK_MARGIN_MS = 30_000;
/** moleculer's default when the broker has no requestTimeout (0: none). */
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

const CALLER_FIELDS: ReadonlySet<string> = new Set([
	"username",
	"role",
	"serviceProvider",
	"accessPointProvider",
	"viaToken",
]);

/** The callers this process's gateway authenticated (the very objects: one that arrived over the transporter is a copy). */
const authenticatedHere = new WeakSet<object>();

/** Marks a caller this process authenticated, frozen so that nothing changes it afterwards. */
export function markAuthenticated(caller: Caller): Caller {
	authenticatedHere.add(Object.freeze(caller));
	return caller;
}

export function isAuthenticatedHere(user: unknown): boolean {
	return typeof user === "object" && user !== null && authenticatedHere.has(user);
}

function mac(key: Buffer, fields: unknown[], expiresAt: number): Buffer {
	return createHmac("sha256", key)
		.update(JSON.stringify([...fields, expiresAt]))
		.digest();
}

/** A signature over `fields`, good for a request's lifetime on this broker's cluster. */
function sign(broker: ServiceBroker, fields: unknown[], now: number): string {
	const expiresAt = now + (broker.options.requestTimeout || DEFAULT_REQUEST_TIMEOUT_MS) + SIGNATURE_CLOCK_MARGIN_MS;
	return `${expiresAt}.${mac(keysOf(broker).sealing.callers, fields, expiresAt).toString("base64url")}`;
}

/** Is `signature` one of ours over `fields`, and not expired? (Any key still accepted during a rotation.) */
function verify(keys: ClusterKeys, fields: unknown[], signature: unknown, now: number): boolean {
	if (typeof signature !== "string") return false;
	const dot = signature.indexOf(".");
	const expiresAt = Number(signature.slice(0, dot));
	if (dot < 1 || !Number.isSafeInteger(expiresAt) || expiresAt <= now) return false;
	const given = Buffer.from(signature.slice(dot + 1), "base64url");
	for (const key of keys.accepted) {
		const expected = mac(key.callers, fields, expiresAt);
		if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
	}
	return false;
}

function callerFields(caller: Caller): unknown[] {
	const { username, role, serviceProvider, accessPointProvider, viaToken } = caller;
	return ["caller", username, role, serviceProvider ?? null, accessPointProvider ?? null, viaToken === true];
}

/** The signature of `caller` for calls made from now on this broker's cluster. */
export function signCaller(broker: ServiceBroker, caller: Caller, now = Date.now()): string {
	return sign(broker, callerFields(caller), now);
}

/** Call meta naming `caller`, signed: `broker.call(action, params, { meta: callerMeta(broker, caller) })`. */
export function callerMeta(
	broker: ServiceBroker,
	caller: Caller,
): Required<Pick<RegistryMeta, "user" | "userSignature">> {
	return { user: caller, userSignature: signCaller(broker, caller) };
}

/** Is `user` a caller exactly as `signature` signed it, unexpired? A field no signature covers makes it not one. */
export function isSignedCaller(keys: ClusterKeys, user: unknown, signature: unknown, now = Date.now()): boolean {
	if (typeof user !== "object" || user === null) return false;
	const caller = user as Record<string, unknown>;
	for (const field in caller) if (!CALLER_FIELDS.has(field)) return false;
	if (typeof caller.username !== "string" || typeof caller.role !== "string") return false;
	for (const link of ["serviceProvider", "accessPointProvider"])
		if (caller[link] !== undefined && typeof caller[link] !== "string") return false;
	if (caller.viaToken !== undefined && caller.viaToken !== true) return false;
	return verify(keys, callerFields(caller as unknown as Caller), signature, now);
}

/** The gateway's signature of an `accounts.authenticate` call for `username` (meta.authenticationSignature). */
export function signAuthentication(broker: ServiceBroker, username: string, now = Date.now()): string {
	return sign(broker, ["authenticate", username], now);
}

export function isSignedAuthentication(broker: ServiceBroker, username: string, signature: unknown): boolean {
	return verify(keysOf(broker), ["authenticate", username], signature, Date.now());
}

/** The gateway's signature of an `accounts.oauthClient` call for `clientId` (a verified token's client, decisions §15). */
export function signClientResolution(broker: ServiceBroker, clientId: string, now = Date.now()): string {
	return sign(broker, ["oauthClient", clientId], now);
}

export function isSignedClientResolution(broker: ServiceBroker, clientId: string, signature: unknown): boolean {
	return verify(keysOf(broker), ["oauthClient", clientId], signature, Date.now());
}
