/** The gateway: moleculer-web in front of the services, no business rules (docs/internals.md "Follow a request"). */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import ApiGateway from "moleculer-web";
import type Redis from "ioredis";
import type { LoggerInstance, Service, ServiceBroker, ServiceSchema } from "moleculer";
import { REGISTRY_VERSION, SHUTDOWN_TIMEOUT_MS } from "../../src/config/runtime";
import { envNumber, env } from "../../src/config/settings";
import { parseCursor, type ChangePage } from "../../src/contract/changes";
import { AccessDenied, RegistryError, TypeMismatch, Unauthenticated } from "../../src/contract/errors";
import type { Caller } from "../../src/contract/model";
import { checkContentType, parsePathValues, selectByAccept, selectByPathForm } from "../../src/contract/negotiation";
import { API_BASE, OPERATIONS } from "../../src/contract/operations";
import { signAuthentication } from "../../src/platform/caller-signature";
import { oauthSettings } from "../../src/oauth/settings";
import { TokenCallers } from "../../src/oauth/token-callers";
import type { RegistryContext } from "../../src/platform/context";
import { broadcastEvents, EVENTS } from "../../src/platform/events";
import { countMetric, REGISTRY_METRICS } from "../../src/platform/registry-metrics";
import { Authenticator, tooManyRequests, type VerifiedCredential } from "./authenticate";
import { QUERY_OPTIONS } from "./bind";
import { clientAddress, trustedProxies } from "./client-address";
import { MemoryCounters, RedisCounters } from "./counters";
import { CredentialCache } from "./credential-cache";
import { isCrossSiteChange } from "./cross-site";
import { GatewayServer } from "./http-server";
import { ChangeStreams } from "./change-stream";
import { Idempotency, MemoryKeyEntries, RedisKeyEntries } from "./idempotency";
import { LoginThrottle } from "./login-throttle";
import { operationalAnswers } from "./operational";
import { serveOperation, type OperationCallParts } from "./operation-call";
import { RateLimiter } from "./rate-limit";
import {
	CLIENT_REQUEST_ID,
	pathOf,
	stateOf,
	type GatewayContext,
	type GatewayRequest,
	type OperationAlias,
} from "./request-state";
import { writeError } from "./respond";
import { gatewayRoutes, type GatewayRoutes } from "./routes";

interface GatewaySettings {
	/** The port listened on, known once started (PORT; 0 picks a free port, as tests do). */
	port: number | undefined;
	/** What this gateway serves: the whole API, or what a lookup node answers (decisions §12). */
	serves: "api" | "lookup";
}

interface GatewayThis extends Service<GatewaySettings>, GatewayParts {
	server: GatewayServer;
	/** The routes of the operations it serves (not moleculer-web's own `routes`). */
	served: GatewayRoutes;
	drain(timeoutMs: number): Promise<void>;
	/** moleculer-web's middleware-mode handler. */
	express(): (req: GatewayRequest, res: ServerResponse, next?: (error?: unknown) => void) => void;
}

type GatewayParts = ReturnType<typeof gatewayParts>;

