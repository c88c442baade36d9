/**
 * The issuer's signing keys (decisions §15): its metadata names `jwks_uri` (RFC 8414, else
 * OpenID discovery); jose's remote key set caches the keys and fetches them again for an unknown
 * `kid`, at most once every OAUTH_KEYS_REFRESH_SECONDS. Until the first fetch succeeds (the
 * issuer unreachable at start) every token is refused and the gateway retries in the background.
 */
import { createRemoteJWKSet, type JWTVerifyGetKey } from "jose";
import { checkedUrl, type OAuthSettings } from "./settings";

/** One metadata or key request gives up after this long: a request waiting for keys must not hang. */
const FETCH_TIMEOUT_MS = 5000;

type RemoteKeySet = ReturnType<typeof createRemoteJWKSet>;

/** RFC 8414 §3: `/.well-known/oauth-authorization-server` before the issuer's path; OpenID's after it. */
function metadataUrls(issuer: URL): URL[] {
	const path = issuer.pathname.replace(/\/$/, "");
	return [
		new URL(`/.well-known/oauth-authorization-server${path}`, issuer.origin),
		new URL(`${path}/.well-known/openid-configuration`, issuer.origin),
	];
}

/** The issuer's `jwks_uri`, from the first metadata document it publishes (whose `issuer` must be the configured one). */
async function discoverKeysUrl(issuer: string): Promise<URL> {
	for (const url of metadataUrls(new URL(issuer))) {
		const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "error" });
		if (response.status === 404) continue;
		if (!response.ok) throw new Error(`${url.href} answered ${response.status}`);
		const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
		if (metadata.issuer !== issuer) throw new Error(`${url.href} names another issuer`);
		if (typeof metadata.jwks_uri !== "string") throw new Error(`${url.href} names no jwks_uri`);
		return checkedUrl(metadata.jwks_uri, "the issuer's jwks_uri");
	}
	throw new Error(`the issuer publishes no metadata at ${metadataUrls(new URL(issuer))[0].href}`);
}

/** Why a fetch failed, in a line: fetch's own error says only "fetch failed", its cause the code (ECONNREFUSED). */
function problemOf(error: unknown): string {
	const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
	const detail =
		typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : "";
	const message = error instanceof Error ? error.message : String(error);
	return detail ? `${message}: ${detail}` : message;
}

export class IssuerKeys {
	private keySet: RemoteKeySet | null = null;
	private pending: Promise<RemoteKeySet> | null = null;
	private lastAttemptAt = -Infinity;
	private problem = "not fetched yet";
	private retryTimer: NodeJS.Timeout | null = null;

	constructor(
		private readonly settings: OAuthSettings,
		private readonly onUnreachable: (problem: string) => void,
	) {}

	/** Fetches the keys now and, while that fails, again every refresh interval, in the background. */
	start(): void {
		void this.fetchOnce().catch(() => undefined);
		this.retryTimer = setInterval(() => {
			if (!this.keySet) void this.fetchOnce().catch(() => undefined);
		}, this.settings.keysRefreshMs);
		this.retryTimer.unref();
	}

	stop(): void {
		if (this.retryTimer) clearInterval(this.retryTimer);
		this.retryTimer = null;
	}

	/** For readiness details: whether tokens can be verified, and why not. */
	status(): string {
		return this.keySet ? "keys loaded" : `issuer unreachable (${this.problem}); Bearer tokens refused`;
	}

	/** The key lookup for jose; rejects while the keys are unknown (a new attempt at most once per refresh interval). */
	async keys(): Promise<JWTVerifyGetKey> {
		if (this.keySet) return this.keySet;
		if (this.pending) return this.pending;
		if (Date.now() - this.lastAttemptAt < this.settings.keysRefreshMs) throw new Error(this.problem);
		return this.fetchOnce();
	}

	private fetchOnce(): Promise<RemoteKeySet> {
		if (this.pending) return this.pending;
		this.lastAttemptAt = Date.now();
		this.pending = (async () => {
			const keySet = createRemoteJWKSet(await discoverKeysUrl(this.settings.issuer), {
				cooldownDuration: this.settings.keysRefreshMs,
				timeoutDuration: FETCH_TIMEOUT_MS,
			});
			await keySet.reload();
			return (this.keySet = keySet);
		})()
			.catch((error: unknown) => {
				this.problem = problemOf(error);
				this.onUnreachable(this.problem);
				throw error;
			})
			.finally(() => {
				this.pending = null;
			});
		return this.pending;
	}
}
