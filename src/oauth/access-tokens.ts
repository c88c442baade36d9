/**
 * Bearer access tokens (decisions §15, RFC 9068 and RFC 6750): a JWT of the configured issuer,
 * signed with one of its keys by an allowed algorithm, for the configured audience, in its
 * lifetime (60 s of clock skew), holding the configured scope. The answer is the client it names;
 * the gateway finds the account mapped to that client.
 */
import { createHash } from "node:crypto";
import { errors, jwtVerify } from "jose";
import { LRUCache } from "lru-cache";
import { RegistryError } from "../contract/errors";
import type { IssuerKeys } from "./issuer-keys";
import type { OAuthSettings } from "./settings";

/** Never `none` or an HMAC (a public key must not become a shared secret). */
export const TOKEN_ALGORITHMS = ["RS256", "PS256", "ES256"];
const CLOCK_SKEW_SECONDS = 60;
/** Longer tokens are refused unread (an RFC 9068 token of a national provider is under 2 KB). */
export const MAX_TOKEN_LENGTH = 8192;
/** RFC 6750 §2.1 `b64token`. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The RFC 6750 challenges of a refusal; `WWW-Authenticate` carries them (services/api/respond.ts). */
export const INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token"';

export function isBearer(header: string): boolean {
	return /^Bearer(?: |$)/i.test(header);
}

/** 401 with `error="invalid_token"`: the message says what, never anything of the key. */
export function invalidToken(message: string): RegistryError {
	return new RegistryError(401, "AuthenticationException", message, { challenge: INVALID_TOKEN_CHALLENGE });
}

function insufficientScope(scope: string): RegistryError {
	return new RegistryError(403, "AccessDeniedException", `The access token does not hold the scope ${scope}`, {
		challenge: `Bearer error="insufficient_scope", scope="${scope}"`,
	});
}

/** jose's refusal in the client's terms (its own messages may quote claims). */
function reasonOf(error: unknown): string {
	if (error instanceof errors.JWTExpired) return "The access token has expired";
	if (error instanceof errors.JWTClaimValidationFailed) {
		if (error.claim === "nbf" || error.claim === "iat") return "The access token is not valid yet";
		if (error.claim === "iss") return "The access token is of another issuer";
		if (error.claim === "aud") return "The access token is for another audience";
		return `The access token's ${error.claim} claim is not accepted`;
	}
	if (error instanceof errors.JOSEAlgNotAllowed)
		return `The access token's algorithm is not accepted (${TOKEN_ALGORITHMS.join(", ")})`;
	if (error instanceof errors.JWSSignatureVerificationFailed) return "The access token's signature does not verify";
	if (error instanceof errors.JWKSNoMatchingKey)
		return "The access token is signed with a key the issuer does not publish";
	if (
		error instanceof errors.JWKSTimeout ||
		error instanceof errors.JWKSInvalid ||
		!(error instanceof errors.JOSEError)
	)
		return "The issuer's keys are not available; try again later";
	return "The access token is malformed";
}

/** Verified tokens remembered at most; the least recently used goes first (verified again). */
const MAX_VERIFIED = 10_000;

export class AccessTokens {
	/**
	 * Tokens verified lately, by digest, with their client: a signature check costs more than the
	 * rest of a read (decisions §3 lets a verified credential be remembered so). Each is kept for
	 * `rememberMs` at most and never past its own expiry; refusals are never kept.
	 */
	private readonly verified: LRUCache<string, { client: string; until: number }>;

	constructor(
		private readonly settings: OAuthSettings,
		private readonly keys: IssuerKeys,
		private readonly rememberMs: number,
	) {
		this.verified = new LRUCache({ max: MAX_VERIFIED });
	}

	/** The client a `Bearer` Authorization header's token names; 401 (`invalid_token`) or 403 (`insufficient_scope`) otherwise. */
	async clientOf(header: string, now = Date.now()): Promise<string> {
		if (header.length > MAX_TOKEN_LENGTH + 7) throw invalidToken("The access token is too long");
		const token = BEARER.exec(header)?.[1];
		if (!token) throw invalidToken("The access token is malformed");
		const digest = createHash("sha256").update(token).digest("base64url");
		const known = this.verified.get(digest);
		if (known && now < known.until) return known.client;
		const { client, expiresAt } = await this.verify(token);
		this.verified.set(digest, {
			client,
			until: Math.min((expiresAt + CLOCK_SKEW_SECONDS) * 1000, now + this.rememberMs),
		});
		return client;
	}

	/** Forget every verified token (an account changed: its client may no longer act). */
	forget(): void {
		this.verified.clear();
	}

	/** The token checked: its client, and its `exp` (required). */
	private async verify(token: string): Promise<{ client: string; expiresAt: number }> {
		const keys = await this.keys.keys().catch(() => {
			throw invalidToken("The issuer's keys are not available; try again later");
		});
		let payload: Record<string, unknown>;
		try {
			({ payload } = await jwtVerify(token, keys, {
				issuer: this.settings.issuer,
				audience: this.settings.audience,
				algorithms: TOKEN_ALGORITHMS,
				clockTolerance: CLOCK_SKEW_SECONDS,
				requiredClaims: ["exp"],
			}));
		} catch (error) {
			throw invalidToken(reasonOf(error));
		}
		const scopes = typeof payload.scope === "string" ? payload.scope.split(" ") : [];
		if (!scopes.includes(this.settings.scope)) throw insufficientScope(this.settings.scope);
		const client = typeof payload.client_id === "string" ? payload.client_id : payload.sub;
		if (typeof client !== "string" || client === "") throw invalidToken("The access token names no client");
		return { client, expiresAt: payload.exp as number };
	}
}
