/** NATS and Redis options and credentials (docs/operations.md "Credentials"); no secret in a log line. */
import fs from "node:fs";
import { connect, credsAuthenticator, nkeyAuthenticator, type ConnectionOptions } from "nats";
import Redis from "ioredis";
import { env, placeholderSecrets, SECRET_PLACEHOLDER } from "../config/settings";
import { refuseClusterKeyProblems } from "./cluster-key";

/** `scheme://user:secret@host` → `scheme://***@host`, for every URL of a comma list (and any text holding one). */
export function redact(text: string): string {
	// Up to the last "@" of the authority: a password may hold an unencoded "@".
	return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s,]*@/gi, "$1***@");
}

/** `new URL`, whose error would quote the input (and so its credentials): the variable is named instead. */
function parseUrl(variable: string, value: string): URL {
	try {
		return new URL(value);
	} catch {
		throw new Error(`${variable} is not a valid URL (its value is not shown: it may hold credentials)`);
	}
}

function readSecretFile(variable: string, file: string): Buffer {
	try {
		return fs.readFileSync(file);
	} catch (error) {
		throw new Error(`${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
	}
}

/** The TLS options of a client certificate setup: CA, certificate and key files (each optional). */
function tlsFiles(
	prefix: "NATS" | "REDIS",
	source: NodeJS.ProcessEnv,
): { ca?: string; cert?: string; key?: string } | null {
	const ca = env(`${prefix}_TLS_CA_FILE`, source);
	const cert = env(`${prefix}_TLS_CERT_FILE`, source);
	const key = env(`${prefix}_TLS_KEY_FILE`, source);
	if (Boolean(cert) !== Boolean(key))
		throw new Error(
			`${prefix}_TLS_CERT_FILE and ${prefix}_TLS_KEY_FILE go together (a client certificate and its key)`,
		);
	if (!ca && !cert) return null;
	return { ...(ca ? { ca } : {}), ...(cert ? { cert, key } : {}) };
}

/** The NATS servers of TRANSPORTER (`nats://…` or `tls://…`, comma-separated) as URLs. */
function natsUrls(transporter: string): URL[] {
	return transporter.split(",").map((server) => {
		const url = parseUrl("TRANSPORTER", server.trim());
		if (url.protocol !== "nats:" && url.protocol !== "tls:")
			throw new Error(`TRANSPORTER must list nats:// (or tls://) URLs, not ${url.protocol}`);
		return url;
	});
}

/** Is TRANSPORTER a NATS one (the registry's distributed mode)? */
export function isNatsTransporter(transporter: string): boolean {
	return /^(nats|tls):\/\//.test(transporter.trim());
}

/** The nats client's options for TRANSPORTER and NATS_*: servers, one way to authenticate, TLS when asked for. */
export function natsConnectionOptions(
	source: NodeJS.ProcessEnv = process.env,
	transporter = env("TRANSPORTER", source),
): ConnectionOptions {
	const urls = natsUrls(transporter);
	const withUser = urls.find((url) => url.username);
	const user = env("NATS_USER", source) || (withUser ? decodeURIComponent(withUser.username) : "");
	const pass = env("NATS_PASSWORD", source) || (withUser ? decodeURIComponent(withUser.password) : "");
	const token = env("NATS_TOKEN", source);
	const credsFile = env("NATS_CREDS_FILE", source);
	const seedFile = env("NATS_NKEY_SEED_FILE", source);
	const ways = [
		credsFile && "NATS_CREDS_FILE",
		seedFile && "NATS_NKEY_SEED_FILE",
		token && "NATS_TOKEN",
		user && "NATS_USER",
	].filter(Boolean);
	if (ways.length > 1)
		throw new Error(`NATS credentials: set one of ${ways.join(", ")} (NATS accepts one way to authenticate)`);
	const options: ConnectionOptions = { servers: urls.map((url) => url.host) };
	if (credsFile)
		options.authenticator = credsAuthenticator(new Uint8Array(readSecretFile("NATS_CREDS_FILE", credsFile)));
	else if (seedFile)
		options.authenticator = nkeyAuthenticator(
			new Uint8Array(readSecretFile("NATS_NKEY_SEED_FILE", seedFile)).filter((byte) => byte > 32),
		);
	else if (token) options.token = token;
	else if (user) Object.assign(options, { user, pass });
	const tls = tlsFiles("NATS", source);
	if (tls || urls.some((url) => url.protocol === "tls:")) {
		options.tls = {
			...(tls?.ca ? { caFile: tls.ca } : {}),
			...(tls?.cert ? { certFile: tls.cert, keyFile: tls.key } : {}),
		};
	}
	return options;
}

/** ioredis options for CACHER (`redis://` or `rediss://`) and REDIS_* (which win over the URL's credentials). */
export function redisConnectionOptions(
	url: string,
	source: NodeJS.ProcessEnv = process.env,
): { host: string; port: number; username?: string; password?: string; db?: number; tls?: object } {
	const parsed = parseUrl("CACHER", url);
	if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")
		throw new Error(`CACHER must be a redis:// or rediss:// URL, not ${parsed.protocol}`);
	const db = Number(parsed.pathname.replace(/^\//, "") || 0);
	const username = env("REDIS_USERNAME", source) || decodeURIComponent(parsed.username);
	const password = env("REDIS_PASSWORD", source) || decodeURIComponent(parsed.password);
	const tls = tlsFiles("REDIS", source);
	return {
		host: parsed.hostname || "127.0.0.1",
		port: Number(parsed.port || 6379),
		...(username ? { username } : {}),
		...(password ? { password } : {}),
		...(Number.isInteger(db) && db > 0 ? { db } : {}),
		...(tls || parsed.protocol === "rediss:"
			? {
					tls: {
						...(tls?.ca ? { ca: readSecretFile("REDIS_TLS_CA_FILE", tls.ca) } : {}),
						...(tls?.cert
							? {
									cert: readSecretFile("REDIS_TLS_CERT_FILE", tls.cert),
									key: readSecretFile("REDIS_TLS_KEY_FILE", tls.key as string),
								}
							: {}),
					},
				}
			: {}),
	};
}

/** A credentials problem: the server refused who we said we are. Its message names the server, never the secret. */
class CredentialsRefused extends Error {}

/** NATS's and Redis's answers to a client they do not accept (never an unreachable server). */
const NATS_REFUSED =
	/authorization violation|authentication (expired|timeout)|user authentication|AUTHORIZATION_VIOLATION/i;
const REDIS_REFUSED = /WRONGPASS|NOAUTH|NOPERM|invalid password|invalid username-password/i;

export function isRedisAuthError(error: unknown): boolean {
	return REDIS_REFUSED.test(String((error as Error)?.message ?? error));
}

/** A placeholder from k8s/secret.yaml is no secret: refused at start, naming the variables, never their values. */
export function refusePlaceholderSecrets(source: NodeJS.ProcessEnv = process.env): void {
	const names = placeholderSecrets(source);
	if (names.length)
		throw new CredentialsRefused(
			`${names.join(", ")} still ${names.length === 1 ? "holds" : "hold"} the placeholder ${SECRET_PLACEHOLDER} of k8s/secret.yaml: set a real secret before starting (docs/operations.md "Credentials")`,
		);
}

/**
 * The start's checks: no placeholder secret, a usable cluster key, and NATS and Redis accepting the
 * credentials, so a refused process says so and exits instead of retrying for ever. Unreachable is not refused.
 */
export async function checkCredentials(source: NodeJS.ProcessEnv = process.env): Promise<void> {
	refusePlaceholderSecrets(source);
	refuseClusterKeyProblems(source);
	const transporter = env("TRANSPORTER", source);
	const cacher = env("CACHER", source);
	const results = await Promise.allSettled([
		isNatsTransporter(transporter) && checkNats(transporter, source),
		cacher && checkRedis(cacher, source),
	]);
	const refused = results.flatMap((result) => (result.status === "rejected" ? [result.reason as Error] : []));
	if (refused.length === 1) throw refused[0];
	if (refused.length) throw new CredentialsRefused(refused.map((error) => error.message).join("; "));
}

async function checkNats(transporter: string, source: NodeJS.ProcessEnv): Promise<void> {
	const options = {
		...natsConnectionOptions(source),
		name: "registry-credentials-check",
		reconnect: false,
		timeout: 5000,
	};
	const connection = await connect(options).catch((error: unknown) => {
		const reason = `${(error as { code?: string })?.code ?? ""} ${(error as Error)?.message ?? error}`;
		if (NATS_REFUSED.test(reason))
			throw new CredentialsRefused(
				`NATS at ${redact(transporter)} refused the registry's credentials (authentication failed: ${(error as Error).message}); check NATS_USER/NATS_PASSWORD, NATS_TOKEN, NATS_CREDS_FILE or NATS_NKEY_SEED_FILE`,
			);
		return null;
	});
	await connection?.close();
}

async function checkRedis(cacher: string, source: NodeJS.ProcessEnv): Promise<void> {
	const client = new Redis({
		...redisConnectionOptions(cacher, source),
		lazyConnect: true,
		enableOfflineQueue: false,
		maxRetriesPerRequest: 0,
		connectTimeout: 3000,
		retryStrategy: () => null,
	});
	// A refusal during the connection's ready check arrives as an error event; the call then only says "Connection is closed".
	let refusal: unknown = null;
	client.on("error", (error) => {
		if (isRedisAuthError(error)) refusal = error;
	});
	try {
		await client.connect();
		await client.ping();
	} catch (failure) {
		const error = isRedisAuthError(failure) ? failure : refusal;
		if (error)
			throw new CredentialsRefused(
				`Redis at ${redact(cacher)} refused the registry's credentials (authentication failed: ${String((error as Error).message).split("\n")[0]}); check REDIS_USERNAME/REDIS_PASSWORD`,
			);
	} finally {
		client.disconnect();
	}
}
