/** The OAuth settings (decisions §15) read once from the environment, refused with a clear error when inconsistent. */
import { isIP } from "node:net";
import { env, envNumber } from "../config/settings";

export interface OAuthSettings {
	issuer: string;
	audience: string;
	scope: string;
	/** Shortest interval between two fetches of the issuer's keys (or its metadata while unreachable). */
	keysRefreshMs: number;
}

/** Is `host` (a URL's hostname) a loopback address or name? An `http:` issuer is taken only there. */
export function isLoopback(host: string): boolean {
	const bare = host.replace(/^\[|\]$/g, "");
	if (bare === "localhost") return true;
	if (isIP(bare) === 4) return bare.startsWith("127.");
	return bare === "::1";
}

/** An https URL, or http on a loopback address; anything else refused with `what` named. */
export function checkedUrl(text: string, what: string): URL {
	let url: URL;
	try {
		url = new URL(text);
	} catch {
		throw new Error(`${what} is not a URL: ${text}`);
	}
	if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname)))
		throw new Error(`${what} must be an https URL (http only on a loopback address): ${text}`);
	return url;
}

/** Null without OAUTH_ISSUER (Basic only); throws when the issuer is set without an audience or is not a usable URL. */
export function oauthSettings(source: NodeJS.ProcessEnv = process.env): OAuthSettings | null {
	const issuer = env("OAUTH_ISSUER", source);
	if (!issuer) return null;
	checkedUrl(issuer, "OAUTH_ISSUER");
	const audience = env("OAUTH_AUDIENCE", source);
	if (!audience) throw new Error("OAUTH_AUDIENCE is required when OAUTH_ISSUER is set (the aud tokens must name)");
	const refreshSeconds = envNumber("OAUTH_KEYS_REFRESH_SECONDS", source);
	if (!(refreshSeconds > 0)) throw new Error("OAUTH_KEYS_REFRESH_SECONDS must be a positive number of seconds");
	return { issuer, audience, scope: env("OAUTH_SCOPE", source), keysRefreshMs: refreshSeconds * 1000 };
}
