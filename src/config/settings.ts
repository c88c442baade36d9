/**
 * Every environment variable the registry reads, in one place, with its default
 * (decisions §1, architecture "Configuration"). moleculer.config.ts, the services,
 * docker-compose.yml and k8s/ all follow this list; test/unit/deploy.spec.ts checks that
 * they agree.
 */
export interface EnvVar {
	name: string;
	default: string;
	description: string;
	/** A credential (or a path to one): it belongs in the Secret, never in the ConfigMap, and is never logged. */
	secret?: boolean;
}

export const ENV_VARS: EnvVar[] = [
	{
		name: "PORT",
		default: "3000",
		description:
			"HTTP port: the gateway's API (a lookup node's lookups), and /health/live, /health/ready and /metrics unless OPERATIONS_PORT is set",
	},
	{
		name: "OPERATIONS_PORT",
		default: "",
		description:
			"A port of its own for /health/live, /health/ready and /metrics, not answered on PORT then (Kubernetes: a port the ingress does not route, decisions §10)",
	},
	{
		name: "NODE_ID",
		default: "",
		description: "Moleculer node ID (default: host name and process ID); Kubernetes sets the pod name",
	},
	{
		name: "DATA_DIR",
		default: "./data",
		description: "Directory of the embedded store (one SQLite file per service); ':memory:' keeps nothing",
	},
	{
		name: "SMP_KEY_FILE",
		default: "",
		description:
			"Private key (PEM) that signs the SMP answers, with SMP_CERTIFICATE_FILE; unset: a self-signed pair made under DATA_DIR (not for production)",
		secret: true,
	},
	{
		name: "SMP_CERTIFICATE_FILE",
		default: "",
		description: "Certificate (PEM) of SMP_KEY_FILE, published in every signed SMP answer",
		secret: true,
	},
	{
		name: "SMP_PUBLIC_URL",
		default: "",
		description:
			"The registry's address as the network reaches it (https://smp.example.org), for the links in SMP service groups; unset: http:// and the request's Host",
	},
	{
		name: "MONGO_URI",
		default: "",
		description: "mongodb://… selects MongoDB (mongoose) instead of the embedded store; carries its credentials",
		secret: true,
	},
	{
		name: "TRANSPORTER",
		default: "",
		description:
			"nats://… (or tls://…) runs the services over NATS; unset: one process, in-process transporter. May carry user:password (then keep it in the Secret)",
	},
	{
		name: "NATS_USER",
		default: "",
		description: "NATS user name (with NATS_PASSWORD); wins over a user in TRANSPORTER",
		secret: true,
	},
	{ name: "NATS_PASSWORD", default: "", description: "NATS password of NATS_USER", secret: true },
	{ name: "NATS_TOKEN", default: "", description: "NATS authentication token (instead of a user)", secret: true },
	{
		name: "NATS_CREDS_FILE",
		default: "",
		description:
			"Path of a NATS credentials file (JWT and NKey seed, decentralized auth), e.g. mounted from the Secret",
		secret: true,
	},
	{
		name: "NATS_NKEY_SEED_FILE",
		default: "",
		description: "Path of a file holding the NKey seed (SU…) NATS knows this registry by",
		secret: true,
	},
	{
		name: "NATS_TLS_CA_FILE",
		default: "",
		description: "CA certificate (PEM) that signed the NATS server's certificate; turns TLS on",
		secret: true,
	},
	{
		name: "NATS_TLS_CERT_FILE",
		default: "",
		description: "Client certificate (PEM) for NATS mutual TLS, with NATS_TLS_KEY_FILE",
		secret: true,
	},
	{ name: "NATS_TLS_KEY_FILE", default: "", description: "Private key (PEM) of NATS_TLS_CERT_FILE", secret: true },
	{
		name: "CLUSTER_KEY",
		default: "",
		description:
			"The key every process of a cluster shares (at least 32 characters: openssl rand -base64 48): transporter packets and channel messages are sealed with keys derived from it, callers signed; required with TRANSPORTER",
		secret: true,
	},
	{
		name: "CLUSTER_KEY_PREVIOUS",
		default: "",
		description:
			'During a rotation, the key being replaced: still the one sealed and signed with, and CLUSTER_KEY accepted beside it (docs/operations.md "Rotating the cluster key")',
		secret: true,
	},
	{
		name: "CACHER",
		default: "",
		description:
			"redis://… (or rediss://… for TLS) uses the Redis cacher (ioredis); unset: in-memory cache. May carry user:password (then keep it in the Secret)",
	},
	{
		name: "REDIS_USERNAME",
		default: "",
		description: "Redis ACL user (Redis 6+); wins over a user in CACHER",
		secret: true,
	},
	{
		name: "REDIS_PASSWORD",
		default: "",
		description: "Redis password (requirepass, or the ACL user's); wins over one in CACHER",
		secret: true,
	},
	{
		name: "REDIS_TLS_CA_FILE",
		default: "",
		description: "CA certificate (PEM) that signed the Redis server's certificate; turns TLS on",
		secret: true,
	},
	{
		name: "REDIS_TLS_CERT_FILE",
		default: "",
		description: "Client certificate (PEM) for Redis mutual TLS, with REDIS_TLS_KEY_FILE",
		secret: true,
	},
	{ name: "REDIS_TLS_KEY_FILE", default: "", description: "Private key (PEM) of REDIS_TLS_CERT_FILE", secret: true },
	{
		name: "SERVICES",
		default: "api,catalog,participants,accessPoints,lookup,accounts,audit,network",
		description: "Comma list of the services this process runs",
	},
	{
		name: "NAMESPACE",
		default: "",
		description:
			"Moleculer namespace: nodes only see nodes of the same namespace; also the Redis key prefix and the JetStream stream name suffix",
	},
	{ name: "LOG_LEVEL", default: "info", description: "fatal, error, warn, info, debug or trace" },
	{ name: "REGISTRY_SEED", default: "", description: "Seed file imported at start-up (idempotent upsert)" },
	{
		name: "REQUEST_TIMEOUT",
		default: "10000",
		description: "Milliseconds before a call to a service gives up (503)",
	},
	{
		name: "RATE_LIMIT",
		default: "",
		description: "Requests per minute per account (or per address when anonymous); unset: no limit",
	},
	{
		name: "RATE_LIMIT_SYNC_MS",
		default: "500",
		description: "How often a gateway shares its callers' rate-limit spending with the other gateways (Redis)",
	},
	{
		name: "TRUST_PROXY",
		default: "",
		description: "Comma list of addresses or CIDR ranges of reverse proxies whose X-Forwarded-For is trusted",
	},
	{ name: "DEFAULT_PHONE_REGION", default: "NO", description: "Region of phone numbers given without a leading +" },
	{
		name: "REGISTRY_COUNTRY",
		default: "NO",
		description:
			"Country (ISO 3166-1 alpha-2) of the organizations registered here: the CountryCode of their Peppol Directory business cards",
	},
	{
		name: "AUTH_USER_MAX_FAILURES",
		default: "10",
		description: "Failed logins per username within the window before a lockout",
	},
	{
		name: "AUTH_ADDRESS_MAX_FAILURES",
		default: "200",
		description: "Failed logins per client address within the window before a lockout",
	},
	{ name: "AUTH_WINDOW_SECONDS", default: "300", description: "Window in which failed logins are counted" },
	{
		name: "AUTH_LOCKOUT_SECONDS",
		default: "300",
		description: "First lockout; doubles on repeat up to AUTH_MAX_LOCKOUT_SECONDS",
	},
	{ name: "AUTH_MAX_LOCKOUT_SECONDS", default: "3600", description: "Longest lockout" },
	{
		name: "AUTH_CACHE_SECONDS",
		default: "60",
		description: "How long a verified credential is remembered by a gateway",
	},
	{
		name: "OAUTH_ISSUER",
		default: "",
		description:
			"OAuth 2.0 issuer whose JWT access tokens the API takes beside Basic (decisions §15); http: only on a loopback address; unset: Basic only",
	},
	{
		name: "OAUTH_AUDIENCE",
		default: "",
		description: "The audience (aud) a token must name; required with OAUTH_ISSUER",
	},
	{
		name: "OAUTH_SCOPE",
		default: "registry",
		description: "The scope a token must hold (else 403 insufficient_scope)",
	},
	{
		name: "OAUTH_KEYS_REFRESH_SECONDS",
		default: "60",
		description:
			"Shortest interval between two fetches of the issuer's keys (a token with an unknown kid asks again)",
	},
	{
		name: "PARTICIPANT_SWEEP_INTERVAL_SECONDS",
		default: "3600",
		description: "How often participants whose deleteDate has come are removed",
	},
	{
		name: "PROCESS_REPLACEMENT_BATCH_SIZE",
		default: "100",
		description: "Participants per batch of a process replacement job",
	},
	{
		name: "PROCESS_REPLACEMENT_BATCH_DELAY_MS",
		default: "0",
		description: "Pause before each batch of a process replacement job (spares a busy registry)",
	},
	{
		name: "IDEMPOTENCY_KEYS_PER_CALLER",
		default: "1000",
		description:
			"Live Idempotency-Key records kept per caller (24 hours each); a caller's next key makes its oldest go",
	},
	{
		name: "SML_URL",
		default: "",
		description:
			"The SML's base address (https://…/edelivery-sml): the registry keeps the SML's list of its participants equal to its own (decisions §14); unset: no SML",
	},
	{
		name: "SML_SMP_ID",
		default: "",
		description: "This registry's SMP identifier in the SML; required with SML_URL",
	},
	{
		name: "SML_PHYSICAL_ADDRESS",
		default: "",
		description:
			"The SMP's IPv4 address registered in the SML (required with SML_URL); the logical address is SMP_PUBLIC_URL",
	},
	{
		name: "SML_CLIENT_KEY_FILE",
		default: "",
		description:
			"Private key (PEM) of the SMP's client certificate for the SML (and the Directory unless it has its own)",
		secret: true,
	},
	{
		name: "SML_CLIENT_CERTIFICATE_FILE",
		default: "",
		description: "Client certificate (PEM) of SML_CLIENT_KEY_FILE: the SMP's certificate the SML knows",
		secret: true,
	},
	{
		name: "SML_CA_FILE",
		default: "",
		description:
			"CA certificates (PEM) the SML's and the Directory's server certificates are checked against; unset: the system's",
		secret: true,
	},
	{
		name: "SML_ZONE",
		default: "participant.sml.prod.tech.peppol.org",
		description:
			"The SML's DNS zone, for the participants' DNS names (test SML: participant.sml.test.tech.peppol.org)",
	},
	{
		name: "SML_SYNC_INTERVAL",
		default: "3600",
		description:
			"Seconds between reconciliations with the SML's list (0: only at start and by `registry sml sync`)",
	},
	{
		name: "DIRECTORY_URL",
		default: "",
		description:
			"The Peppol Directory's base address: told of every business card change (decisions §14); unset: not told",
	},
	{
		name: "DIRECTORY_CLIENT_KEY_FILE",
		default: "",
		description: "Private key (PEM) of the client certificate for the Directory; unset: the SML's",
		secret: true,
	},
	{
		name: "DIRECTORY_CLIENT_CERTIFICATE_FILE",
		default: "",
		description: "Client certificate (PEM) of DIRECTORY_CLIENT_KEY_FILE",
		secret: true,
	},
	{
		name: "METRICS",
		default: "true",
		description:
			"GET /metrics: action calls (prom-client), the process, the cluster and the registry's own figures; 'false' turns all of them off",
	},
];

