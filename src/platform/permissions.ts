/** Who may call an action, checked where it runs (docs/internals.md "Roles on every call"). */
import type { Middleware as BrokerMiddleware, ServiceBroker } from "moleculer";
import type { RegistryContext } from "./context";
import type { ClusterKeys } from "./cluster-key";
import { isAuthenticatedHere, isSignedCaller, signCaller } from "./caller-signature";
import { AccessDenied, Unauthenticated } from "../contract/errors";
import type { Caller, Role } from "../contract/model";
import { OPERATIONS } from "../contract/operations";

/** The roles an authenticated caller can have (a caller claiming ANONYMOUS is no caller). */
const CALLER_ROLES: ReadonlySet<Role> = new Set<Role>([
	"SERVICE_PROVIDER",
	"ACCESS_POINT_PROVIDER",
	"ADMIN",
	"NETWORK_AUTHORITY",
]);

/** Action → the roles of every operation that calls it (ANONYMOUS: no caller). */
export function actionRoles(): ReadonlyMap<string, ReadonlySet<Role>> {
	const roles = new Map<string, Set<Role>>();
	for (const operation of OPERATIONS) {
		const allowed = roles.get(operation.action) ?? new Set<Role>();
		for (const role of operation.roles) allowed.add(role);
		roles.set(operation.action, allowed);
	}
	return roles;
}

/** The broker middleware (src/platform/broker.ts places it outside Validator and Cacher). */
export function permissionsMiddleware(keysOf: () => ClusterKeys): BrokerMiddleware {
	const roles = actionRoles();
	let broker: ServiceBroker;
	return {
		name: "Permissions",
		created(created: ServiceBroker) {
			broker = created;
		},
		remoteAction(next: (ctx: RegistryContext) => Promise<unknown>) {
			return function signOnTheWire(ctx: RegistryContext): Promise<unknown> {
				if (ctx.meta.userSignature === undefined && isAuthenticatedHere(ctx.meta.user))
					ctx.meta.userSignature = signCaller(broker, ctx.meta.user as Caller);
				return next(ctx);
			};
		},
		localAction(
			handler: (ctx: RegistryContext) => Promise<unknown>,
			action: { name: string; roles?: readonly Role[] },
		) {
			const allowed = roles.get(action.name) ?? (action.roles ? new Set(action.roles) : undefined);
			return function checkCaller(this: unknown, ctx: RegistryContext): Promise<unknown> {
				// As sent: a node on the transporter may put anything there.
				const user = ctx.meta.user as unknown;
				if (user === undefined || user === null)
					return !allowed || allowed.has("ANONYMOUS")
						? handler.call(this, ctx)
						: Promise.reject(new Unauthenticated());
				if (!isAuthenticatedHere(user) && !isSignedCaller(keysOf(), user, ctx.meta.userSignature))
					return Promise.reject(new AccessDenied());
				if (!allowed) return handler.call(this, ctx);
				const role = (user as { role: Role }).role;
				return CALLER_ROLES.has(role) && allowed.has(role)
					? handler.call(this, ctx)
					: Promise.reject(new AccessDenied());
			};
		},
	} as unknown as BrokerMiddleware;
}
