/**
 * The operations table's roles, enforced on the node that runs the action (docs/internals.md
 * "Roles on every call"): the gateway refuses a role before it calls, and this broker
 * middleware refuses it again for a call that reaches the action some other way (another node
 * on the transporter, the REPL, a test). An action of the table may be called by the roles of
 * the operations that call it; actions outside the table (internal ones) are not checked here.
 * There is no system bypass: system work (relays, sweepers, seeding, bootstrap, jobs, the
 * lookup rebuild) calls internal actions only, so nothing in meta can switch the check off.
 */
import type { Middleware as BrokerMiddleware } from "moleculer";
import type { RegistryContext } from "./context";
import { AccessDenied, Unauthenticated } from "../contract/errors";
import type { Role } from "../contract/model";
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
export function permissionsMiddleware(): BrokerMiddleware {
	const roles = actionRoles();
	return {
		name: "Permissions",
		localAction(handler: (ctx: RegistryContext) => Promise<unknown>, action: { name: string }) {
			const allowed = roles.get(action.name);
			if (!allowed) return handler;
			return function checkRole(this: unknown, ctx: RegistryContext): Promise<unknown> {
				// As sent: a node on the transporter may put anything there.
				const user = ctx.meta.user as unknown;
				if (user === undefined || user === null)
					return allowed.has("ANONYMOUS") ? handler.call(this, ctx) : Promise.reject(new Unauthenticated());
				const role = (user as { role?: unknown }).role as Role;
				return CALLER_ROLES.has(role) && allowed.has(role)
					? handler.call(this, ctx)
					: Promise.reject(new AccessDenied());
			};
		},
	} as unknown as BrokerMiddleware;
}
