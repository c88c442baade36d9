/**
 * The gateway (architecture "The gateway"): moleculer-web in front of the domain services.
 * Everything about an operation comes from src/contract/operations.ts; this file holds no business
 * rules. Order of checks for a request (first failure answers):
 *   404 unknown path, 405 wrong method → 429 throttled login → 401 bad credentials →
 *   401 no credentials (operation not open to ANONYMOUS) → 400 participant path form →
 *   406 Accept → 415 Content-Type → 403 role → 429 rate limit → 400 path parameters,
 *   body and paging → the action.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import bodyParser from "body-parser";
import { Context, Errors, type ServiceSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import packageJson from "../../package.json";
import { MemoryCounters, RedisCounters, type Counters } from "./counters";
import { serveApiDocs } from "./api-docs";
import { clientAddress, trustedProxies, type TrustedProxies } from "./client-address";
import { CredentialCache } from "./credential-cache";
import { answerClientError } from "./client-error";
import { bodyError, classify, errorBody } from "../../src/contract/error-body";
import { RegistryError, TypeMismatch, ValidationFailed } from "../../src/contract/errors";
import { readiness } from "../../src/platform/health";
import { NOTICES, NOTICES_RESET } from "../../src/platform/notices";
import { jsonDepthExceeds, longArrayPath, MAX_ARRAY_ITEMS, MAX_JSON_DEPTH } from "./json-depth";
import { LoginThrottle, rateLimitWait } from "./login-throttle";
import { answerFromMemory, type MemoryLookup } from "./lookup-fast-path";
import { answerParticipantRead, participantReadOf, type HeldParticipantReads, type ParticipantRead } from "./participant-read-fast-path";
import { prometheusFormatter } from "../../src/platform/metrics";
import type { Caller } from "../../src/contract/model";
import {
	checkContentType,
	groupOperations,
	pathParamsToActionParams,
	responseMediaType,
	selectByAccept,
	selectByPathForm,
	type OperationGroup,
} from "../../src/contract/negotiation";
import { openApiDocument } from "../../src/contract/openapi";
import { API_BASE, OPERATIONS, type Operation } from "../../src/contract/operations";
import { parsePageRequest } from "../../src/contract/paging";
import { COMMON_HEADERS, ERROR_CONTENT_TYPE, withCharset } from "../../src/contract/response-headers";
import { env, envNumber } from "../../src/config/settings";
import { SHUTDOWN_TIMEOUT_MS } from "../../moleculer.config";

type Request = http.IncomingMessage & {
	$params: { body?: unknown; query: Record<string, unknown>; params: Record<string, string> };
	$alias?: { method: string; path: string };
	$endpoint?: unknown;
	$action?: unknown;
	$ctx?: Context<unknown, GatewayMeta>;
	/** The operation chosen for this request (set in authorize). */
	$operation?: Operation;
	/** What the action was called with (for rejectedValue in validation errors). */
	$actionParams?: Record<string, unknown>;
	originalUrl?: string;
	parsedUrl?: string;
	body?: unknown;
};
type Response = http.ServerResponse;

/** A Basic credential past the login throttle (see `credentialOf`). */
interface Credential {
	username: string;
	password: string;
	address: string;
	/** The credentials cache's key for it. */
	key: string;
	/** Its caller when verified recently. */
	cached: Caller | undefined;
}

interface GatewayMeta {
	user?: Caller | null;
	$statusCode?: number;
	$responseType?: string;
	$location?: string;
}

/** How long nothing must be in flight before a draining gateway closes its idle keep-alive connections. */
const DRAIN_QUIET_MS = 250;

const REGISTRY_VERSION: string = packageJson.version;

const GROUPS = groupOperations(OPERATIONS);
/** moleculer-web keeps an alias path without its leading slash. */
const aliasKey = (method: string, path: string) => `${method} ${path.replace(/^\/+/, "")}`;
const GROUP_BY_ALIAS = new Map(GROUPS.map((group) => [aliasKey(group.method, group.path), group]));
/** The same lookup, remembered per moleculer-web alias object (one per group, built once). */
const GROUP_OF_ALIAS = new WeakMap<object, OperationGroup>();

