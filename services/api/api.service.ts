/**
 * The gateway (architecture "The gateway"): the registry's HTTP API in front of the domain
 * services. Every request takes one pipeline (services/api/pipeline.ts), built from the
 * operations table (src/contract/operations.ts); this file wires it: the HTTP server, the
 * credential cache and login throttle, the rate limit, the held answers, and the notices that
 * keep them honest. It holds no business rules.
 */
import type { Readable } from "node:stream";
import type { Context, Service, ServiceBroker, ServiceSchema } from "moleculer";
import { REGISTRY_VERSION, SHUTDOWN_TIMEOUT_MS } from "../../src/config/runtime";
import { envNumber, env } from "../../src/config/settings";
import { parseCursor, type ChangePage } from "../../src/contract/changes";
import type { Caller } from "../../src/contract/model";
import { NOTICES, NOTICES_RESET, noticesOf } from "../../src/platform/notices";
import { Authenticator, type VerifiedCredential } from "./authenticate";
import { clientAddress, trustedProxies } from "./client-address";
import { MemoryCounters, RedisCounters, type Counters } from "./counters";
import { CredentialCache } from "./credential-cache";
import { HeldAnswers } from "./held-answers";
import { GatewayServer } from "./http-server";
import { ChangeStreams } from "./change-stream";
import { Idempotency, MemoryKeyEntries, RedisKeyEntries } from "./idempotency";
import { LoginThrottle } from "./login-throttle";
import { operationalAnswers } from "./operational";
import { RequestPipeline } from "./pipeline";
import { RateLimiter } from "./rate-limit";
import { requestIdOf, writeError } from "./respond";

interface GatewaySettings {
	/** The port listened on, known once started (PORT; 0 picks a free port, as tests do). */
	port: number | undefined;
	/** Held lookup answers (per organization and visibility; they share their bytes by content). */
	heldLookups: number;
	/** Held participant reads (~0.6 KB each). */
	heldParticipantReads: number;
}

interface GatewayThis extends Service<GatewaySettings> {
	server: GatewayServer;
	credentials: CredentialCache<VerifiedCredential>;
	throttle: LoginThrottle;
	rateLimiter: RateLimiter;
	held: HeldAnswers;
	pipeline: RequestPipeline;
	changeStreams: ChangeStreams;
	drain(timeoutMs: number): Promise<void>;
}

interface OrganizationNotice {
	organizationKey?: unknown;
	serviceProviders?: unknown;
}

/** Gateways share counters in the cacher's Redis when there is one (login throttle, rate limit). */
/** A change stream reads the feed this often when no `changes.recorded` notice woke it. */
const CHANGE_STREAM_POLL_MS = 5000;
/** Proxies commonly close a connection quiet for 30-60 s. */
const CHANGE_STREAM_KEEP_ALIVE_MS = 15_000;

function redisOf(broker: ServiceBroker): import("ioredis").default | null {
	return (broker.cacher as unknown as { client?: import("ioredis").default } | null)?.client ?? null;
}

