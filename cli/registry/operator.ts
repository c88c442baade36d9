import type { CallingOptions, ServiceBroker } from "moleculer";
import type { Caller } from "../../src/contract/model";
import { callerMeta } from "../../src/platform/caller-signature";

/** The caller the CLI names when it uses an API action: the operator (src/platform/permissions.ts checks every call's role; the audit trail records it). */
export const OPERATOR: Caller = { username: "registry-cli", role: "ADMIN" };

/**
 * Call options of an API action (or `accounts.exportRecords`) called by the CLI: the operator,
 * signed with the cluster key of the CLI's environment, as a gateway signs its callers
 * (src/platform/caller-signature.ts). Made per call: a signature lasts one request.
 */
export function asOperator(broker: ServiceBroker): CallingOptions {
	return { meta: callerMeta(broker, OPERATOR) };
}
