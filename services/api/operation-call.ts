/** The alias handler's work: bind, call through the request's `api.rest` context (metrics, tracing), answer. */
import type { ServerResponse } from "node:http";
import type { Caller } from "../../src/contract/model";
import type { Operation } from "../../src/contract/operations";
import { countMetric, REGISTRY_METRICS } from "../../src/platform/registry-metrics";
import { bindParams } from "./bind";
import { fingerprintOf, idempotencyKeyOf, type Idempotency } from "./idempotency";
import type { GatewayRequest, RequestState } from "./request-state";
import { recordError, recordSuccess, writeAnswer, writeRecorded } from "./respond";

export interface OperationCallParts {
	idempotency: Idempotency;
	onServerError(req: GatewayRequest, error: unknown): void;
}

export class OperationCalls {
	constructor(private readonly parts: OperationCallParts) {}

	/** Answers the request whose hooks all passed; a failure rejects (the alias passes it to `onError`). */
	async serve(req: GatewayRequest, res: ServerResponse, state: RequestState): Promise<void> {
		const operation = state.operation as Operation;
		const params = await bindParams(req, res, state, req.$params.query);
		state.validated = params;
		const key = operation.idempotent ? idempotencyKeyOf(req.headers["idempotency-key"]) : undefined;
		if (key !== undefined && state.caller) return this.callOnce(req, res, state, params, key);
		writeAnswer(req, res, state, await req.$ctx.call(operation.action, params));
	}

	/** An add with an Idempotency-Key: the action once per caller and key, its answer recorded and replayed to retries. */
	private async callOnce(
		req: GatewayRequest,
		res: ServerResponse,
		state: RequestState,
		params: Record<string, unknown>,
		key: string,
	): Promise<void> {
		const operation = state.operation as Operation;
		const run = await this.parts.idempotency.run(
			(state.caller as Caller).username,
			key,
			fingerprintOf(operation.id, params),
			async () => {
				try {
					return recordSuccess(operation, state.mediaType, await req.$ctx.call(operation.action, params));
				} catch (error) {
					const recorded = recordError(req, error, state);
					if (recorded.status >= 500) this.parts.onServerError(req, error);
					return recorded;
				}
			},
		);
		if (run.replayed)
			countMetric(req.$ctx.broker, REGISTRY_METRICS.idempotentReplays, { action: operation.action });
		writeRecorded(res, run.answer, run.replayed ? ["idempotent-replayed", "true"] : []);
	}
}
