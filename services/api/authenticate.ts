/** Who is calling: HTTP Basic behind the login throttle, or an OAuth access token (docs/internals.md "Credentials and the login throttle"). */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { RegistryError, Unauthenticated } from "../../src/contract/errors";
import type { Caller } from "../../src/contract/model";
import { markAuthenticated } from "../../src/platform/caller-signature";
import { isBearer } from "../../src/oauth/access-tokens";
import type { TokenCallers } from "../../src/oauth/token-callers";
import type { CredentialCache } from "./credential-cache";
import type { LoginThrottle } from "./login-throttle";

/** A verified credential: its caller, and the client addresses it was used from (the address lock spares those). */
export interface VerifiedCredential {
	caller: Caller;
	addresses: Set<string>;
}

/** Addresses remembered per credential; beyond, it starts again (a credential used from many is checked more often). */
const MAX_ADDRESSES = 16;

export function tooManyRequests(retryAfterSeconds: number, message: string): RegistryError {
	return new RegistryError(429, "TooManyRequestsException", message, { retryAfter: retryAfterSeconds });
}

/** `Basic base64(user:password)` → its parts; anything else is a 401. */
function parseBasic(header: string): { username: string; password: string } {
	const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
	if (!match) throw new Unauthenticated("Authorization header must use the Basic scheme");
	const decoded = Buffer.from(match[1], "base64").toString("utf8");
	const colon = decoded.indexOf(":");
	if (colon < 0) throw new Unauthenticated("Malformed Basic credentials");
	return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The credential cache's key: a digest of the username and password, never the password itself. */
function credentialKey(username: string, password: string): string {
	return createHash("sha256").update(username).update("\u0000").update(password).digest("base64");
}

export class Authenticator {
	constructor(
		private readonly credentials: CredentialCache<VerifiedCredential>,
		private readonly throttle: LoginThrottle,
		private readonly verify: (username: string, password: string) => Promise<Caller | null>,
		/** Bearer tokens (decisions §15), where an issuer is configured. */
		private readonly tokens: TokenCallers | null = null,
	) {}

	/** The caller, null without credentials, 401 or 429; no promise when nothing must be asked. */
	authenticate(req: IncomingMessage, address: string, now = Date.now()): Caller | null | Promise<Caller | null> {
		const header = req.headers.authorization;
		if (header === undefined) return null;
		if (this.tokens && isBearer(header)) return this.tokens.callerOf(header, address, now);
		const { username, password } = parseBasic(header);
		const key = credentialKey(username, password);
		const remembered = this.credentials.get(key, now);
		if (!remembered) return this.verified(username, password, key, address);
		const known = remembered.caller;
		if (!known.addresses.has(address)) return this.fromAnotherAddress(known, username, address);
		const wait = this.throttle.knownWait(username, address, true, now);
		if (wait > 0) throw tooManyRequests(wait, "Too many failed logins; try again later");
		if (remembered.refreshAt <= now) this.refresh(username, password, key, known); // one verification at a time (verify)
		return known.caller;
	}

	/** Verifies a credential in use again before it expires, in the background; not a login attempt. */
	private refresh(username: string, password: string, key: string, known: VerifiedCredential): void {
		this.credentials
			.verify(key, async () => {
				const caller = await this.verify(username, password);
				return caller && { caller: markAuthenticated({ ...caller }), addresses: known.addresses };
			})
			.catch(() => undefined); // accounts unreachable: the credential stays remembered until its TTL ends
	}

	/** A credential verified before, from another address: that address's locks decide (no password derived again). */
	private async fromAnotherAddress(known: VerifiedCredential, username: string, address: string): Promise<Caller> {
		const wait = await this.throttle.retryAfter(username, address);
		if (wait > 0) throw tooManyRequests(wait, "Too many failed logins; try again later");
		remember(known, address);
		return known.caller;
	}

	/** A credential to verify: the locks first (no password is derived for a locked-out request), then accounts. */
	private async verified(username: string, password: string, key: string, address: string): Promise<Caller> {
		const wait = await this.throttle.retryAfter(username, address);
		if (wait > 0) throw tooManyRequests(wait, "Too many failed logins; try again later");
		const verified = await this.credentials.verify(key, async () => {
			const caller = await this.verify(username, password);
			return caller && { caller: markAuthenticated({ ...caller }), addresses: new Set<string>() };
		});
		if (!verified) {
			await this.throttle.recordFailure(username, address);
			throw new Unauthenticated("Bad credentials");
		}
		remember(verified, address);
		await this.throttle.recordSuccess(username, address);
		return verified.caller;
	}
}

function remember(credential: VerifiedCredential, address: string): void {
	if (credential.addresses.size >= MAX_ADDRESSES) credential.addresses.clear();
	credential.addresses.add(address);
}
