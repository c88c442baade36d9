/**
 * Which failed calls are tried again on another node, and how (the `RetryReads` middleware,
 * registered in moleculer.config.ts). A node that dies (SIGKILL, OOM, a lost pod) sends no
 * goodbye: its peers notice when its heartbeats stop (`heartbeatTimeout`), and then reject
 * the requests still waiting for it with REQUEST_REJECTED. Those are worth a second try
 * elsewhere, but only when trying twice cannot change the outcome:
 * - SERVICE_NOT_AVAILABLE answered by a node that was stopping: it refused the request
 *   before running it, so any action may go elsewhere;
 * - REQUEST_REJECTED (the node left while the request waited): the action may or may not
 *   have run, so only reads and idempotent actions are tried again. A write answers 503 and
 *   the client decides (a repeated add answers 409 when the first one did commit).
 * A timeout is never tried again: a slow node is not helped by more load.
 *
 * Moleculer's own `retryPolicy` is not used: it also wraps local actions, so an error that
 * a local action passed on from one of its calls would re-run the whole local action (a write
 * that already committed). This middleware retries the remote call itself, and nothing else. Being a user
 * middleware, it sits inside Moleculer's Timeout middleware, so the retries count against
 * the caller's REQUEST_TIMEOUT.
 */
import type { Context, Middleware } from "moleculer";
import { OPERATIONS } from "../contract/operations";

/** Internal actions that only read, or that are idempotent by design (lookup.apply: by version). */
const INTERNAL_IDEMPOTENT = [
	"accounts.authenticate",
	"accounts.getServiceProvider",
	"accounts.serviceProviders",
	"accounts.listServiceProviders",
	"accessPoints.providers",
	"accessPoints.knownIdentifiers",
	"accessPoints.endpointsOf",
	"catalog.processesByIds",
	"catalog.allProcesses",
	"catalog.knownIdentifiers",
	"participants.countUsingProcess",
	"participants.organizationProcessSets",
	"lookup.apply",
];

/** Every GET operation of the contract, and the internal reads. */
export const IDEMPOTENT_ACTIONS: ReadonlySet<string> = new Set([
	...OPERATIONS.filter((operation) => operation.method === "GET").map((operation) => operation.action),
	...INTERNAL_IDEMPOTENT,
]);

interface CallError {
	type?: unknown;
	data?: { action?: unknown; nodeID?: unknown } | null;
}

export function shouldRetry(error: unknown): boolean {
	const { type, data } = (error ?? {}) as CallError;
	if (type === "SERVICE_NOT_AVAILABLE") return true;
	if (type === "REQUEST_REJECTED") return typeof data?.action === "string" && IDEMPOTENT_ACTIONS.has(data.action);
	return false;
}

const RETRIES = 2;
const FIRST_DELAY_MS = 100;

/** Retries a failed remote call (see above) on the next endpoint the balancer picks. */
export function retryReadsMiddleware(): Middleware {
	return {
		name: "RetryReads",
		remoteAction(
			this: import("moleculer").ServiceBroker,
			handler: (ctx: Context) => Promise<unknown>,
			action: { name: string },
		) {
			// An arrow function: `this` stays the broker that wraps the handler.
			return (ctx: Context): Promise<unknown> => {
				const state = ctx as Context & { _retryAttempts?: number };
				return handler(ctx).catch(async (error: unknown) => {
					const attempts = state._retryAttempts ?? 0;
					if (attempts >= RETRIES || !shouldRetry(error)) throw error;
					const delay = FIRST_DELAY_MS * 2 ** attempts;
					this.logger.warn(
						`${action.name} failed on node ${ctx.nodeID} (${(error as { type?: string }).type}); trying another node in ${delay} ms`,
					);
					await new Promise((resolve) => setTimeout(resolve, delay));
					const again = ctx.copy() as Context & { _retryAttempts?: number };
					again._retryAttempts = attempts + 1;
					return this.call(action.name, ctx.params, { ctx: again } as never);
				});
			};
		},
	} as unknown as Middleware;
}