function groupOf(alias: { method: string; path: string }): OperationGroup {
	let group = GROUP_OF_ALIAS.get(alias);
	if (!group) {
		group = GROUP_BY_ALIAS.get(aliasKey(alias.method, alias.path)) as OperationGroup;
		GROUP_OF_ALIAS.set(alias, group);
	}
	return group;
}

const COMMON_HEADER_ENTRIES = Object.entries(COMMON_HEADERS);

/** Path patterns for the 405 answer: which methods does a path have? */
const PATH_PATTERNS = GROUPS.map((group) => ({
	method: group.method,
	pattern: new RegExp(`^${API_BASE}${group.path.replace(/:[A-Za-z]+/g, "[^/]+")}/?$`),
}));

/**
 * A finished answer may carry its own JSON bytes under this key (the lookup's cached answers,
 * services/lookup/lookup.service.ts): the gateway writes them as they are instead of serializing the
 * same answer on every request. Only frozen values are trusted with it, so the bytes can
 * never disagree with the object; anything else is serialized as moleculer-web does.
 */
const SERIALIZED = Symbol.for("registry.serialized");

/**
 * moleculer-web's private `api.rest` action: what its httpHandler runs for every request,
 * through the broker's whole local middleware chain (metrics, tracking, timeout, retry, error
 * handler). The gateway runs the same handler in a context of its own instead (`httpHandler`
 * below): the chain cost a fifth of the hot lookup's time and gave nothing here — the action
 * that answers is still called through the chain (its metrics, timeout and tracking stay),
 * in-flight HTTP requests are tracked by the gateway itself (`inFlight`, `drain`), and errors
 * reach `onError` as before.
 */
const REST_HANDLER = (ApiGateway.actions as Record<string, { handler: (ctx: Context) => Promise<unknown> }>).rest.handler;

const jsonBody = bodyParser.json({ limit: "1mb", strict: false, type: () => true });

function parseBody(req: Request, res: Response): Promise<unknown> {
	return new Promise((resolve, reject) => {
		jsonBody(req, res, (error?: unknown) => {
			if (error) return reject(bodyError(error));
			if (jsonDepthExceeds(req.body)) return reject(new RegistryError(400, "HttpMessageNotReadableException", `JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`));
			const longArray = longArrayPath(req.body);
			if (longArray !== null) return reject(ValidationFailed.one(longArray || "body", "Size", `size must be between 0 and ${MAX_ARRAY_ITEMS}`, null));
			resolve(req.body);
		});
	});
}

function unauthorized(message: string): RegistryError {
	return new RegistryError(401, "AuthenticationException", message);
}

function tooManyRequests(retryAfterSeconds: number, message: string): RegistryError {
	return new RegistryError(429, "TooManyRequestsException", message, { retryAfter: retryAfterSeconds });
}

/** `Basic base64(user:password)` → its parts; anything else is a 401. */
function parseBasic(header: string): { username: string; password: string } {
	const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
	if (!match) throw unauthorized("Authorization header must use the Basic scheme");
	const decoded = Buffer.from(match[1], "base64").toString("utf8");
	const colon = decoded.indexOf(":");
	if (colon < 0) throw unauthorized("Malformed Basic credentials");
	return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function single(value: unknown, name: string): string | undefined {
	if (value === undefined) return undefined;
	const last = Array.isArray(value) ? value[value.length - 1] : value;
	if (typeof last !== "string") throw new TypeMismatch(`Query parameter '${name}' must be a plain string`);
	return last;
}

/** Query parameters an operation reads beyond paging (participant finds: query, processes). */
function operationQuery(operation: Operation, query: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [name, spec] of Object.entries(operation.queryParams ?? {})) {
		const value = single(query[name], name);
		if (spec.type === "boolean") {
			if (value === undefined || value === "") out[name] = false;
			else if (value === "true" || value === "false") out[name] = value === "true";
			else throw new TypeMismatch(`Query parameter '${name}' must be true or false; value: '${value}'`);
		} else if (value !== undefined && value !== "") {
			out[name] = value;
		}
	}
	return out;
}

