/**
 * The one path every API request takes (docs/internals.md "The request path"). Each step is a
 * function of what the steps before it found; the first that fails answers, in this order:
 *
 *   match      404 unknown path, 405 wrong method (services/api/routes.ts)
 *   identify   429 login throttled, 401 bad credentials (services/api/authenticate.ts)
 *   admit      401 no credentials when no operation of the route is open to ANONYMOUS
 *   negotiate  400 participant path form, 406 Accept, 415 Content-Type (src/contract/negotiation.ts)
 *   authorize  401 anonymous, 403 role (the operation's roles)
 *   limit      429 rate limit (services/api/rate-limit.ts)
 *   held       the answer the gateway holds, if any (services/api/held-answers.ts)
 *   bind       400 path parameters, paging, query, headers, body (services/api/bind.ts)
 *   once       an add with an Idempotency-Key: the first answer again, 422 (services/api/idempotency.ts)
 *   call       the operation's action, then the answer, its ETag, 304 (services/api/respond.ts)
 *
 * Held answers come after every check, so they are refused exactly as the full path refuses;
 * they are counted in the action's request metrics and traced like it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServiceBroker, Span } from "moleculer";
import { AccessDenied, NotFound, RegistryError } from "../../src/contract/errors";
import type { Caller } from "../../src/contract/model";
import { checkContentType, responseMediaType, selectByAccept, selectByPathForm, type OperationGroup } from "../../src/contract/negotiation";
import type { Operation } from "../../src/contract/operations";
import { countHeldAnswer, countReplay } from "../../src/platform/metrics-middleware";
import { BEHIND_NOTICES_META, HEARD_NOTICES_META, noticesOf } from "../../src/platform/notices";
import { answerParts } from "./answer-body";
import { tooManyRequests, unauthorized, type Authenticator } from "./authenticate";
import { bindParams } from "./bind";
import type { HeldAnswer, HeldAnswers, HoldSlot } from "./held-answers";
import type { RateLimiter } from "./rate-limit";
import { fingerprintOf, idempotencyKeyOf, type Idempotency } from "./idempotency";
import { isReadable, recordError, recordSuccess, requestIdOf, writeAnswer, writeError, writeRecorded } from "./respond";
import { matchRoute } from "./routes";

/** The caller label of the gateway's calls in the request metrics (the service's name). */
const CALLER = "api";

export interface PipelineParts {
	broker: ServiceBroker;
	authenticator: Authenticator;
	rateLimiter: RateLimiter;
	held: HeldAnswers;
	idempotency: Idempotency;
	clientAddress(req: IncomingMessage): string;
	onServerError(req: IncomingMessage, error: unknown): void;
}

/** What the steps found out about a request. */
interface Admitted {
	operation: Operation;
	caller: Caller | null;
	pathValues: Record<string, string>;
	mediaType: string;
}

export class RequestPipeline {
	constructor(private readonly parts: PipelineParts) {}

	/**
	 * Answers one request; never throws (every failure is an answer in the error shape). It runs
	 * synchronously as long as no step has to wait (an anonymous caller or a remembered
	 * credential, a held answer): a promise per step cost more than the steps themselves.
	 */
	handle(req: IncomingMessage, res: ServerResponse, path: string): void | Promise<void> {
		const started = process.hrtime.bigint();
		const requestId = requestIdOf(req);
		const span = this.parts.broker.isTracingEnabled() ? this.parts.broker.tracer.startSpan(`${req.method} ${path}`, { tags: { method: req.method, path }, traceID: requestId } as never) : null;
		try {
			const admitted = this.admit(req, path);
			if (!(admitted instanceof Promise)) return this.serve(req, res, requestId, admitted, started, span);
			return admitted.then(
				(found) => this.serve(req, res, requestId, found, started, span),
				(error) => this.fail(req, res, requestId, error, null, undefined, span),
			);
		} catch (error) {
			return this.fail(req, res, requestId, error, null, undefined, span);
		}
	}

	/** match → identify → admit → negotiate → authorize → limit. */
	private admit(req: IncomingMessage, path: string): Admitted | Promise<Admitted> {
		const method = req.method ?? "GET";
		const route = matchRoute(method, path);
		if (!route) throw new RegistryError(404, "NotFoundException", `No endpoint ${method} ${path}`);
		if ("allowed" in route) throw methodNotAllowed(method, route.allowed);
		const address = this.parts.clientAddress(req);
		const caller = this.parts.authenticator.authenticate(req, address);
		if (caller instanceof Promise) return caller.then((found) => this.authorized(req, route.group, route.pathValues, address, found));
		return this.authorized(req, route.group, route.pathValues, address, caller);
	}

	private authorized(req: IncomingMessage, group: OperationGroup, pathValues: Record<string, string>, address: string, caller: Caller | null): Admitted {
		if (!caller && group.operations.every((operation) => !operation.roles.includes("ANONYMOUS"))) throw unauthorized("Full authentication is required to access this resource");
		const operation = selectByAccept(selectByPathForm(group.operations, pathValues), req.headers.accept);
		if (operation.body) checkContentType(operation, req.headers["content-type"]);
		if (!caller && !operation.roles.includes("ANONYMOUS")) throw unauthorized("Full authentication is required to access this resource");
		if (caller && !operation.roles.includes(caller.role)) throw new AccessDenied();
		if (this.parts.rateLimiter.enabled) {
			const wait = this.parts.rateLimiter.take(caller ? `user:${caller.username}` : `addr:${address}`);
			if (wait > 0) throw tooManyRequests(wait, `Rate limit of ${this.parts.rateLimiter.perMinute} requests per minute exceeded`);
		}
		return { operation, caller, pathValues, mediaType: responseMediaType(operation, req.headers.accept) };
	}