export function env(name: string, source: NodeJS.ProcessEnv = process.env): string {
	const variable = ENV_VARS.find((candidate) => candidate.name === name);
	if (!variable) throw new Error(`unknown environment variable ${name}: declare it in src/config/settings.ts`);
	const value = source[name];
	return value === undefined || value === "" ? variable.default : value;
}

export function envNumber(name: string, source: NodeJS.ProcessEnv = process.env): number {
	const value = Number(env(name, source));
	if (!Number.isFinite(value)) throw new Error(`${name} must be a number`);
	return value;
}

/** Codes of the ISO 3166 alphabet that name no country: user-assigned, and the reserved EU, EZ, UN. */
const NOT_A_COUNTRY = /^(AA|Q[M-Z]|X[A-Z]|ZZ|EU|EZ|UN)$/;
const REGIONS = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });

/**
 * REGISTRY_COUNTRY upper-cased, checked to be an ISO 3166-1 alpha-2 country code (the one the
 * Directory shows); anything else throws, so a process with a bad value does not start.
 */
export function registryCountry(source: NodeJS.ProcessEnv = process.env): string {
	const value = env("REGISTRY_COUNTRY", source).trim().toUpperCase();
	if (!/^[A-Z]{2}$/.test(value) || NOT_A_COUNTRY.test(value) || !REGIONS.of(value))
		throw new Error(
			`REGISTRY_COUNTRY must be an ISO 3166-1 alpha-2 country code such as NO or SE; got '${env("REGISTRY_COUNTRY", source)}'`,
		);
	return value;
}