function locationOf(operation: Operation, data: unknown): string | undefined {
	const identifier = (data as { identifier?: unknown } | null)?.identifier;
	return typeof identifier === "string" ? `${API_BASE}${operation.path}/${identifier}` : undefined;
}

const ApiService = {
	name: "api",
	mixins: [ApiGateway],

	settings: {
		// The HTTP server is ours (see `started`): it sets the common headers on every answer
		// and serves health and metrics before moleculer-web routing.
		server: false,
		/** The port listened on, known once started (PORT; 0 picks a free port, as tests do). */
		port: undefined as number | undefined,
		log4XXResponses: false,
		logRequest: null,
		logResponse: null,
		logRequestParams: null,
		logResponseData: null,
		// Duplicate query parameters become arrays; bracket syntax does not build objects.
		qsOptions: { depth: 0, parameterLimit: 100, arrayLimit: 50 },
		routes: [
			{
				name: "registry",
				path: API_BASE,
				mappingPolicy: "restrict",
				mergeParams: false,
				// Bodies are parsed after authorization (see `authorize`) so that a 401/403 never
				// depends on what the body holds.
				bodyParsers: false,
				authentication: true,
				authorization: true,
				logging: false,
				aliases: Object.fromEntries(
					GROUPS.map((group) => [`${group.method} ${group.path}`, (group.operations.find((operation) => operation.isDefault) ?? group.operations[0]).action]),
				),
				onAfterCall(this: GatewayThis, ctx: Context<unknown, GatewayMeta>, _route: unknown, req: Request, _res: Response, data: unknown) {
					const operation = req.$operation as Operation;
					ctx.meta.$statusCode = operation.status;
					if (operation.status === 204) return null;
					if (data !== null && data !== undefined) ctx.meta.$responseType = withCharset(responseMediaType(operation, req.headers.accept));
					if (operation.status === 201) ctx.meta.$location = locationOf(operation, data);
					return data ?? null;
				},
			},
		],
		onError(this: GatewayThis, req: Request, res: Response, error: unknown) {
			this.renderError(req, res, error);
		},
	},

	// Notices (src/platform/notices.ts): every gateway hears them, whichever node made the change.
	events: {
		[NOTICES.accountsChanged](this: GatewayThis) {
			// Any account change may revoke a cached credential: forget them all (cheap, rare).
			this.credentials.clear();
		},
		[NOTICES_RESET](this: GatewayThis) {
			this.credentials.clear();
		},
	},

	methods: {
		/**
		 * moleculer-web's httpHandler (0.10.8), with the `api.rest` handler called directly in
		 * a context made here (see REST_HANDLER) rather than through `this.actions.rest`.
		 */
		async httpHandler(this: GatewayThis, req: Request, res: Response, next?: unknown): Promise<void> {
			const marked = req as Request & Record<string, unknown>;
			marked.$startTime = process.hrtime();
			marked.$service = this;
			marked.$next = next;
			(res as Response & Record<string, unknown>).$service = this;
			(res as Response & { locals?: object }).locals ??= {};
			const requestID = req.headers["x-correlation-id"] || req.headers["x-request-id"];
			try {
				const ctx = Context.create(this.broker, this.restEndpoint as never, { req, res }, { requestID: requestID as string | undefined });
				const result = await REST_HANDLER.call(this, ctx);
				// Not routed: 404 or 405 (no CORS and no static files here).
				if (result === null || result === undefined) this.send404(req, res);
			} catch (error) {
				// As moleculer's error handler middleware did: whatever was thrown becomes an Error.
				this.errorHandler(req, res, error instanceof Error ? error : new Errors.MoleculerError(String(error), 500));
			}
		},

		/** moleculer-web's response serializer: JSON.stringify, unless the answer brings its bytes. */
		encodeResponse(this: GatewayThis, _req: Request, _res: Response, data: unknown): string | Buffer {
			if (Object.isFrozen(data)) {
				const bytes = (data as { [SERIALIZED]?: unknown })[SERIALIZED];
				if (Buffer.isBuffer(bytes)) return bytes;
			}
			return JSON.stringify(data);
		},

		async authenticate(this: GatewayThis, ctx: Context<unknown, GatewayMeta>, _route: unknown, req: Request): Promise<Caller | null> {
			const header = req.headers.authorization;
			if (!header) return null;
			const credential = await this.credentialOf(header, req);
			if (credential.cached) return credential.cached;

			const { username, password, address, key } = credential;
			const caller = await this.credentials.verify(key, () => ctx.call<Caller | null, { username: string; password: string }>("accounts.authenticate", { username, password }));
			if (!caller) {
				await this.throttle.recordFailure(username, address);
				throw unauthorized("Bad credentials");
			}
			await this.throttle.recordSuccess(username);
			return caller;
		},

		/**
		 * A Basic credential, past the login throttle (429 while its username or the client's
		 * address is locked out, right password or not), with its caller when it was verified
		 * recently (`credentials`, keyed by a hash of the header, never the password itself).
		 */
		async credentialOf(this: GatewayThis, header: string, req: Request): Promise<Credential> {
			const { username, password } = parseBasic(header);
			const address = this.clientAddress(req);
			const wait = await this.throttle.retryAfter(username, address);
			if (wait > 0) throw tooManyRequests(wait, "Too many failed logins; try again later");
			const key = createHash("sha256").update(header).digest("base64");
			return { username, password, address, key, cached: this.credentials.get(key) };
		},

		/** The authenticated read's short path (services/api/participant-read-fast-path.ts); the full path for anything it does not answer. */
		async readFromMemory(this: GatewayThis, req: Request, res: Response, read: ParticipantRead, participants: HeldParticipantReads): Promise<void> {
			try {
				const { cached } = await this.credentialOf(read.authorization, req);
				if (cached && answerParticipantRead(req, res, read, cached, participants)) return;
			} catch {
				// A throttled or malformed credential: the full path gives the answer (429, 401).
			}
			await this.httpHandler(req, res);
		},

		async authorize(this: GatewayThis, ctx: Context<unknown, GatewayMeta>, route: { callOptions?: object }, req: Request, res: Response): Promise<void> {
			const group = groupOf(req.$alias as { method: string; path: string });
			const user = ctx.meta.user ?? null;
			if (!user && group.operations.every((operation) => !operation.roles.includes("ANONYMOUS"))) {
				throw unauthorized("Full authentication is required to access this resource");
			}
			const pathValues = req.$params.params;
			const operation = selectByAccept(selectByPathForm(group.operations, pathValues), req.headers.accept);
			req.$operation = operation;
			if (operation.body) checkContentType(operation, req.headers["content-type"]);
			if (!user && !operation.roles.includes("ANONYMOUS")) throw unauthorized("Full authentication is required to access this resource");
			if (user && !operation.roles.includes(user.role)) throw new RegistryError(403, "AccessDeniedException", "Access is denied");
			if (this.rateLimitPerMinute > 0) await this.enforceRateLimit(user, req);

			const params: Record<string, unknown> = pathParamsToActionParams(operation, pathValues);
			const query = req.$params.query;
			if (operation.sortable) params.pageRequest = parsePageRequest(query, operation.sortable);
			Object.assign(params, operationQuery(operation, query));
			if (operation.body) params.body = await parseBody(req, res);
			req.$actionParams = params;
			req.$params = params as Request["$params"];

			// moleculer-web already took an endpoint of the alias's action from the balancer: keep
			// it when the operation calls that action. Asking again would step the round robin
			// twice per request, and with two nodes of a service every request would go to the same one.
			const resolved = req.$endpoint as { action?: { name?: string } } | undefined;
			const endpoint = resolved?.action?.name === operation.action ? resolved : this.broker.findNextActionEndpoint(operation.action, route.callOptions, ctx);
			if (endpoint instanceof Error) throw endpoint;
			req.$endpoint = endpoint;
			req.$action = (endpoint as unknown as { action: unknown }).action;
		},

		async enforceRateLimit(this: GatewayThis, user: Caller | null, req: Request): Promise<void> {
			const perMinute = this.rateLimitPerMinute;
			if (!perMinute) return;
			const callerKey = user ? `user:${user.username}` : `addr:${this.clientAddress(req)}`;
			const wait = await rateLimitWait(this.counters, callerKey, perMinute);
			if (wait > 0) throw tooManyRequests(wait, `Rate limit of ${perMinute} requests per minute exceeded`);
		},

		clientAddress(this: GatewayThis, req: Request): string {
			return clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], this.trustedProxies);
		},

		/** No route matched: 405 with Allow when the path exists for other methods, else 404. */
		send404(this: GatewayThis, req: Request, res: Response) {
			const path = (req.parsedUrl ?? req.url ?? "").split("?")[0];
			const allowed = this.methodsOf(path);
			if (allowed.length > 0) {
				res.setHeader("Allow", allowed.join(", "));
				this.renderError(req, res, new RegistryError(405, "HttpRequestMethodNotSupportedException", `Request method '${req.method}' is not supported`));
				return;
			}
			this.renderError(req, res, new RegistryError(404, "NotFoundException", `No endpoint ${req.method} ${path}`));
		},

		/** The methods the operations table defines for a path (for Allow). */
		methodsOf(path: string): string[] {
			return [...new Set(PATH_PATTERNS.filter((candidate) => candidate.pattern.test(path)).map((candidate) => candidate.method))];
		},

		renderError(this: GatewayThis, req: Request, res: Response, error: unknown) {
			const classified = classify(error, req.$actionParams);
			if (classified.status >= 500) this.logger.error(`${req.method} ${req.originalUrl ?? req.url} failed:`, error);
			if (res.headersSent) return;
			const path = (req.originalUrl ?? req.url ?? "").split("?")[0];
			const body = errorBody(classified, path, req.$operation?.body?.objectName);
			const retryAfter = (error as { data?: { retryAfter?: number } })?.data?.retryAfter;
			res.statusCode = classified.status;
			if (classified.status === 401) res.setHeader("WWW-Authenticate", 'Basic realm="registry"');
			if (classified.status === 429) res.setHeader("Retry-After", String(retryAfter ?? 60));
			if (req.method === "HEAD") {
				res.end();
				return;
			}
			const payload = JSON.stringify(body);
			res.setHeader("Content-Type", ERROR_CONTENT_TYPE);
			res.setHeader("Content-Length", Buffer.byteLength(payload));
			res.end(payload);
		},

		/**
		 * Health and metrics answer without credentials and before routing. Answers true when
		 * it answered, false when the request is the API's, and a promise only for readiness
		 * (the one check that waits): an API request costs no promise here.
		 */
		serveOperational(this: GatewayThis, req: Request, res: Response): boolean | Promise<void> {
			const path = (req.url ?? "").split("?")[0];
			if (req.method === "OPTIONS") {
				// OPTIONS names a path's methods (RFC 9110), without credentials. It is answered
				// here because moleculer-web would resolve it as the path's GET alias.
				const allowed = this.methodsOf(path);
				if (allowed.length === 0) return false;
				res.setHeader("Allow", [...allowed, "OPTIONS"].join(", "));
				res.statusCode = 204;
				res.end();
				return true;
			}
			if (req.method !== "GET" && req.method !== "HEAD") return false;
			if (path === "/health/live") {
				this.sendJson(res, 200, { status: "UP" });
				return true;
			}
			if (path === "/health/ready") {
				return readiness(this.broker).then((result) => this.sendJson(res, result.status === "UP" ? 200 : 503, result));
			}
			if (serveApiDocs(req, res, path)) return true;
			if (path === `${API_BASE}/openapi.json`) {
				this.openApiText ??= JSON.stringify(openApiDocument(REGISTRY_VERSION));
				res.statusCode = 200;
				res.setHeader("Content-Type", "application/json;charset=UTF-8");
				res.end(this.openApiText);
				return true;
			}
			if (path === "/metrics" && this.prometheus) {
				const text = this.prometheus();
				res.statusCode = 200;
				res.setHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
				res.end(text);
				return true;
			}
			return false;
		},

		/**
		 * Graceful stop of the HTTP side (server.ts calls it first on SIGTERM): stop listening
		 * (new connections are refused), answer every request already taken, closing each
		 * connection after its answer, then close the idle keep-alive connections. After
		 * `timeoutMs` the connections still open are cut.
		 */
		async drain(this: GatewayThis, timeoutMs: number): Promise<void> {
			if (!this.server?.listening) return;
			this.draining = true;
			const deadline = Date.now() + timeoutMs;
			// Connections the kernel has completed but the process has not accepted yet would be
			// reset when the socket stops listening: accept them first. Each round lets the event
			// loop poll once (two immediates), which accepts every connection waiting; the rounds
			// end when one accepted none (at most a second, under a stream of new connections).
			let acceptedInRound = true;
			const accepted = () => (acceptedInRound = true);
			this.server.on("connection", accepted);
			const acceptUntil = Math.min(deadline, Date.now() + 1000);
			while (acceptedInRound && Date.now() < acceptUntil) {
				acceptedInRound = false;
				for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
			}
			this.server.off("connection", accepted);
			// net.Server's close, not http.Server's: the latter also destroys "idle" connections at
			// once, and a connection accepted whose request is not read yet counts as idle.
			let closed = false;
			const allClosed = new Promise<void>((resolve) =>
				net.Server.prototype.close.call(this.server, () => {
					closed = true;
					resolve();
				}),
			);
			for (const res of this.inFlight) if (!res.headersSent) res.setHeader("Connection", "close");
			let quietSince = Date.now();
			while (!closed && Date.now() < deadline) {
				// Idle keep-alive connections are closed only once nothing has been in flight for a
				// moment: a request already sent on one of them has been read by then.
				if (this.inFlight.size > 0) quietSince = Date.now();
				else if (Date.now() - quietSince >= DRAIN_QUIET_MS) this.server.closeIdleConnections();
				await new Promise((resolve) => setTimeout(resolve, 20));
			}
			const cut = this.inFlight.size;
			if (!closed) this.server.closeAllConnections();
			await allClosed;
			this.logger.info(`gateway drained: stopped listening${cut ? `, ${cut} request(s) cut at the deadline` : ""}`);
		},

		sendJson(this: GatewayThis, res: Response, status: number, body: unknown) {
			const payload = JSON.stringify(body);
			res.statusCode = status;
			res.setHeader("Content-Type", "application/json;charset=UTF-8");
			res.setHeader("Content-Length", Buffer.byteLength(payload));
			res.end(payload);
		},
	},

	created(this: GatewayThis) {
		this.credentials = new CredentialCache<Caller>(() => envNumber("AUTH_CACHE_SECONDS") * 1000);
		this.rateLimitPerMinute = Number(env("RATE_LIMIT")) || 0;
		this.trustedProxies = trustedProxies(env("TRUST_PROXY"));
		const redis = (this.broker.cacher as unknown as { client?: import("ioredis").default } | null)?.client;
		this.counters = redis
			? new RedisCounters(redis, `registry-${env("NAMESPACE") || "default"}-counters:`, (error) => this.logger.warn("counter store unavailable:", String(error)))
			: new MemoryCounters();
		this.throttle = new LoginThrottle(this.counters, {
			userMaxFailures: envNumber("AUTH_USER_MAX_FAILURES"),
			addressMaxFailures: envNumber("AUTH_ADDRESS_MAX_FAILURES"),
			windowSeconds: envNumber("AUTH_WINDOW_SECONDS"),
			lockoutSeconds: envNumber("AUTH_LOCKOUT_SECONDS"),
			maxLockoutSeconds: envNumber("AUTH_MAX_LOCKOUT_SECONDS"),
		});
	},

	async started(this: GatewayThis) {
		// The endpoint moleculer builds for `this.actions.rest` (service.js), built the same way.
		const restAction = (this as unknown as { _serviceSpecification: { actions: Record<string, unknown> } })._serviceSpecification.actions["api.rest"];
		this.restEndpoint = (this.broker.registry as unknown as { createPrivateActionEndpoint(action: unknown): unknown }).createPrivateActionEndpoint(restAction);
		this.prometheus = prometheusFormatter(this.broker);
		this.inFlight = new Set();
		this.draining = false;
		this.server = http.createServer((req, res) => {
			this.inFlight.add(res);
			res.once("close", () => this.inFlight.delete(res));
			// A request that still reaches a draining gateway (on an open keep-alive connection) is
			// answered, and its connection closed after the answer.
			if (this.draining) res.setHeader("Connection", "close");
			for (const [name, value] of COMMON_HEADER_ENTRIES) res.setHeader(name, value);
			try {
				// The hot anonymous lookup, answered from a local lookup's memory (services/api/lookup-fast-path.ts).
				const lookup = this.rateLimitPerMinute === 0 ? (this.broker.getLocalService("lookup") as unknown as MemoryLookup | undefined) : undefined;
				if (lookup && answerFromMemory(req, res, lookup)) return;
				// The hot authenticated read, answered from a local participants service's memory (services/api/participant-read-fast-path.ts).
				const read = this.rateLimitPerMinute === 0 ? participantReadOf(req) : null;
				const participants = read && (this.broker.getLocalService("participants") as unknown as HeldParticipantReads | undefined);
				if (read && participants?.holdsReadAnswers()) {
					void this.readFromMemory(req as Request, res, read, participants);
					return;
				}
				const served = this.serveOperational(req as Request, res);
				if (served === false) void this.httpHandler(req, res);
				else if (served !== true) served.catch((error) => this.renderError(req as Request, res, error));
			} catch (error) {
				this.renderError(req as Request, res, error);
			}
		});
		// Keep-alive connections must outlive a load balancer's idle timeout.
		this.server.keepAliveTimeout = 65000;
		// What node's HTTP parser refuses is answered in the error shape too (services/api/client-error.ts).
		this.server.on("clientError", answerClientError);
		await new Promise<void>((resolve, reject) => {
			this.server.once("error", reject);
			this.server.listen(envNumber("PORT"), () => resolve());
		});
		const address = this.server.address() as AddressInfo;
		this.settings.port = address.port;
		this.logger.info(`registry gateway listening on http://127.0.0.1:${address.port}${API_BASE}`);
	},

	async stopped(this: GatewayThis) {
		// server.ts drains on SIGTERM before the broker stops; a broker stopped otherwise (tests,
		// the CLI) drains here.
		await this.drain(SHUTDOWN_TIMEOUT_MS);
	},
};

