/**
 * The change feed (docs/decisions.md "Change feed", docs/internals.md "Change feed"): the audit
 * records that carry a `change` (participants and the catalog) get a sequence as `audit.record`
 * stores them, one counter for the registry, so a follower can read "every change after N".
 *
 * Relays deliver at least once and, with several writers, not always in commit order. So a
 * record already stored is never numbered again, and a change older than the one the feed
 * already gave for its record (a lower version) is kept in the trail but not numbered: the
 * feed never takes a record back to an older state. A record created again after its
 * deletion (a seed re-adding a catalog identifier) starts again at version 1.
 */
import type { Change, ChangePage, ChangedResource } from "../../src/contract/changes";
import type { Caller } from "../../src/contract/model";
import type { AuditRecord, FeedChange } from "../../src/platform/audit";
import type { OutboxMessage } from "../../src/platform/outbox-relay";
import type { Collection, Filter, ModelSpec, Store, StoredDoc, WriteOp } from "../../src/store/types";
import { eventScope } from "./audit-query";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";

/** Attempts of a recording that lost the race for the counter to another audit node. */
const RECORD_ATTEMPTS = 20;
const FEED_RESOURCES = new Set<string>(["participant", "process", "documentType", "capability"]);

/** The registry's one feed counter: the next sequence. */
interface CounterDoc extends StoredDoc {
	next: number;
}

/** The latest change the feed gave for one record (`version` is the store's, of this document). */
interface HeadDoc extends StoredDoc {
	recordVersion: number;
	deleted: boolean;
	at: string;
}

/** Numbered changes waiting for the durable channel `registry.changes` (services/audit/audit.service.ts). */
export interface FeedOutboxDoc extends OutboxMessage {
	changes: Change[];
}

export const FEED_MODELS = {
	feedCounter: { collection: "feedCounter", fields: {}, indexes: [] },
	feedHeads: { collection: "feedHeads", fields: {}, indexes: [] },
	feedOutbox: {
		collection: "feedOutbox",
		fields: { at: { kind: "string" } },
		indexes: [{ name: "at", fields: ["at"] }],
	},
} satisfies Record<string, ModelSpec>;

const COUNTER_ID = "feed";

/** What the feed reads and writes of the audit store. */
export interface FeedParts {
	events: Collection<StoredDoc & { sequence?: number | null }>;
	counter: Collection<CounterDoc>;
	heads: Collection<HeadDoc>;
	/** The audit store: its batch writes a recording. */
	store: Pick<Store, "batch">;
}

/** The stored form of an event: the record itself and its sequence (null: not in the feed). */
export type Numbered<T> = T & { sequence: number | null };

/** Another audit node took the counter (a newer version) or created it first (the same key). */
function isStale(error: unknown): boolean {
	return isStaleVersion(error) || isDuplicateKey(error);
}

/** A feed entry of a stored record, as an unrestricted reader sees it. */
export function changeOf(record: AuditRecord & { sequence: number }): Change {
	const change = record.change as FeedChange;
	return {
		sequence: record.sequence,
		at: record.at,
		operation: record.operation,
		resource: record.resource as ChangedResource,
		identifier: record.resourceId,
		version: change.version,
		deleted: change.record === null,
		record: change.record,
	};
}

/**
 * A change as this caller may see it: a service provider sees a participant only while it is
 * theirs, so the change that took one away (a transfer) is, for the old owner, its deletion.
 */
export function changeFor(caller: Caller, change: Change): Change {
	if (caller.role !== "SERVICE_PROVIDER" || change.resource !== "participant" || change.record === null)
		return change;
	const owner = (change.record as { provider?: { identifier?: string } }).provider?.identifier;
	return owner?.toLowerCase() === caller.serviceProvider?.toLowerCase()
		? change
		: { ...change, deleted: true, record: null };
}

export class ChangeFeed {
	constructor(private readonly parts: FeedParts) {}

	/**
	 * The writes that store `records` (those not stored yet), numbering the feed's changes, and
	 * the numbered changes. Run again from the start when another node took the counter meanwhile.
	 */
	async record<T extends AuditRecord>(records: T[], stored: (record: Numbered<T>) => StoredDoc): Promise<Change[]> {
		for (let attempt = 1; ; attempt++) {
			try {
				return await this.attempt(records, stored);
			} catch (error) {
				if (!isStale(error) || attempt >= RECORD_ATTEMPTS) throw error;
			}
		}
	}