/** The placeholder k8s/secret.yaml ships in place of every secret. */
export const SECRET_PLACEHOLDER = "CHANGE-ME";

/**
 * The variables that still hold the shipped placeholder secret, in a process configured for the
 * distributed mode (TRANSPORTER, CACHER or MONGO_URI set): the secrets and the two URLs that may
 * carry a password. The one-process default has no secrets and is never refused.
 */
export function placeholderSecrets(source: NodeJS.ProcessEnv = process.env): string[] {
	if (!env("TRANSPORTER", source) && !env("CACHER", source) && !env("MONGO_URI", source)) return [];
	return ENV_VARS.filter(
		(variable) => variable.secret || variable.name === "TRANSPORTER" || variable.name === "CACHER",
	)
		.map((variable) => variable.name)
		.filter((name) => env(name, source).toUpperCase().includes(SECRET_PLACEHOLDER));
}

export const ALL_SERVICES = env("SERVICES", {}).split(",");

export function selectedServices(source: NodeJS.ProcessEnv = process.env): string[] {
	const names = env("SERVICES", source)
		.split(",")
		.map((name) => name.trim())
		.filter(Boolean);
	const unknown = names.filter((name) => !ALL_SERVICES.includes(name));
	if (unknown.length)
		throw new Error(`SERVICES names unknown services: ${unknown.join(", ")} (known: ${ALL_SERVICES.join(", ")})`);
	return names;
}