const ApiService: ServiceSchema<GatewaySettings, GatewayThis> = {
	name: "api",

	settings: {
		port: undefined,
		heldLookups: 250_000,
		heldParticipantReads: 50_000,
	},

	actions: {
		/**
		 * GET /rest/api/changes as Server-Sent Events (services/api/change-stream.ts). Local to this
		 * gateway (the stream is this process's object): the pipeline calls it like any action.
		 */
		followChanges: {
			visibility: "protected",
			params: { after: { type: "string", optional: true, max: 100 }, lastEventId: { type: "string", optional: true, max: 100 } },
			handler(this: GatewayThis, ctx: Context<{ after?: string; lastEventId?: string }, { user?: Caller | null }>): Readable {
				const after = ctx.params.lastEventId !== undefined ? parseCursor("Last-Event-ID", ctx.params.lastEventId) : parseCursor("after", ctx.params.after);
				return this.changeStreams.open(ctx.meta.user as Caller, after);
			},
		},
	},

	// Notices (src/platform/notices.ts): what other processes changed, for what this gateway holds.
	events: {
		[NOTICES.changesRecorded](this: GatewayThis) {
			this.changeStreams.wake();
		},
		[NOTICES.lookupInvalidated](this: GatewayThis, ctx: { params: OrganizationNotice }) {
			const key = ctx.params.organizationKey;
			this.held.lookupChanged(typeof key === "string" ? key : undefined);
		},
		[NOTICES.participantsChanged](this: GatewayThis, ctx: { params: OrganizationNotice }) {
			const { organizationKey, serviceProviders } = ctx.params;
			this.held.participantChanged(typeof organizationKey === "string" ? organizationKey : undefined, Array.isArray(serviceProviders) ? (serviceProviders as string[]) : undefined);
		},
		[NOTICES.catalogChanged](this: GatewayThis) {
			this.held.catalogChanged();
		},
		[NOTICES.accountsChanged](this: GatewayThis) {
			// Any account change may revoke a credential or rename a provider: forget them all (cheap, rare).
			this.credentials.clear();
			this.held.accountsChanged();
			this.changeStreams.endAll();
		},
		[NOTICES.loginLocked](this: GatewayThis, ctx: { params: { key?: unknown; seconds?: unknown } }) {
			const { key, seconds } = ctx.params;
			if (typeof key === "string" && typeof seconds === "number") this.throttle.heard(key, seconds);
		},
		[NOTICES_RESET](this: GatewayThis) {
			this.credentials.clear();
			this.held.clear();
		},
	},

	methods: {
		/** server.ts drains on SIGTERM before the broker stops. */
		async drain(this: GatewayThis, timeoutMs: number): Promise<void> {
			this.changeStreams.endAll();
			const cut = await this.server.drain(timeoutMs);
			this.logger.info(`gateway drained: stopped listening${cut ? `, ${cut} request(s) cut at the deadline` : ""}`);
		},
	},

	created(this: GatewayThis) {
		const redis = redisOf(this.broker);
		const namespace = env("NAMESPACE") || "default";
		const counters: Counters = redis ? new RedisCounters(redis, `registry-${namespace}-counters:`, (error) => this.logger.warn("counter store unavailable:", String(error))) : new MemoryCounters();
		this.credentials = new CredentialCache<VerifiedCredential>(() => envNumber("AUTH_CACHE_SECONDS") * 1000);
		this.throttle = new LoginThrottle(
			counters,
			{
				userMaxFailures: envNumber("AUTH_USER_MAX_FAILURES"),
				addressMaxFailures: envNumber("AUTH_ADDRESS_MAX_FAILURES"),
				windowSeconds: envNumber("AUTH_WINDOW_SECONDS"),
				lockoutSeconds: envNumber("AUTH_LOCKOUT_SECONDS"),
				maxLockoutSeconds: envNumber("AUTH_MAX_LOCKOUT_SECONDS"),
			},
			(key, seconds) =>
				void noticesOf(this.broker)
					.publish(NOTICES.loginLocked, { key, seconds })
					.catch(() => undefined),
		);
		this.rateLimiter = new RateLimiter({
			perMinute: Number(env("RATE_LIMIT")) || 0,
			redis,
			prefix: `registry-${namespace}-counters:`,
			syncIntervalMs: envNumber("RATE_LIMIT_SYNC_MS"),
			onSyncError: (error) => this.logger.warn("rate limit: sharing with the other gateways failed:", String(error)),
		});
		this.held = new HeldAnswers({ lookups: this.settings.heldLookups, participantReads: this.settings.heldParticipantReads });
		const trusted = trustedProxies(env("TRUST_PROXY"));
		const authenticator = new Authenticator(this.credentials, this.throttle, (username, password) =>
			this.broker.call<Caller | null, { username: string; password: string }>("accounts.authenticate", { username, password }, { caller: "api" } as never),
		);
		this.changeStreams = new ChangeStreams({
			read: (caller, after, limit) =>
				this.broker.call<ChangePage, { after: string; limit: number }>("audit.changes", { after: String(after), limit }, { meta: { user: caller }, caller: "api" } as never),
			pollMs: CHANGE_STREAM_POLL_MS,
			keepAliveMs: CHANGE_STREAM_KEEP_ALIVE_MS,
			onReadError: (error) => this.logger.warn("change stream: reading the feed failed (retrying):", String(error)),
		});
		const keyEntries = redis ? new RedisKeyEntries(redis, `registry-${namespace}-idempotency:`) : new MemoryKeyEntries();
		this.pipeline = new RequestPipeline({
			broker: this.broker,
			authenticator,
			rateLimiter: this.rateLimiter,
			held: this.held,
			idempotency: new Idempotency(keyEntries, (error) => this.logger.warn("idempotency keys unavailable (adds run without them):", String(error))),
			clientAddress: (req) => clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], trusted),
			onServerError: (req, error) => this.logger.error(`${req.method} ${req.url} failed:`, error),
		});
	},

	async started(this: GatewayThis) {
		const operational = operationalAnswers(this.broker, REGISTRY_VERSION);
		this.server = new GatewayServer({
			operational,
			api: (req, res, path) => this.pipeline.handle(req, res, path),
			failed: (req, res, error) => {
				if (writeError(req, res, requestIdOf(req), error) >= 500) this.logger.error(`${req.method} ${req.url} failed:`, error);
			},
		});
		this.settings.port = await this.server.listen(envNumber("PORT"));
		this.rateLimiter.start();
		this.logger.info(`registry gateway listening on http://127.0.0.1:${this.settings.port}/rest/api`);
	},

	async stopped(this: GatewayThis) {
		this.rateLimiter.stop();
		// server.ts drains on SIGTERM before the broker stops; a broker stopped otherwise (tests, the CLI) drains here.
		if (this.server) await this.drain(SHUTDOWN_TIMEOUT_MS);
	},
};

export default ApiService;