interface GatewayThis {
	broker: import("moleculer").ServiceBroker;
	logger: import("moleculer").LoggerInstance;
	settings: { port: number | undefined };
	server: http.Server;
	/** Requests taken and not answered yet (graceful shutdown waits for them). */
	inFlight: Set<http.ServerResponse>;
	draining: boolean;
	drain(timeoutMs: number): Promise<void>;
	credentials: CredentialCache<Caller>;
	counters: Counters;
	trustedProxies: TrustedProxies;
	throttle: LoginThrottle;
	prometheus: (() => string) | null;
	openApiText?: string;
	httpHandler(req: http.IncomingMessage, res: Response): Promise<void>;
	credentialOf(header: string, req: Request): Promise<Credential>;
	readFromMemory(req: Request, res: Response, read: ParticipantRead, participants: HeldParticipantReads): Promise<void>;
	/** The endpoint of moleculer-web's private `api.rest` action (contexts of `httpHandler`). */
	restEndpoint: unknown;
	errorHandler(req: Request, res: Response, error: unknown): void;
	send404(req: Request, res: Response): void;
	renderError(req: Request, res: Response, error: unknown): void;
	sendJson(res: Response, status: number, body: unknown): void;
	serveOperational(req: Request, res: Response): boolean | Promise<void>;
	/** RATE_LIMIT, read at start; 0: no per-caller limit. */
	rateLimitPerMinute: number;
	clientAddress(req: Request): string;
	methodsOf(path: string): string[];
	enforceRateLimit(user: Caller | null, req: Request): Promise<void>;
}

export default ApiService as unknown as ServiceSchema;
