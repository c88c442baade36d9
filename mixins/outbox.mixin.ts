/**
 * The outbox relays of a service that writes (src/platform/outbox-relay.ts; docs/internals.md "Audit
 * trail" and "Notices"). Each change's batch holds its audit record in `auditOutbox` and,
 * where other processes hold what it makes stale, its notices in `noticeOutbox`; this mixin
 * forwards them (audit records to `audit.record`, notices to the notice bus) and deletes
 * exactly what was acknowledged. A relay runs
 *   - after each committed write: the service calls `this.relayOutboxes()` (fire-and-forget,
 *     coalesced), or awaits `this.relayNoticesNow()` when the change must be heard before
 *     its request answers;
 *   - at start, when the services of the cluster change (e.g. `audit` came up), and every
 *     `settings.auditRelayIntervalMs` (default 5 s): what a failed or skipped run left behind.
 * Nothing is lost while `audit` or NATS is away: the records wait in the outbox.
 *
 *   mixins: [OutboxMixin(), DbMixin({ ..., auditOutbox: AUDIT_OUTBOX_MODEL, noticeOutbox: NOTICE_OUTBOX_MODEL })]
 *
 * List it BEFORE DbMixin: Moleculer starts the later mixin first, so the store is open when
 * this mixin starts, and stops this mixin (waiting for a run) before the store closes.
 */
import type { Service, ServiceSchema } from "moleculer";
import { isActionAvailable } from "../src/platform/broker";
import type { AuditRecord } from "../src/platform/audit";
import { AUDIT_OUTBOX_MODEL } from "../src/platform/audit";
import { noticesOf, type NoticeOutboxDoc } from "../src/platform/notices";
import { OutboxRelay } from "../src/platform/outbox-relay";
import type { Collection, StoredDoc } from "../src/store/types";

type OutboxRecord = AuditRecord & StoredDoc;

export interface OutboxSettings {
	/** How often the relays run without being asked (0: only after writes and at start). */
	auditRelayIntervalMs: number;
	/** Records per `audit.record` call. */
	auditRelayBatchSize: number;
}

/** What the mixin adds to `this`. */
export interface OutboxThis {
	auditRelay: OutboxRelay<OutboxRecord>;
	/** Only when the service declares a `noticeOutbox`. */
	noticeRelay: OutboxRelay<NoticeOutboxDoc> | null;
	/** After a committed write: forward the outboxes in the background (never throws). */
	relayOutboxes(): void;
	/** Forward the audit outbox now and wait (operators, tests); throws when `audit` refused. */
	relayAuditNow(): Promise<number>;
	/** Publish the notices now and wait (never throws: what failed waits for the next run). */
	relayNoticesNow(): Promise<void>;
}

type Lifecycle = Service<OutboxSettings> &
	OutboxThis & { collections?: { auditOutbox?: Collection<OutboxRecord>; noticeOutbox?: Collection<NoticeOutboxDoc & StoredDoc> } };

/** The record as `audit` stores it: the outbox's store version is not part of it. */
function recordOf(doc: OutboxRecord): AuditRecord {
	const copy = { ...doc } as OutboxRecord;
	delete copy.version;
	return copy;
}

/** What the mixin does with every relay alike. */
type AnyRelay = Pick<OutboxRelay<never>, "kick" | "start" | "stop">;

function relays(service: Lifecycle): AnyRelay[] {
	return service.noticeRelay ? [service.auditRelay, service.noticeRelay] : [service.auditRelay];
}

export function OutboxMixin(): Partial<ServiceSchema> {
	return {
		settings: { auditRelayIntervalMs: 5000, auditRelayBatchSize: 100 },

		events: {
			"$services.changed"(this: Lifecycle) {
				this.relayOutboxes();
			},
		},

		methods: {
			relayOutboxes(this: Lifecycle): void {
				for (const relay of relays(this)) void relay.kick();
			},
			relayAuditNow(this: Lifecycle): Promise<number> {
				return this.auditRelay.drain();
			},
			async relayNoticesNow(this: Lifecycle): Promise<void> {
				await this.noticeRelay?.kick();
			},
		},

		// Lifecycle hooks are typed `this: Service` by moleculer.
		created(this: Service) {
			const self = this as unknown as Lifecycle;
			self.auditRelay = new OutboxRelay<OutboxRecord>({
				name: `${self.name} audit`,
				outbox: () => self.collections?.auditOutbox,
				deliver: async (records) => {
					// Not known anywhere yet (starting, or this process runs without it): wait
					// quietly for the next run instead of a "not registered" warning per write.
					if (!isActionAvailable(self.broker, "audit.record")) throw new Error("audit.record is not available");
					await self.broker.call("audit.record", { records: records.map(recordOf) });
				},
				batchSize: self.settings.auditRelayBatchSize,
				logger: self.logger,
			});
			self.noticeRelay = null;
		},

		started(this: Service) {
			const self = this as unknown as Lifecycle;
			if (self.collections?.auditOutbox?.spec.collection !== AUDIT_OUTBOX_MODEL.collection) {
				throw new Error(`${self.name}: OutboxMixin needs DbMixin with an auditOutbox collection, listed after it (mixins: [OutboxMixin(), DbMixin(...)])`);
			}
			if (self.collections.noticeOutbox) {
				const bus = noticesOf(self.broker);
				self.noticeRelay = new OutboxRelay<NoticeOutboxDoc>({
					name: `${self.name} notices`,
					outbox: () => self.collections?.noticeOutbox,
					deliver: async (notices) => {
						for (const notice of notices) await bus.publish(notice.topic, notice.payload);
					},
					logger: self.logger,
				});
			}
			for (const relay of relays(self)) {
				relay.start(self.settings.auditRelayIntervalMs);
				void relay.kick();
			}
		},

		async stopped(this: Service) {
			await Promise.all(relays(this as unknown as Lifecycle).map((relay) => relay.stop()));
		},
	};
}
