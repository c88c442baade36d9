/**
 * audit: the registry's audit trail (decisions §6 last bullet; docs/operations.md "Audit
 * trail"). Owns `auditEvents`. Every writing service puts one audit record per change into
 * its own `auditOutbox` in the change's batch; its relay (mixins/outbox.mixin.ts)
 * brings those records here with `audit.record`, at least once. The record identifier is
 * the document identifier, so a record delivered twice is stored once.
 *
 * `audit.find` is GET /rest/api/events: a service provider sees the records that name its
 * provider (its participants' changes, both sides of a transfer), ADMIN and
 * NETWORK_AUTHORITY everything. Newest first unless sorted otherwise.
 *
 * `audit.changes` is GET /rest/api/changes, the change feed (services/audit/feed.ts), in the
 * same scope; each numbered change is also published on the durable channel `registry.changes`
 * through the `feedOutbox` written with it.
 */
import type { Service, ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { DbMixin } from "../../mixins/db.mixin";
import type { AuditRecord } from "../../src/platform/audit";
import { eventsFilter, type EventsQuery } from "./audit-query";
import { ChangeFeed, FEED_MODELS, type FeedOutboxDoc, type FeedParts, type Numbered } from "./feed";
import { changesLimit, parseCursor, type ChangePage } from "../../src/contract/changes";
import { publishOnChannel, REGISTRY_CHANGES } from "../../src/platform/channels";
import { broadcastEvents, EVENTS } from "../../src/platform/events";
import { OutboxRelay } from "../../src/platform/outbox-relay";
import { SORTABLE } from "../../src/contract/operations";
import { DEFAULT_PAGE_SIZE, pageOf, type Page, type PageRequest } from "../../src/contract/paging";
import type { Collection, ModelSpec, SortKey, Store, StoredDoc } from "../../src/store/types";
import { pageRequestRule } from "../../src/contract/schemas";

/** A stored audit record, with the fields its filters need. */
export interface AuditEventDoc extends AuditRecord, StoredDoc {
	/** The participant's identifier when the record is about one, else null. */
	participant: string | null;
	/** The participant's organization (`icd:organizationidentifier`, case-folded), else null. */
	organizationKey: string | null;
	/** Its place in the change feed; null when it is not in the feed (services/audit/feed.ts). */
	sequence: number | null;
}

export const AUDIT_EVENTS_MODEL: ModelSpec = {
	collection: "auditEvents",
	fields: {
		at: { kind: "string" },
		operation: { kind: "string" },
		resource: { kind: "string" },
		resourceId: { kind: "string" },
		participant: { kind: "string" },
		organizationKey: { kind: "string" },
		serviceProviders: { kind: "stringArray" },
		"actor.username": { kind: "string" },
		sequence: { kind: "number" },
	},
	indexes: [
		{ name: "at", fields: ["at"] },
		{ name: "participant_at", fields: ["participant", "at"] },
		{ name: "organizationKey_at", fields: ["organizationKey", "at"] },
		{ name: "operation_at", fields: ["operation", "at"] },
		{ name: "resource_resourceId", fields: ["resource", "resourceId"] },
		{ name: "actor_at", fields: ["actor.username", "at"] },
		{ name: "serviceProviders", fields: ["serviceProviders"] },
		{ name: "sequence", fields: ["sequence"] },
		{ name: "serviceProviders_sequence", fields: ["serviceProviders", "sequence"] },
	],
};

/** How often the feed's outbox is looked at without a kick (a publish that failed is tried again then). */
const OUTBOX_RELAY_INTERVAL_MS = 5000;

/** Newest first: what an operator looking at a trail wants first. */
const DEFAULT_ORDER: SortKey[] = [{ field: "at", direction: "desc" }];

interface AuditService extends Service {
	store: Store;
	collections: {
		auditEvents: Collection<AuditEventDoc>;
		feedCounter: FeedParts["counter"];
		feedHeads: FeedParts["heads"];
		feedOutbox: Collection<FeedOutboxDoc>;
	};
	feed: ChangeFeed;
	/** Made once the store is open (started). */
	feedRelay: OutboxRelay<FeedOutboxDoc>;
}

const QUERY_VALUE = { type: "string", optional: true, max: 1000 };

const RECORD = {
	type: "object",
	props: {
		identifier: { type: "string", empty: false },
		at: { type: "string", empty: false },
		operation: { type: "string", empty: false },
		resource: { type: "string", empty: false },
		resourceId: { type: "string" },
		serviceProviders: { type: "array", items: "string", optional: true },
	},
};

/** The stored document of a record: the record itself, plus the participant it concerns and its place in the feed. */
function eventDoc(record: Numbered<AuditRecord>): AuditEventDoc {
	const aboutParticipant = record.resource === "participant";
	const serviceProviders: string[] = [];
	for (const provider of record.serviceProviders ?? []) serviceProviders.push(provider.toLowerCase());
	const image = (record.after ?? record.before) as { organizationKey?: unknown } | null;
	return {
		identifier: record.identifier,
		at: record.at,
		actor: record.actor ?? null,
		operation: record.operation,
		resource: record.resource,
		resourceId: record.resourceId,
		serviceProviders,
		before: record.before ?? null,
		after: record.after ?? null,
		participant: aboutParticipant ? record.resourceId : null,
		organizationKey: aboutParticipant && typeof image?.organizationKey === "string" ? image.organizationKey : null,
		...(record.change ? { change: record.change } : {}),
		sequence: record.sequence,
	};
}

/** An item of the events page (resource schema AuditEvent). */
function eventAnswer(doc: AuditEventDoc): AuditRecord {
	return {
		identifier: doc.identifier,
		at: doc.at,
		actor: doc.actor ?? null,
		operation: doc.operation,
		resource: doc.resource,
		resourceId: doc.resourceId,
		serviceProviders: doc.serviceProviders ?? [],
		before: doc.before ?? null,
		after: doc.after ?? null,
	};
}

const AuditServiceSchema: ServiceSchema<Record<string, never>, AuditService> = {
	name: "audit",
	mixins: [DbMixin({ auditEvents: AUDIT_EVENTS_MODEL, ...FEED_MODELS })],

	actions: {
		/** Internal: the relays deliver here. Idempotent: a record already stored is left as it is. */
		record: {
			visibility: "public",
			params: { records: { type: "array", items: RECORD, max: 10000 } },
			async handler(
				this: AuditService,
				ctx: RegistryContext<{ records: AuditRecord[] }>,
			): Promise<{ recorded: number }> {
				const numbered = await this.feed.record(ctx.params.records, eventDoc);
				if (numbered.length > 0) {
					void this.feedRelay.kick();
					// Followers that miss it read on at their next poll.
					await broadcastEvents(this.broker, [
						{ name: EVENTS.changesRecorded, payload: { sequence: numbered[numbered.length - 1].sequence } },
					]);
				}
				return { recorded: ctx.params.records.length };
			},
		},

		/** GET /rest/api/changes (src/contract/operations.ts `findChanges`). */
		changes: {
			params: {
				after: { type: "string", optional: true, max: 100 },
				limit: { type: "number", integer: true, optional: true },
			},
			handler(this: AuditService, ctx: RegistryContext<{ after?: string; limit?: number }>): Promise<ChangePage> {
				return this.feed.changesAfter(
					ctx.meta.user,
					parseCursor("after", ctx.params.after),
					changesLimit(ctx.params.limit),
				);
			},
		},

		/** GET /rest/api/events (src/contract/operations.ts `findEvents`). */
		find: {
			params: {
				pageRequest: pageRequestRule(SORTABLE.events),
				participant: QUERY_VALUE,
				operation: QUERY_VALUE,
				from: QUERY_VALUE,
				to: QUERY_VALUE,
			},
			async handler(
				this: AuditService,
				ctx: RegistryContext<EventsQuery & { pageRequest?: PageRequest }>,
			): Promise<Page<AuditRecord>> {
				const filter = eventsFilter(ctx.meta.user, ctx.params);
				const page = ctx.params.pageRequest ?? { page: 0, size: DEFAULT_PAGE_SIZE, sort: [] };
				// Ties within a sort key: newest first (a client's `sort=at,...` decides itself).
				const sort = page.sort.some((key) => key.field === "at") ? page.sort : [...page.sort, ...DEFAULT_ORDER];
				const [docs, total] = await Promise.all([
					this.collections.auditEvents.find({
						filter,
						sort,
						offset: page.page * page.size,
						limit: page.size,
					}),
					this.collections.auditEvents.count({ filter }),
				]);
				return pageOf(docs.map(eventAnswer), total, page);
			},
		},
	},

	started(this: AuditService) {
		const { auditEvents, feedCounter, feedHeads, feedOutbox } = this.collections;
		this.feed = new ChangeFeed({
			events: auditEvents,
			counter: feedCounter,
			heads: feedHeads,
			store: this.store,
		});
		this.feedRelay = new OutboxRelay<FeedOutboxDoc>({
			name: "audit changes",
			outbox: feedOutbox,
			deliver: async (batches) => {
				for (const batch of batches)
					for (const change of batch.changes) await publishOnChannel(this.broker, REGISTRY_CHANGES, change);
			},
			logger: this.logger,
		});
		this.feedRelay.start(OUTBOX_RELAY_INTERVAL_MS);
	},

	async stopped(this: AuditService) {
		// None when the store did not open.
		await this.feedRelay?.stop();
	},
};

export default AuditServiceSchema;
