/** The `RetryReads` middleware (docs/operations.md "When Redis, NATS or a node goes away"). */
import type { Context, Middleware } from "moleculer";
import { OPERATIONS } from "../contract/operations";

/** Internal actions that only read. */
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
];

/** Every GET operation of the contract, and the internal reads. */
const IDEMPOTENT_ACTIONS: ReadonlySet<string> = new Set([
	...OPERATIONS.filter((operation) => operation.method === "GET").map((operation) => operation.action),
	...INTERNAL_IDEMPOTENT,
]);

function shouldRetry(error: unknown): boolean {
	const { type, data } = (error ?? {}) as { type?: unknown; data?: { action?: unknown } | null };
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
