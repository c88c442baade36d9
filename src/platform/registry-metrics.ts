/** The registry's own metrics beside Moleculer's (docs/operations.md "Monitoring"), registered on first use. */
import type { ServiceBroker } from "moleculer";

type Definition = { type: "counter" | "gauge"; name: string; labelNames: string[]; description: string };

export const REGISTRY_METRICS = {
	outboxBacklog: {
		type: "gauge",
		name: "registry.outbox.backlog",
		labelNames: ["service", "outbox"],
		description: "Messages waiting in a transactional outbox (audit, changes)",
	},
	outboxOldestAge: {
		type: "gauge",
		name: "registry.outbox.oldest.age.seconds",
		labelNames: ["service", "outbox"],
		description: "Age of the oldest message waiting in an outbox (0 when empty)",
	},
	outboxFailures: {
		type: "counter",
		name: "registry.outbox.delivery.failures.total",
		labelNames: ["service", "outbox"],
		description: "Outbox relay runs whose delivery failed (retried later)",
	},
	channelPending: {
		type: "gauge",
		name: "registry.channel.pending.messages",
		labelNames: ["channel", "group"],
		description:
			"Messages of a durable channel its consumer group has not yet acknowledged (JetStream num_pending + num_ack_pending)",
	},
	lookupParkedChanges: {
		type: "gauge",
		name: "registry.lookup.parked.changes",
		labelNames: [],
		description:
			"Participant changes the lookup could not apply after its retries, parked for an operator to replay (registry lookup replay)",
	},
	idempotentReplays: {
		type: "counter",
		name: "registry.idempotent.replays.total",
		labelNames: ["action"],
		description: "Adds answered again to a retry with the same Idempotency-Key",
	},
	rateLimitSyncRounds: {
		type: "counter",
		name: "registry.rate.limit.sync.rounds.total",
		labelNames: [],
		description: "Rounds in which this gateway shared its callers' spending with the other gateways through Redis",
	},
	loginLockouts: {
		type: "counter",
		name: "registry.login.lockouts.total",
		labelNames: ["scope"],
		description: "Failed-login lockouts a gateway set (scope user or address)",
	},
	processReplacementJobs: {
		type: "counter",
		name: "registry.process.replacement.jobs.total",
		labelNames: ["state"],
		description: "Process replacement jobs that ended, by final state (SUCCEEDED, FAILED, INTERRUPTED)",
	},
	accessPointCertificatesExpiring: {
		type: "gauge",
		name: "registry.access.point.certificates.expiring",
		labelNames: [],
		description:
			"Access point endpoints whose certificate expires within 30 days or has expired (SMP answers would publish it)",
	},
	networkDeliveries: {
		type: "gauge",
		name: "registry.network.deliveries",
		labelNames: ["target", "state"],
		description:
			"Organizations whose SML or Directory delivery (target sml, directory) is pending, failing (retried) or parked (registry sml replay)",
	},
	storeSize: {
		type: "gauge",
		name: "registry.store.size.bytes",
		labelNames: ["service"],
		description: "Bytes a service's store takes (SQLite files, or MongoDB storage of its database)",
	},
	storeFilesystemFree: {
		type: "gauge",
		name: "registry.store.filesystem.free.bytes",
		labelNames: ["service"],
		description: "Free bytes of the filesystem the store lives on",
	},
	storeFilesystemSize: {
		type: "gauge",
		name: "registry.store.filesystem.size.bytes",
		labelNames: ["service"],
		description: "Size in bytes of the filesystem the store lives on",
	},
} satisfies Record<string, Definition>;

type Labels = Record<string, string | number>;

function registryOf(broker: ServiceBroker, definition: Definition): ServiceBroker["metrics"] | null {
	if (!broker.isMetricsEnabled()) return null;
	if (!broker.metrics.getMetric(definition.name)) broker.metrics.register(definition);
	return broker.metrics;
}

export function countMetric(broker: ServiceBroker, definition: Definition, labels: Labels = {}, value = 1): void {
	registryOf(broker, definition)?.increment(definition.name, labels, value);
}

export function setMetric(broker: ServiceBroker, definition: Definition, value: number, labels: Labels = {}): void {
	registryOf(broker, definition)?.set(definition.name, value, labels);
}
