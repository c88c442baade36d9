/**
 * Audit records (decisions §6): a change's batch inserts its record into the store's `auditOutbox`, so the
 * record exists exactly when the change does; a relay takes it to the audit log (docs/internals.md "Audit trail").
 */
import type { Caller } from "../contract/model";
import type { ModelSpec, WriteOp } from "../store/types";
import { newRecordIdentifier } from "./record-identifier";

export interface AuditRecord {
	identifier: string;
	/** ISO 8601 instant (UTC). */
	at: string;
	/** `viaToken`: the change came with an OAuth access token (decisions §15), not a password. */
	actor: { username: string; role: string; serviceProvider?: string; viaToken?: true } | null;
	/** Operation id from src/contract/operations.ts (e.g. "addParticipant"), or an internal name (e.g. "seed"). */
	operation: string;
	resource:
		| "participant"
		| "process"
		| "documentType"
		| "capability"
		| "accessPoint"
		| "accessPointProvider"
		| "serviceProvider"
		| "account"
		| "transfer";
	resourceId: string;
	/** Service providers entitled to see this record (the participant's owner(s), before and after a transfer). */
	serviceProviders: string[];
	before: unknown;
	after: unknown;
	/** A change of a record the change feed carries (participants, the catalog): see FeedChange. */
	change?: FeedChange;
}

/** What the change feed says of a change: the record's new version and reference form (null: deleted). */
export interface FeedChange {
	version: number;
	record: unknown;
}

export const AUDIT_OUTBOX_MODEL: ModelSpec = {
	collection: "auditOutbox",
	fields: { at: { kind: "string" } },
	indexes: [{ name: "at", fields: ["at"] }],
};

/** Strips secrets from a before/after image (account password hashes never enter the trail). */
function redact(value: unknown): unknown {
	if (value === null || typeof value !== "object") return value ?? null;
	const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
	delete copy.passwordHash;
	delete copy.password;
	delete copy.keyHash;
	delete copy.key;
	return copy;
}

/** The insert of a change's audit record into the outbox: it goes into the same batch as the change it records. */
export function auditWrite(
	caller: Caller | undefined | null,
	fields: Omit<AuditRecord, "identifier" | "at" | "actor" | "before" | "after" | "serviceProviders" | "change"> & {
		before?: unknown;
		after?: unknown;
		serviceProviders?: string[];
		change?: FeedChange;
	},
): WriteOp {
	const record: AuditRecord = {
		identifier: newRecordIdentifier(),
		at: new Date().toISOString(),
		actor: caller
			? {
					username: caller.username,
					role: caller.role,
					...(caller.serviceProvider ? { serviceProvider: caller.serviceProvider } : {}),
					...(caller.viaToken ? { viaToken: true as const } : {}),
				}
			: null,
		operation: fields.operation,
		resource: fields.resource,
		resourceId: fields.resourceId,
		serviceProviders: fields.serviceProviders ?? [],
		before: redact(fields.before),
		after: redact(fields.after),
		...(fields.change ? { change: fields.change } : {}),
	};
	return { kind: "insert", collection: AUDIT_OUTBOX_MODEL.collection, doc: record };
}
