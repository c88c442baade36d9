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

/** The refusal of a call by `user` (ctx.meta.user as sent) to an action allowed for `allowed`, or null to let it run. */
function refusal(user: unknown, allowed: ReadonlySet<Role>): Error | null {
	if (user === undefined || user === null) return allowed.has("ANONYMOUS") ? null : new Unauthenticated();
	const role = (user as { role?: unknown }).role;
	return typeof role === "string" && CALLER_ROLES.has(role as Role) && allowed.has(role as Role)
		? null
		: new AccessDenied();
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
				const refused = refusal(ctx.meta.user as unknown, allowed);
				return refused ? Promise.reject(refused) : handler.call(this, ctx);
			};
		},
	} as unknown as BrokerMiddleware;
}