/** What a gateway keeps from request to request, built once from the environment (`created`). */
function gatewayParts(broker: ServiceBroker, logger: LoggerInstance) {
	const redis = (broker.cacher as unknown as { client?: Redis } | null)?.client ?? null;
	const prefix = `registry-${env("NAMESPACE") || "default"}-`;
	const warn = (what: string) => (error: unknown) => logger.warn(what, String(error));
	const counters = redis
		? new RedisCounters(redis, `${prefix}counters:`, warn("counter store unavailable:"))
		: new MemoryCounters();
	const credentials = new CredentialCache<VerifiedCredential>(() => envNumber("AUTH_CACHE_SECONDS") * 1000);
	const throttleSettings = {
		userMaxFailures: envNumber("AUTH_USER_MAX_FAILURES"),
		addressMaxFailures: envNumber("AUTH_ADDRESS_MAX_FAILURES"),
		windowSeconds: envNumber("AUTH_WINDOW_SECONDS"),
		lockoutSeconds: envNumber("AUTH_LOCKOUT_SECONDS"),
		maxLockoutSeconds: envNumber("AUTH_MAX_LOCKOUT_SECONDS"),
	};
	const throttle = new LoginThrottle(counters, throttleSettings, (key, seconds, scope) => {
		countMetric(broker, REGISTRY_METRICS.loginLockouts, { scope });
		void broadcastEvents(broker, [{ name: EVENTS.loginLocked, payload: { key, seconds } }]);
	});
	const rateLimiter = new RateLimiter({
		perMinute: Number(env("RATE_LIMIT")) || 0,
		redis,
		prefix: `${prefix}counters:`,
		syncIntervalMs: envNumber("RATE_LIMIT_SYNC_MS"),
		onSyncError: warn("rate limit: sharing with the other gateways failed:"),
		onSynced: () => countMetric(broker, REGISTRY_METRICS.rateLimitSyncRounds),
	});
	// Bearer tokens beside Basic (decisions §15); a misconfigured issuer stops the start with its reason.
	const oauth = oauthSettings();
	const tokenCallers =
		oauth &&
		new TokenCallers(broker, oauth, {
			ttlMs: envNumber("AUTH_CACHE_SECONDS") * 1000,
			refusedWait: (address, now) => (rateLimiter.perMinute > 0 ? rateLimiter.take("addr", address, now) : 0),
			onUnreachable: warn(`OAuth issuer ${oauth.issuer}: no keys yet, Bearer tokens refused:`),
		});
	const keyBounds = { perCaller: envNumber("IDEMPOTENCY_KEYS_PER_CALLER") };
	const keyEntries = redis
		? new RedisKeyEntries(redis, `${prefix}idempotency:`, keyBounds)
		: new MemoryKeyEntries(keyBounds);
	return {
		credentials,
		throttle,
		tokenCallers,
		trusted: trustedProxies(env("TRUST_PROXY")),
		authenticator: new Authenticator(
			credentials,
			throttle,
			(username, password) =>
				broker.call<Caller | null, { username: string; password: string }>(
					"accounts.authenticate",
					{ username, password },
					// Only a gateway asks whether a password is right (src/platform/caller-signature.ts).
					{ caller: "api", meta: { authenticationSignature: signAuthentication(broker, username) } } as never,
				),
			tokenCallers,
		),
		rateLimiter,
		changeStreams: new ChangeStreams({
			read: (caller, after, limit) =>
				broker.call<ChangePage, { after: string; limit: number }>(
					"audit.changes",
					{ after: String(after), limit },
					{ meta: { user: caller }, caller: "api" } as never,
				),
			onReadError: warn("change stream: reading the feed failed (retrying):"),
		}),
		operationCalls: {
			idempotency: new Idempotency(keyEntries, warn("idempotency keys unavailable (adds run without them):")),
			onServerError: (req, error) => logger.error(`${req.method} ${req.originalUrl ?? req.url} failed:`, error),
		} satisfies OperationCallParts,
	};
}

/** moleculer-web's refusals in the contract's terms: a badly encoded path value; no alias (405 with Allow, or 404). */
function fromMoleculerWeb(req: GatewayRequest, error: unknown, routes: GatewayRoutes): unknown {
	if ((error as { type?: unknown } | null)?.type === "UNABLE_DECODE_PARAM")
		return new TypeMismatch("A path parameter is not validly percent-encoded");
	if (!(error instanceof ApiGateway.Errors.NotFoundError) || stateOf(req)) return error;
	const path = pathOf(req);
	const allow = routes.methodsOf(path);
	if (allow.length === 0) return new RegistryError(404, "NotFoundException", `No endpoint ${req.method} ${path}`);
	const message = `Request method '${req.method}' is not supported`;
	return new RegistryError(405, "HttpRequestMethodNotSupportedException", message, { allow });
}

