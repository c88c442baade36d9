/**
 * The audit relay of a service that writes (src/audit.ts; docs/internals.md "Audit trail").
 * Each change's batch already holds its audit record in the service's `auditOutbox`; this
 * mixin forwards those records to `audit.record` and deletes exactly the acknowledged ones
 * (src/outbox-relay.ts). It runs
 *   - after each committed write: the service calls `this.relayAudit()` (fire-and-forget,
 *     coalesced), so in one process the record reaches `audit` within milliseconds;
 *   - at start, when the services of the cluster change (e.g. `audit` came up), and every
 *     `settings.auditRelayIntervalMs` (default 5 s): what a failed or skipped run left behind.
 * If `audit` is unreachable the records stay in the outbox and go later: none is lost.
 *
 *   mixins: [AuditOutboxMixin(), DbMixin({ ..., auditOutbox: AUDIT_OUTBOX_MODEL })]
 *
 * List it BEFORE DbMixin: Moleculer starts the later mixin first, so the store is open when
 * this mixin starts, and stops this mixin (waiting for a run) before the store closes.
 */
import type { Service, ServiceBroker, ServiceSchema } from "moleculer";
import type { AuditRecord } from "../src/audit";
import { AUDIT_OUTBOX_MODEL } from "../src/audit";
import { OutboxRelay } from "../src/outbox-relay";
import type { Collection, StoredDoc } from "../src/store/types";

type OutboxRecord = AuditRecord & StoredDoc;

export interface AuditOutboxSettings {
	/** How often the relay runs without being asked (0: only after writes and at start). */
	auditRelayIntervalMs: number;
	/** Records per `audit.record` call. */
	auditRelayBatchSize: number;
}

/** What the mixin adds to `this`. */
export interface AuditOutboxThis {
	auditRelay: OutboxRelay<OutboxRecord>;
	/** After a committed write: forward the outbox in the background (never throws). */
	relayAudit(): void;
	/** Forward everything now and wait (operators, tests); throws when `audit` refused. */
	relayAuditNow(): Promise<number>;
}

type Lifecycle = Service<AuditOutboxSettings> & AuditOutboxThis & { collections?: { auditOutbox?: Collection<OutboxRecord> } };

/** The record as `audit` stores it: the outbox's store version is not part of it. */
function recordOf(doc: OutboxRecord): AuditRecord {
	const copy = { ...doc } as OutboxRecord;
	delete copy.version;
	return copy;
}

function auditAvailable(service: { broker: ServiceBroker }): boolean {
	const registry = service.broker.registry as unknown as { getActionEndpoints(name: string): { hasAvailable(): boolean } | undefined };
	return registry.getActionEndpoints("audit.record")?.hasAvailable() === true;
}

export function AuditOutboxMixin(): Partial<ServiceSchema> {
	return {
		settings: { auditRelayIntervalMs: 5000, auditRelayBatchSize: 100 },

		events: {
			"$services.changed"(this: Lifecycle) {
				this.relayAudit();
			},
		},

		methods: {
			relayAudit(this: Lifecycle): void {
				this.auditRelay.kick();
			},
			relayAuditNow(this: Lifecycle): Promise<number> {
				return this.auditRelay.drain();
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
					if (!auditAvailable(self)) throw new Error("audit.record is not available");
					await self.broker.call("audit.record", { records: records.map(recordOf) });
				},
				batchSize: self.settings.auditRelayBatchSize,
				logger: self.logger,
			});
		},

		started(this: Service) {
			const self = this as unknown as Lifecycle;
			if (self.collections?.auditOutbox?.spec.collection !== AUDIT_OUTBOX_MODEL.collection) {
				throw new Error(`${self.name}: AuditOutboxMixin needs DbMixin with an auditOutbox collection, listed after it (mixins: [AuditOutboxMixin(), DbMixin(...)])`);
			}
			self.auditRelay.start(self.settings.auditRelayIntervalMs);
			self.auditRelay.kick();
		},

		async stopped(this: Service) {
			await (this as unknown as Lifecycle).auditRelay.stop();
		},
	};
}
