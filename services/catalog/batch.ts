/**
 * One catalog change: the store writes and their audit records (src/platform/audit.ts: in the same
 * batch, so the trail and the data never disagree), and the `catalog.changed` event of each record
 * written, sent once the batch committed (src/platform/events.ts).
 */
import { auditWrite } from "../../src/platform/audit";
import { catalogReference } from "./answers";
import type { Caller } from "../../src/contract/model";
import type { StoredDoc, WriteOp } from "../../src/store/types";

export type CatalogResource = "process" | "documentType" | "capability";

/** Payload of the `catalog.changed` event (docs/internals.md "Events and channels"). */
export interface CatalogChange {
	resource: CatalogResource;
	identifier: string;
	operation: "add" | "update" | "delete";
}

const COLLECTION: Record<CatalogResource, string> = {
	process: "processes",
	documentType: "documentTypes",
	capability: "capabilities",
};

/** The record as it is written and audited: the store owns `version`. */
export function withoutVersion<T extends StoredDoc>(record: T): T {
	const copy = { ...record };
	delete copy.version;
	return copy;
}

function nextVersion(before: StoredDoc): number {
	return (before.version ?? 1) + 1;
}

export class CatalogBatch {
	readonly ops: WriteOp[] = [];
	readonly changes: CatalogChange[] = [];

	constructor(
		private readonly caller: Caller | undefined,
		/** Operation id from src/contract/operations.ts, or "seed". */
		private readonly operation: string,
	) {}

	insert(resource: CatalogResource, record: StoredDoc): void {
		const doc = withoutVersion(record);
		this.ops.push({ kind: "insert", collection: COLLECTION[resource], doc });
		this.record(resource, "add", null, doc, 1);
	}

	/** Optimistic: fails with StaleVersion when someone changed `before` meanwhile. */
	replace<T extends StoredDoc>(resource: CatalogResource, before: T, after: T): void {
		const doc = withoutVersion(after);
		this.ops.push({ kind: "replace", collection: COLLECTION[resource], doc, expectedVersion: before.version });
		this.record(resource, "update", withoutVersion(before), doc, nextVersion(before));
	}

	/** Seed import: insert or replace by identifier. */
	upsert<T extends StoredDoc>(resource: CatalogResource, before: T | null, after: T): void {
		const doc = withoutVersion(after);
		this.ops.push({ kind: "upsert", collection: COLLECTION[resource], doc });
		this.record(
			resource,
			before ? "update" : "add",
			before ? withoutVersion(before) : null,
			doc,
			before ? nextVersion(before) : 1,
		);
	}

	delete(resource: CatalogResource, before: StoredDoc): void {
		this.ops.push({
			kind: "delete",
			collection: COLLECTION[resource],
			identifier: before.identifier,
			expectedVersion: before.version,
		});
		this.record(resource, "delete", withoutVersion(before), null, nextVersion(before));
	}

	get empty(): boolean {
		return this.ops.length === 0;
	}

	/** `version`: the record's store version after this write (a deletion counts as one). */
	private record(
		resource: CatalogResource,
		operation: CatalogChange["operation"],
		before: unknown,
		after: StoredDoc | null,
		version: number,
	): void {
		const identifier = ((after ?? before) as StoredDoc).identifier;
		const change: CatalogChange = { resource, identifier, operation };
		const feed = { version, record: after ? catalogReference(resource, after) : null };
		this.ops.push(
			auditWrite(this.caller, {
				operation: this.operation,
				resource,
				resourceId: identifier,
				before,
				after,
				change: feed,
			}),
		);
		this.changes.push(change);
	}
}