/** The gateway service; `serves` chooses its routes (services/index.ts: from SERVICES). */
export function gatewayService(serves: GatewaySettings["serves"]): ServiceSchema<GatewaySettings, GatewayThis> {
	const operations = serves === "api" ? OPERATIONS : OPERATIONS.filter((operation) => operation.lookupNode);
	const routes = gatewayRoutes(operations);
	return {
		name: "api",
		mixins: [ApiGateway as Partial<ServiceSchema>],

		settings: {
			// Middleware mode: the gateway's own node:http server (http-server.ts) passes requests to `this.express()`.
			server: false,
			port: undefined,
			serves,
			// The API, and the SMP lookups at the port's root (decisions §13): the same hooks and handler for both.
			routes: [API_BASE, "/"].map((path) => ({
				path,
				aliases: routes.aliases(serveOperation, path === "/"),
				mappingPolicy: "restrict",
				mergeParams: false,
				authentication: true,
				authorization: true,
				// The registry's own body reading (bind.ts), after authorization; moleculer-web's parsers run before it.
				bodyParsers: false,
				logging: false,
			})),
			qsOptions: QUERY_OPTIONS,
			// A request's `api.rest` context is not tracked: the gateway's drain (http-server.ts) waits for every request
			// already; the calls it makes are tracked as usual. Its ID is the client's only when well-formed (decisions §3).
			rootCallOptions(options: { tracking?: boolean; requestID?: string }, req: IncomingMessage) {
				options.tracking = false;
				const given = req.headers["x-correlation-id"] ?? req.headers["x-request-id"];
				options.requestID = typeof given === "string" && CLIENT_REQUEST_ID.test(given) ? given : undefined;
			},
			optimizeOrder: false,
			logRequest: null,
			logResponse: null,
			logRequestParams: null,
			logRouteRegistration: null,
			/** Every refusal and failure, routed or not, in the spec's error body with the common headers. */
			onError(this: GatewayThis, req: GatewayRequest, res: ServerResponse, error: unknown) {
				const status = writeError(req, res, fromMoleculerWeb(req, error, this.served), stateOf(req));
				if (status >= 500) this.logger.error(`${req.method} ${pathOf(req)} failed:`, error);
			},
			// The routes (with the operations table) stay off the service's INFO on the transporter.
			$secureSettings: ["routes"],
		} as GatewaySettings,

		actions: {
			// moleculer-web's route-changing actions are public: any node on the transporter could change the routes.
			addRoute: false,
			removeRoute: false,
			listAliases: false,

			// GET /rest/api/changes as Server-Sent Events: protected, as the stream is this process's object.
			followChanges: {
				visibility: "protected",
				params: {
					after: { type: "string", optional: true, max: 100 },
					lastEventId: { type: "string", optional: true, max: 100 },
				},
				handler(this: GatewayThis, ctx: RegistryContext<{ after?: string; lastEventId?: string }>): Readable {
					const after =
						ctx.params.lastEventId !== undefined
							? parseCursor("Last-Event-ID", ctx.params.lastEventId)
							: parseCursor("after", ctx.params.after);
					return this.changeStreams.open(ctx.meta.user as Caller, after);
				},
			},
		},

		// Events (src/platform/events.ts): what other nodes changed, for what this gateway keeps.
		events: {
			[EVENTS.changesRecorded](this: GatewayThis) {
				this.changeStreams.wake();
			},
			[EVENTS.accountsChanged](this: GatewayThis) {
				// Any account change may revoke a credential: forget them all (cheap, rare).
				this.credentials.clear();
				this.tokenCallers?.clear();
				this.changeStreams.endAll();
			},
			[EVENTS.loginLocked](this: GatewayThis, ctx: { params: { key?: unknown; seconds?: unknown } }) {
				const { key, seconds } = ctx.params;
				if (typeof key === "string" && typeof seconds === "number") this.throttle.heard(key, seconds);
			},
		},

		methods: {
			/** Readiness details (src/platform/health.ts): whether Bearer tokens can be verified; never a check that fails it. */
			readinessDetails(this: GatewayThis): Record<string, string> {
				return this.tokenCallers ? { oauthIssuer: this.tokenCallers.status() } : {};
			},

			/** moleculer-web's `authentication` hook: who is calling; the request's state starts here. */
			authenticate(
				this: GatewayThis,
				ctx: GatewayContext,
				route: unknown,
				req: GatewayRequest,
				res: ServerResponse,
				alias: OperationAlias,
			): Caller | null | Promise<Caller | null> {
				const address = clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], this.trusted);
				const now = Date.now();
				ctx.locals.request = {
					group: alias.group,
					path: parsePathValues(req.$params.params),
					address,
					now,
					caller: null,
					operation: null,
					mediaType: "",
					contentType: "",
					validated: undefined,
				};
				return this.authenticator.authenticate(req, address, now);
			},

			/** moleculer-web's `authorization` hook: the operation, its Content-Type and roles, the rate limit. */
			authorize(this: GatewayThis, ctx: GatewayContext, route: unknown, req: GatewayRequest): void {
				const state = ctx.locals.request!;
				if (req.method !== "GET" && req.method !== "HEAD" && isCrossSiteChange(req))
					throw new AccessDenied("Cross-site requests may not change the registry");
				const caller = (state.caller = ctx.meta.user ?? null);
				if (!caller && !state.group.anonymous) throw new Unauthenticated();
				const forms = selectByPathForm(state.group.operations, state.path.participant);
				const { operation } = Object.assign(state, selectByAccept(forms, req.headers.accept));
				if (operation.body) checkContentType(operation, req.headers["content-type"]);
				if (!caller && !operation.roles.includes("ANONYMOUS")) throw new Unauthenticated();
				if (caller && !operation.roles.includes(caller.role)) throw new AccessDenied();
				// Not moleculer-web's `rateLimit`: it runs before authentication, keys on the address and asks its store every request.
				if (this.rateLimiter.perMinute > 0) {
					const wait = caller
						? this.rateLimiter.take("user", caller.username, state.now)
						: this.rateLimiter.take("addr", state.address, state.now);
					if (wait > 0)
						throw tooManyRequests(
							wait,
							`Rate limit of ${this.rateLimiter.perMinute} requests per minute exceeded`,
						);
				}
			},

			/** server.ts drains on SIGTERM before the broker stops. */
			async drain(this: GatewayThis, timeoutMs: number): Promise<void> {
				this.changeStreams.endAll();
				const cut = await this.server.drain(timeoutMs);
				// Cut connections lost their answers: an operator should see that at the default log level.
				if (cut)
					this.logger.warn(
						`gateway drained: stopped listening, ${cut} busy connection(s) cut at the deadline`,
					);
				else this.logger.info("gateway drained: stopped listening");
			},
		},

		created(this: GatewayThis) {
			this.served = routes;
			Object.assign(this, gatewayParts(this.broker, this.logger));
		},

		async started(this: GatewayThis) {
			this.server = new GatewayServer({
				operational: operationalAnswers(this.broker, REGISTRY_VERSION, this.served, {
					documents: serves === "api",
					operations: !env("OPERATIONS_PORT"),
				}),
				// Without `next`: moleculer-web answers a request no route took through `onError` (its NotFoundError).
				api: this.express() as (req: IncomingMessage, res: ServerResponse) => void,
				failed: (req, res, error) => {
					if (writeError(req, res, error) >= 500)
						this.logger.error(`${req.method} ${req.url} failed:`, error);
				},
			});
			this.settings.port = await this.server.listen(envNumber("PORT"));
			this.rateLimiter.start();
			this.tokenCallers?.start();
			// Every scope has a series from the start, so a first lockout is an increase.
			for (const scope of ["user", "address"])
				countMetric(this.broker, REGISTRY_METRICS.loginLockouts, { scope }, 0);
			const what = serves === "api" ? "registry gateway" : "lookup node";
			this.logger.info(`${what} listening on http://127.0.0.1:${this.settings.port}/rest/api`);
		},

		async stopped(this: GatewayThis) {
			this.rateLimiter.stop();
			this.tokenCallers?.stop();
			// moleculer-web answers `$services.changed` with a debounced broadcast (for auto-aliases, unused here): none after the stop.
			const self = this as unknown as { regenerateAllAutoAliases?: { (): void; cancel(): void } };
			self.regenerateAllAutoAliases?.cancel();
			self.regenerateAllAutoAliases = Object.assign(() => undefined, { cancel: () => undefined });
			// server.ts drains on SIGTERM before the broker stops; a broker stopped otherwise (tests, the CLI) drains here.
			if (this.server) await this.drain(SHUTDOWN_TIMEOUT_MS);
		},
	};
}
