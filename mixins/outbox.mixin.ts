/**
 * The transactional outboxes of a service that writes (src/platform/outbox-relay.ts;
 * docs/internals.md "Audit trail"), and the one way it writes a change: `writeAudited(ops,
 * events)`, a single store batch that holds the change with its audit record; then the events
 * for other nodes' copies (src/platform/events.ts) and the relays.
 *
 * Relayed outboxes (each where the service's DbMixin declares it):
 *   - `auditOutbox` (required): records to `audit.record`, in the background after each write;
 *   - `networkOutbox`: organizations whose SML and Directory state needs delivering, to
 *     `network.enqueue`, likewise (decisions §14);
 *   - `changeOutbox`: the service's own messages (participant changes), which `writeAudited`
 *     delivers itself once they are committed (`this.deliverChange`); the relay takes only those
 *     left behind for `settings.changeRelayAfterMs` (a failure, a crash).
 * Every relay also runs at start, when the cluster's services change (e.g. `audit` came up)
 * and every `settings.outboxRelayIntervalMs`; nothing waiting is lost while a receiver is away.
 *
 *   mixins: [OutboxMixin(), DbMixin({ ..., auditOutbox: AUDIT_OUTBOX_MODEL })]
 *
 * List it BEFORE DbMixin: Moleculer starts the later mixin first, so the store is open when
 * the relays start, and stops the relays (waiting for a run) before the store closes.
 */
import type { Service, ServiceSchema } from "moleculer";
import { isActionAvailable } from "../src/platform/broker";
import { AUDIT_OUTBOX_MODEL, type AuditRecord } from "../src/platform/audit";
import { broadcastEvents, type RegistryEvent } from "../src/platform/events";
import { OutboxRelay, type OutboxMessage, type OutboxReport } from "../src/platform/outbox-relay";
import { countMetric, REGISTRY_METRICS, setMetric } from "../src/platform/registry-metrics";
import type { Collection, Store, StoredDoc, WriteOp } from "../src/store/types";

type OutboxRecord = AuditRecord & StoredDoc;

/** A message of a service's own change outbox: its `change` is what `deliverChange` delivers. */
export interface ChangeOutboxDoc<C = unknown> extends OutboxMessage {
	change: C;
}

export interface OutboxSettings {
	/** How often the relays run without being asked (0: only after writes and at start). */
	outboxRelayIntervalMs: number;
	/** Records per `audit.record` (and `network.enqueue`) call. */
	auditRelayBatchSize: number;
	/** A change still in the change outbox after this long is the relay's to deliver. */
	changeRelayAfterMs: number;
}

/** What the mixin adds to `this`. */
export interface OutboxThis {
	auditRelay: OutboxRelay<OutboxRecord>;
	networkRelay: OutboxRelay<OutboxMessage> | null;
	changeRelay: OutboxRelay<ChangeOutboxDoc> | null;
	/**
	 * One atomic batch (the change and its audit record), then its events, then the changes it put in the
	 * change outbox, delivered and removed; resolves once they are sent (a failed delivery waits for the relay).
	 */
	writeAudited(ops: WriteOp[], events?: RegistryEvent[]): Promise<void>;
	/** Forward the audit outbox now and wait (operators, tests); throws when `audit` refused. */
	relayAuditNow(): Promise<number>;
	/** Deliver the change outbox's messages at least `olderThanMs` old now; throws at the first failure. */
	relayChangesNow(olderThanMs: number): Promise<number>;
}

/** What a service with a change outbox provides. */
export interface ChangeDeliverer {
	deliverChange(change: unknown): Promise<void>;
}

type Lifecycle = Service<OutboxSettings> &
	OutboxThis &
	Partial<ChangeDeliverer> & {
		store: Store;
		collections?: {
			auditOutbox?: Collection<OutboxRecord>;
			networkOutbox?: Collection<OutboxMessage>;
			changeOutbox?: Collection<ChangeOutboxDoc>;
		};
	};

type AnyRelay = Pick<OutboxRelay<never>, "kick" | "start" | "stop">;

/** The outbox metrics of one of a service's outboxes (registry_outbox_*). */
function outboxReport(service: Service, outbox: "audit" | "changes" | "network"): OutboxReport {
	const labels = { service: service.name, outbox };
	countMetric(service.broker, REGISTRY_METRICS.outboxFailures, labels, 0);
	return {
		backlog(waiting, oldestAgeSeconds) {
			setMetric(service.broker, REGISTRY_METRICS.outboxBacklog, waiting, labels);
			setMetric(service.broker, REGISTRY_METRICS.outboxOldestAge, oldestAgeSeconds, labels);
		},
		failed: () => countMetric(service.broker, REGISTRY_METRICS.outboxFailures, labels),
	};
}

