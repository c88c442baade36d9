/**
 * The alias handler's work, behind every check of the hooks (docs/internals.md "The request
 * path"): the held answer if there is one, else bind the action's params, run an add with an
 * Idempotency-Key once, call the operation's action through the request's `api.rest` context
 * (so its metrics and tracing see the call as the request's), and write the answer.
 */
import type { ServerResponse } from "node:http";
import { NotFound } from "../../src/contract/errors";
import type { Caller } from "../../src/contract/model";
import type { Operation } from "../../src/contract/operations";
import { countReplay, heldAnswerCounter, type HeldAnswerCounter } from "../../src/platform/metrics-middleware";
import { BEHIND_NOTICES_META, HEARD_NOTICES_META, noticesOf } from "../../src/platform/notices";
import type { ServiceBroker } from "moleculer";
import { heldBodyOf } from "./answer-body";
import { bindParams } from "./bind";
import type { HeldAnswer, HeldAnswers, HoldSlot } from "./held-answers";
import { fingerprintOf, idempotencyKeyOf, type Idempotency } from "./idempotency";
import type { GatewayRequest, RequestState } from "./request-state";
import {
	isReadable,
	recordError,
	recordSuccess,
	writeAnswer,
	writeError,
	writeHeldAnswer,
	writeRecorded,
} from "./respond";

export interface OperationCallParts {
	broker: ServiceBroker;
	held: HeldAnswers;
	idempotency: Idempotency;
	onServerError(req: GatewayRequest, error: unknown): void;
}

export class OperationCalls {
	/** The counter of each held operation's answers, with the labels of the call it stands for (found once: a service does not move between processes). */
	private readonly counters = new Map<string, { caller: string; level: number; counter: HeldAnswerCounter }>();

	constructor(private readonly parts: OperationCallParts) {}

	private counterOf(action: string, ctx: GatewayRequest["$ctx"]): HeldAnswerCounter {
		const caller = ctx.service?.fullName ?? "api";
		const level = ctx.level + 1;
		const known = this.counters.get(action);
		if (known && known.caller === caller && known.level === level) return known.counter;
		const service = action.slice(0, action.indexOf("."));
		const type = this.parts.broker.getLocalService(service) ? "local" : "remote";
		const counter = heldAnswerCounter(this.parts.broker, { service, action, caller, level, type });
		this.counters.set(action, { caller, level, counter });
		return counter;
	}

	/**
	 * Answers the request whose hooks all passed. Synchronous for a held answer; a failure is
	 * passed to `fail` (moleculer-web's alias `next(error)`, which ends in `onError`).
	 */
	serve(req: GatewayRequest, res: ServerResponse, state: RequestState, fail: (error: unknown) => void): void {
		const slot = this.parts.held.slotOf(state.operation as Operation, state.caller, state.path);
		const held = slot && this.parts.held.get(slot);
		if (held) return this.answerHeld(req, res, state, held);
		this.bindAndCall(req, res, state, slot).catch(fail);
	}

	/** A held answer (or held 404), written and counted as a request of the action. */
	private answerHeld(req: GatewayRequest, res: ServerResponse, state: RequestState, held: HeldAnswer): void {
		const started = performance.now();
		const operation = state.operation as Operation;
		if ("notFound" in held) writeError(req, res, NotFound.organization(state.path.qualifiedIdentifier.text), state);
		else writeHeldAnswer(req, res, state, held);
		const ctx = req.$ctx;
		this.counterOf(operation.action, ctx).count(performance.now() - started);
		if (ctx.tracing)
			ctx.finishSpan(
				ctx.startSpan(`action '${operation.action}'`, {
					tags: { action: operation.action, held: true },
				} as never),
			);
	}

	private async bindAndCall(
		req: GatewayRequest,
		res: ServerResponse,
		state: RequestState,
		slot: HoldSlot | null,
	): Promise<void> {
		const operation = state.operation as Operation;
		const params = await bindParams(req, res, state, req.$params.query);
		state.validated = params;
		const key = operation.idempotent ? idempotencyKeyOf(req.headers["idempotency-key"]) : undefined;
		if (key !== undefined && state.caller) await this.callOnce(req, res, state, params, key);
		else await this.call(req, res, state, params, slot);
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
		if (run.replayed) countReplay(this.parts.broker, operation.action);
		writeRecorded(req, res, run.answer, run.replayed ? ["idempotent-replayed", "true"] : []);
	}

	/** The action, then the answer, held when its slot says so and no notice about it came meanwhile. */
	private async call(
		req: GatewayRequest,
		res: ServerResponse,
		state: RequestState,
		params: Record<string, unknown>,
		slot: HoldSlot | null,
	): Promise<void> {
		const { broker, held } = this.parts;
		const operation = state.operation as Operation;
		const ctx = req.$ctx;
		const holding = slot !== null && noticesOf(broker).trusted;
		const token = holding ? held.begin(slot) : 0;
		let answer: unknown;
		try {
			answer = await ctx.call(
				operation.action,
				params,
				holding ? { meta: { [HEARD_NOTICES_META]: noticesOf(broker).heard } } : undefined,
			);
		} catch (error) {
			if (holding)
				held.settle(
					slot,
					token,
					slot.holdsNotFound && isNotFound(error) && !ctx.meta[BEHIND_NOTICES_META]
						? { notFound: true }
						: null,
				);
			throw error;
		}
		const json =
			answer === null || answer === undefined || operation.status === 204 || isReadable(answer)
				? null
				: JSON.stringify(answer);
		if (!holding || json === null) {
			if (holding) held.settle(slot, token, null);
			return writeAnswer(req, res, state, answer, json);
		}
		const body = heldBodyOf(json, operation.entityTag === true);
		held.settle(slot, token, ctx.meta[BEHIND_NOTICES_META] ? null : body);
		writeHeldAnswer(req, res, state, body);
	}
}

function isNotFound(error: unknown): boolean {
	const { code, type } = (error ?? {}) as { code?: unknown; type?: unknown };
	return code === 404 && type === "NotFoundException";
}
