import type { Caller } from "../../src/contract/model";

/** The caller the CLI names when it uses an API action: the operator (src/platform/permissions.ts checks every call's role; the audit trail records it). */
export const OPERATOR: Caller = { username: "registry-cli", role: "ADMIN" };

/** Call options of an API action called by the CLI. */
export const AS_OPERATOR = { meta: { user: OPERATOR } };