/** The service's relays: none before it started. */
function relays(service: Lifecycle): AnyRelay[] {
	const all: (AnyRelay | null | undefined)[] = [service.auditRelay, service.networkRelay, service.changeRelay];
	return all.filter((relay): relay is AnyRelay => relay !== null && relay !== undefined);
}

export function OutboxMixin(): Partial<ServiceSchema> {
	return {
		settings: { outboxRelayIntervalMs: 5000, auditRelayBatchSize: 100, changeRelayAfterMs: 10_000 },

		events: {
			"$services.changed"(this: Lifecycle) {
				for (const relay of relays(this)) void relay.kick();
			},
		},

		methods: {
			async writeAudited(this: Lifecycle, ops: WriteOp[], events: RegistryEvent[] = []): Promise<void> {
				await this.store.batch(ops);
				void this.auditRelay.kick();
				void this.networkRelay?.kick();
				// Sent before the request answers: in one process every copy is fresh when the client reads again.
				await broadcastEvents(this.broker, events);
				const outbox = this.collections?.changeOutbox;
				if (!outbox || !this.deliverChange) return;
				const delivered: string[] = [];
				for (const op of ops) {
					if (op.kind !== "insert" || op.collection !== outbox.spec.collection) continue;
					try {
						await this.deliverChange((op.doc as ChangeOutboxDoc).change);
						delivered.push(op.doc.identifier);
					} catch (error) {
						// Committed already: not the request's failure. The relay delivers what stays in the outbox.
						this.logger.warn(
							`${this.name}: change ${op.doc.identifier} not delivered yet (the relay retries):`,
							String(error),
						);
					}
				}
				// Left behind, a delivered entry is only delivered again by the relay (receivers are idempotent).
				if (delivered.length > 0)
					await outbox
						.deleteWhere({ identifier: { in: delivered } })
						.catch((error) =>
							this.logger.warn(`${this.name}: delivered changes stay in the outbox:`, String(error)),
						);
			},
			relayAuditNow(this: Lifecycle): Promise<number> {
				return this.auditRelay.drain();
			},
			relayChangesNow(this: Lifecycle, olderThanMs: number): Promise<number> {
				return this.changeRelay ? this.changeRelay.drain(olderThanMs) : Promise.resolve(0);
			},
		},

		// Lifecycle hooks are typed `this: Service` by moleculer. The relays are made once the store is open.
		started(this: Service) {
			const self = this as unknown as Lifecycle;
			const { auditOutbox, changeOutbox, networkOutbox } = self.collections ?? {};
			if (auditOutbox?.spec.collection !== AUDIT_OUTBOX_MODEL.collection) {
				throw new Error(
					`${self.name}: OutboxMixin needs DbMixin with an auditOutbox collection, listed after it (mixins: [OutboxMixin(), DbMixin(...)])`,
				);
			}
			// Records go as stored: the receivers keep their own fields only (not the outbox's `version`).
			const forward = <T extends OutboxMessage>(
				outbox: Collection<T>,
				action: string,
				name: "audit" | "network",
			) =>
				new OutboxRelay<T>({
					name: `${self.name} ${name}`,
					outbox,
					deliver: async (records) => {
						// Not known anywhere yet (starting, or this process runs without it): wait
						// quietly for the next run instead of a "not registered" warning per write.
						if (!isActionAvailable(self.broker, action)) throw new Error(`${action} is not available`);
						await self.broker.call(action, { records });
					},
					batchSize: self.settings.auditRelayBatchSize,
					logger: self.logger,
					report: outboxReport(this, name),
				});
			self.auditRelay = forward(auditOutbox, "audit.record", "audit");
			self.networkRelay = networkOutbox ? forward(networkOutbox, "network.enqueue", "network") : null;
			self.changeRelay = null;
			if (changeOutbox) {
				const deliverChange = self.deliverChange;
				if (!deliverChange) throw new Error(`${self.name}: a changeOutbox needs a deliverChange method`);
				self.changeRelay = new OutboxRelay<ChangeOutboxDoc>({
					name: `${self.name} changes`,
					outbox: changeOutbox,
					deliver: async (entries) => {
						for (const entry of entries) await deliverChange.call(self, entry.change);
					},
					minAgeMs: self.settings.changeRelayAfterMs,
					logger: self.logger,
					report: outboxReport(this, "changes"),
				});
			}
			for (const relay of relays(self)) {
				relay.start(self.settings.outboxRelayIntervalMs);
				void relay.kick();
			}
		},

		async stopped(this: Service) {
			await Promise.all(relays(this as unknown as Lifecycle).map((relay) => relay.stop()));
		},
	};
}