	/** held, or bind → call. */
	private serve(req: IncomingMessage, res: ServerResponse, requestId: string, admitted: Admitted, started: bigint, span: Span | null): void | Promise<void> {
		const slot = this.parts.held.slotOf(admitted.operation, admitted.caller, admitted.pathValues);
		const held = slot && this.parts.held.get(slot);
		if (!held) return this.bindAndCall(req, res, requestId, admitted, slot, span);
		try {
			this.answerHeld(req, res, requestId, admitted, held, started, span);
			span?.finish();
		} catch (error) {
			this.fail(req, res, requestId, error, admitted, undefined, span);
		}
	}

	private async bindAndCall(req: IncomingMessage, res: ServerResponse, requestId: string, admitted: Admitted, slot: HoldSlot | null, span: Span | null): Promise<void> {
		let validated: unknown;
		try {
			const params = await bindParams(req, res, admitted.operation, admitted.pathValues);
			validated = params;
			const key = admitted.operation.idempotent ? idempotencyKeyOf(req.headers["idempotency-key"]) : undefined;
			if (key !== undefined && admitted.caller) await this.callOnce(req, res, requestId, admitted, params, key, span);
			else await this.call(req, res, requestId, admitted, params, slot, span);
			span?.finish();
		} catch (error) {
			this.fail(req, res, requestId, error, admitted, validated, span);
		}
	}

	private fail(req: IncomingMessage, res: ServerResponse, requestId: string, error: unknown, admitted: Admitted | null, validated: unknown, span: Span | null): void {
		const status = writeError(req, res, requestId, error, admitted?.operation.body?.objectName, validated);
		if (status >= 500) this.parts.onServerError(req, error);
		span?.setError(error as Error);
		span?.finish();
	}

	/** A held answer (or held 404), written and counted as a request of the action. */
	private answerHeld(req: IncomingMessage, res: ServerResponse, requestId: string, admitted: Admitted, held: HeldAnswer, started: bigint, span: Span | null): void {
		const { operation } = admitted;
		if ("notFound" in held) writeError(req, res, requestId, NotFound.organization(admitted.pathValues.qualifiedIdentifier));
		else writeAnswer(req, res, requestId, operation, admitted.mediaType, true, held.parts);
		const milliseconds = Number(process.hrtime.bigint() - started) / 1e6;
		const service = operation.action.slice(0, operation.action.indexOf("."));
		countHeldAnswer(this.parts.broker, service, operation.action, CALLER, this.parts.broker.getLocalService(service) ? "local" : "remote", milliseconds);
		if (span) span.startSpan(`action '${operation.action}'`, { tags: { action: operation.action, held: true } } as never).finish();
	}

	/** An add with an Idempotency-Key: the action once per caller and key, its answer recorded and replayed to retries. */
	private async callOnce(req: IncomingMessage, res: ServerResponse, requestId: string, admitted: Admitted, params: Record<string, unknown>, key: string, span: Span | null): Promise<void> {
		const { operation, caller } = admitted;
		const run = await this.parts.idempotency.run((caller as Caller).username, key, fingerprintOf(operation.id, params), async () => {
			try {
				const answer = await this.parts.broker.call(operation.action, params, { meta: { user: caller }, caller: CALLER, requestID: requestId, ...(span ? { parentSpan: span } : {}) } as never);
				return recordSuccess(operation, admitted.mediaType, answer);
			} catch (error) {
				const recorded = recordError(req, error, operation.body?.objectName, params);
				if (recorded.status >= 500) this.parts.onServerError(req, error);
				return recorded;
			}
		});
		if (run.replayed) countReplay(this.parts.broker, operation.action);
		writeRecorded(req, res, requestId, run.answer, run.replayed ? ["Idempotent-Replayed", "true"] : []);
	}

	/** bind → the action → the answer, held when its slot says so and no notice about it came meanwhile. */
	private async call(req: IncomingMessage, res: ServerResponse, requestId: string, admitted: Admitted, params: Record<string, unknown>, slot: HoldSlot | null, span: Span | null): Promise<void> {
		const { broker, held } = this.parts;
		const { operation, caller } = admitted;
		const meta: Record<string, unknown> = { user: caller };
		const holding = slot !== null && noticesOf(broker).trusted;
		const token = holding ? held.begin(slot) : 0;
		if (holding) meta[HEARD_NOTICES_META] = noticesOf(broker).heard;
		let answer: unknown;
		try {
			answer = await broker.call(operation.action, params, { meta, caller: CALLER, requestID: requestId, ...(span ? { parentSpan: span } : {}) } as never);
		} catch (error) {
			if (holding) held.settle(slot, token, slot.holdsNotFound && isNotFound(error) && !meta[BEHIND_NOTICES_META] ? { notFound: true } : null);
			throw error;
		}
		const parts = answer === null || answer === undefined || operation.status === 204 || isReadable(answer) ? null : answerParts(answer, holding);
		if (holding) held.settle(slot, token, parts && !meta[BEHIND_NOTICES_META] ? { parts } : null);
		writeAnswer(req, res, requestId, operation, admitted.mediaType, answer, parts);
	}
}

function isNotFound(error: unknown): boolean {
	const { code, type } = (error ?? {}) as { code?: unknown; type?: unknown };
	return code === 404 && type === "NotFoundException";
}

function methodNotAllowed(method: string, allowed: string[]): RegistryError {
	return new RegistryError(405, "HttpRequestMethodNotSupportedException", `Request method '${method}' is not supported`, { allow: allowed });
}