	private async attempt<T extends AuditRecord>(
		records: T[],
		stored: (record: Numbered<T>) => StoredDoc,
	): Promise<Change[]> {
		const byIdentifier = new Map<string, T>();
		for (const record of records) byIdentifier.set(record.identifier, record);
		for (const doc of await this.parts.events.getMany([...byIdentifier.keys()]))
			byIdentifier.delete(doc.identifier);
		const fresh = [...byIdentifier.values()];
		if (fresh.length === 0) return [];
		const headKeys: string[] = [];
		for (const record of fresh)
			if (record.change && FEED_RESOURCES.has(record.resource)) headKeys.push(headKey(record));
		const counter = headKeys.length ? await this.parts.counter.get(COUNTER_ID) : null;
		const heads = new Map<string, HeadDoc>();
		for (const head of headKeys.length ? await this.parts.heads.getMany(headKeys) : [])
			heads.set(head.identifier, head);
		const changedHeads = new Map<string, HeadDoc>();
		let next = counter?.next ?? 1;
		const ops: WriteOp[] = [];
		const numbered: Change[] = [];
		for (const record of fresh) {
			let sequence: number | null = null;
			if (record.change && FEED_RESOURCES.has(record.resource)) {
				const key = headKey(record);
				const head = changedHeads.get(key) ?? heads.get(key);
				if (isNewer(record, head)) {
					sequence = next++;
					changedHeads.set(key, {
						identifier: key,
						recordVersion: record.change.version,
						deleted: record.change.record === null,
						at: record.at,
					});
					numbered.push(changeOf({ ...record, sequence }));
				}
			}
			ops.push({
				kind: "insert",
				collection: this.parts.events.spec.collection,
				doc: stored({ ...record, sequence }),
			});
		}
		for (const [key, head] of changedHeads) {
			const previous = heads.get(key);
			ops.push(
				previous
					? {
							kind: "replace",
							collection: this.parts.heads.spec.collection,
							doc: head,
							expectedVersion: previous.version,
						}
					: { kind: "insert", collection: this.parts.heads.spec.collection, doc: head },
			);
		}
		if (numbered.length === 0) {
			await this.parts.store.batch(ops);
			return [];
		}
		const counterDoc: CounterDoc = { identifier: COUNTER_ID, next };
		ops.push(
			counter
				? {
						kind: "replace",
						collection: this.parts.counter.spec.collection,
						doc: counterDoc,
						expectedVersion: counter.version,
					}
				: { kind: "insert", collection: this.parts.counter.spec.collection, doc: counterDoc },
		);
		ops.push({
			kind: "insert",
			collection: FEED_MODELS.feedOutbox.collection,
			doc: {
				identifier: `changes-${numbered[0].sequence}`,
				at: new Date().toISOString(),
				changes: numbered,
			} as FeedOutboxDoc,
		});
		await this.parts.store.batch(ops);
		return numbered;
	}

	/** GET /rest/api/changes: the caller's changes after `after`, oldest first. */
	async changesAfter(caller: Caller | null | undefined, after: number, limit: number): Promise<ChangePage> {
		const scope: Filter = eventScope(caller);
		const docs = (await this.parts.events.find({
			filter: { ...scope, sequence: { gte: after + 1 } },
			sort: [{ field: "sequence", direction: "asc" }],
			limit: limit + 1,
		})) as unknown as Array<AuditRecord & { sequence: number }>;
		const page = docs.slice(0, limit).map((doc) => changeFor(caller as Caller, changeOf(doc)));
		return {
			changes: page,
			cursor: String(page.length ? page[page.length - 1].sequence : after),
			more: docs.length > limit,
		};
	}
}

function headKey(record: AuditRecord): string {
	return `${record.resource}:${record.resourceId}`;
}

function isNewer(record: AuditRecord, head: HeadDoc | undefined): boolean {
	const change = record.change as FeedChange;
	if (!head) return true;
	if (change.version > head.recordVersion) return true;
	// Created again after a deletion (the same identifier; the store starts again at 1).
	return record.before === null && head.deleted && record.at >= head.at;
}
