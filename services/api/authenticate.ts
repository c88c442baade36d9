/**
 * Who is calling (decisions §3): HTTP Basic against the accounts service, behind the login
 * throttle. A verified credential is remembered for AUTH_CACHE_SECONDS under a digest of its
 * username and password (services/api/credential-cache.ts), so a caller's following requests
 * cost no password derivation and no store round trip: only the throttle's locks known in
 * memory are asked. However the header is spelled, one credential is one key.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { RegistryError, Unauthenticated } from "../../src/contract/errors";
import type { Caller } from "../../src/contract/model";
import type { CredentialCache } from "./credential-cache";
import type { LoginThrottle } from "./login-throttle";

/** A verified credential: its caller, and the digest of its username (for the throttle's locks). */
export interface VerifiedCredential {
	caller: Caller;
	userDigest: string;
}

export function tooManyRequests(retryAfterSeconds: number, message: string): RegistryError {
	return new RegistryError(429, "TooManyRequestsException", message, { retryAfter: retryAfterSeconds });
}

/** `Basic base64(user:password)` → its parts; anything else is a 401. */
export function parseBasic(header: string): { username: string; password: string } {
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
	) {}

	/**
	 * The caller, or null without credentials; 401 for wrong ones, 429 while the username or
	 * address is locked out. Without a promise when nothing must be asked (no credentials, or
	 * a remembered one).
	 */
	authenticate(req: IncomingMessage, address: string, now = Date.now()): Caller | null | Promise<Caller | null> {
		const header = req.headers.authorization;
		if (header === undefined) return null;
		const { username, password } = parseBasic(header);
		const key = credentialKey(username, password);
		const known = this.credentials.get(key, now);
		if (!known) return this.verified(username, password, key, address);
		const wait = this.throttle.knownWait(known.userDigest, this.throttle.digest(address), now);
		if (wait > 0) throw tooManyRequests(wait, "Too many failed logins; try again later");
		if (this.credentials.refreshDue(key, now)) this.refresh(username, password, key, known.userDigest);
		return known.caller;
	}

	/**
	 * Verifies a remembered credential again before it expires, without a request waiting for it.
	 * Not a login attempt: the throttle counts nothing; a refusal forgets the credential, so its
	 * next request is verified (and counted) as any other.
	 */
	private refresh(username: string, password: string, key: string, userDigest: string): void {
		this.credentials
			.verify(key, async () => {
				const caller = await this.verify(username, password);
				return caller && { caller, userDigest };
			})
			.catch(() => undefined); // accounts unreachable: the credential stays remembered until its TTL ends
	}

	private async verified(username: string, password: string, key: string, address: string): Promise<Caller> {
		const wait = await this.throttle.retryAfter(username, address);
		if (wait > 0) throw tooManyRequests(wait, "Too many failed logins; try again later");
		const userDigest = this.throttle.digest(username);
		const verified = await this.credentials.verify(key, async () => {
			const caller = await this.verify(username, password);
			return caller && { caller, userDigest };
		});
		if (!verified) {
			await this.throttle.recordFailure(username, address);
			throw new Unauthenticated("Bad credentials");
		}
		await this.throttle.recordSuccess(username);
		return verified.caller;
	}
}
