/** The alias handler of every operation: bind, call through the request's `api.rest` context (metrics, tracing), answer. */
import type { ServerResponse } from "node:http";
import type { Caller } from "../../src/contract/model";
import type { Operation } from "../../src/contract/operations";
import { JSON_TEXT } from "../../src/platform/context";
import { countMetric, REGISTRY_METRICS } from "../../src/platform/registry-metrics";
import { bindParams } from "./bind";
import { fingerprintOf, idempotencyKeyOf, type Idempotency } from "./idempotency";
import type { GatewayRequest, RequestState } from "./request-state";
import { recordError, recordSuccess, writeAnswer, writeRecorded } from "./respond";

/** What the alias handler uses of its gateway (`this.operationCalls`). */
export interface OperationCallParts {
	idempotency: Idempotency;
	onServerError(req: GatewayRequest, error: unknown): void;
}

/**
 * moleculer-web's alias handler (`this`: the gateway) for a request whose hooks all passed. A failure goes to
 * `next`, and so to `onError`; it never calls `next()` without an error: moleculer-web would answer 500.
 */
export async function serveOperation(
	this: { operationCalls: OperationCallParts },
	req: GatewayRequest,
	res: ServerResponse,
	next: (error?: unknown) => void,
): Promise<void> {
	try {
		const state = req.$ctx.locals.request!;
		const operation = state.operation as Operation;
		const params = await bindParams(req, res, state, req.$params.query);
		state.validated = params;
		const key = operation.idempotent ? idempotencyKeyOf(req.headers["idempotency-key"]) : undefined;
		if (key !== undefined && state.caller) return await callOnce(this.operationCalls, req, res, state, params, key);
		// The action may answer with the JSON text it keeps, written as is (src/platform/context.ts).
		const answer = await req.$ctx.call(operation.action, params, { meta: { $textAnswer: operation.action } });
		writeAnswer(req, res, state, answer, req.$ctx.meta.$responseType === JSON_TEXT);
	} catch (error) {
		next(error);
	}
}

/** An add with an Idempotency-Key: the action once per caller and key, its answer recorded and replayed to retries. */
async function callOnce(
	parts: OperationCallParts,
	req: GatewayRequest,
	res: ServerResponse,
	state: RequestState,
	params: Record<string, unknown>,
	key: string,
): Promise<void> {
	const operation = state.operation as Operation;
	const run = await parts.idempotency.run(
		(state.caller as Caller).username,
		key,
		fingerprintOf(operation.id, params),
		async () => {
			try {
				return recordSuccess(operation, state.contentType, await req.$ctx.call(operation.action, params));
			} catch (error) {
				const recorded = recordError(req, error, state);
				if (recorded.status >= 500) parts.onServerError(req, error);
				return recorded;
			}
		},
	);
	if (run.replayed) countMetric(req.$ctx.broker, REGISTRY_METRICS.idempotentReplays, { action: operation.action });
	writeRecorded(res, run.answer, run.replayed ? ["idempotent-replayed", "true"] : []);
}
