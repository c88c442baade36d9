/**
 * Durable channels (@moleculer/channels; docs/internals.md "Events and channels"): NATS JetStream with
 * TRANSPORTER=nats://…, else the in-process Fake adapter.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Middleware } from "@moleculer/channels";
import type { Middleware as BrokerMiddleware, ServiceBroker } from "moleculer";
import { env } from "../config/settings";
import { lazyClusterKeys, type ClusterKeys } from "./cluster-key";
import { isNatsTransporter, natsConnectionOptions } from "./connections";
import { PeriodicTask } from "./periodic-task";
import { REGISTRY_METRICS, setMetric } from "./registry-metrics";
import { SealedJsonSerializer } from "./sealed-messages";

/** The channel participant changes are published on (docs/internals.md "Events and channels"). */
export const PARTICIPANTS_CHANGED = "registry.participants.changed";
/** The change feed's channel: changes in sequence order per batch, each at least once (services/audit/feed.ts). */
export const REGISTRY_CHANGES = "registry.changes";
/** Consumer group of the lookup: one lookup node applies each change to the shared read model. */
export const LOOKUP_GROUP = "lookup";

/** Payload of PARTICIPANTS_CHANGED: the participant's state after a committed change. */
export interface ParticipantChange {
	participant: string;
	/** The participant's incarnation (services/participants/model.ts); "" in changes made before it existed. */
	incarnation?: string;
	organizationKey: string;
	processes: string[];
	/** The participant's version after the change; a consumer keeps only the latest per participant. */
	version: number;
	deleted: boolean;
	/** Its owners before and after (a transfer names both); absent in changes written before it existed. */
	serviceProviders?: string[];
	/** Its service provider after the change (absent when deleted): whose access points receive its documents (SMP). */
	serviceProvider?: string;
	/**
	 * What the participant's business card shows (decisions §14; absent when deleted, and in changes
	 * written before they existed): its name ("" when it has none), registration date `YYYY-MM-DD`,
	 * ICD and organization identifier as registered.
	 */
	name?: string;
	registrationDate?: string;
	icd?: string;
	organizationIdentifier?: string;
}

/** Topic prefix by namespace, so registries sharing one NATS never meet (stream names allow no dots or wildcards). */
export function channelPrefix(namespace: string): string {
	return `registry-${(namespace || "default").replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

const STREAM_MAX_AGE_NANOS = 7 * 24 * 3600 * 1e9;

export function channelsAdapter(
	source: NodeJS.ProcessEnv = process.env,
	keys: () => ClusterKeys = lazyClusterKeys(source),
): {
	type: string;
	options: Record<string, unknown>;
} {
	const transporter = env("TRANSPORTER", source);
	const prefix = channelPrefix(env("NAMESPACE", source));
	if (isNatsTransporter(transporter)) {
		return {
			type: "NATS",
			options: {
				prefix,
				// Its own NATS connection, outside the transporter's sealing: sealed here (src/platform/sealed-messages.ts).
				serializer: new SealedJsonSerializer(keys),
				nats: {
					// The transporter's servers, credentials and TLS (src/platform/connections.ts).
					connectionOptions: { ...natsConnectionOptions(source, transporter), name: "registry-channels" },
					// Changes kept a week: a lookup down for longer is rebuilt (npm run lookup:rebuild).
					streamConfig: { max_age: STREAM_MAX_AGE_NANOS },
					// A new durable consumer starts from the first kept change, not from "now": changes
					// published before the lookup first subscribed are not lost (applying is idempotent).
					consumerOptions: { config: { deliver_policy: "all" } },
				},
				// Applying a change is idempotent (by version), so redelivery is safe and several may run at once.
				maxInFlight: 10,
				maxRetries: 5,
				deadLettering: { enabled: true, queueName: "FAILED_PARTICIPANT_CHANGES" },
			},
		};
	}
	return { type: "Fake", options: { prefix } };
}

interface ChannelAdapter {
	addPrefixTopic(name: string): string;
	manager?: {
		consumers: {
			info(stream: string, consumer: string): Promise<{ num_pending: number; num_ack_pending: number }>;
		};
	};
	createStream?(name: string, subjects: string[], options: object): Promise<unknown>;
	subscribe(chan: { id: string }, service: unknown): Promise<void>;
	stopChannelActiveMessages(channelId: string): void;
	publish(channelName: string, payload: unknown, opts?: { headers?: unknown }): Promise<void>;
	opts: { eventPrefix?: string };
}

/** How long a publish in one process waits for its consumer before the outbox's relay is left to publish again. */
const IN_PROCESS_WAIT_MS = 2000;
const LATE = Symbol("late");

/**
 * Nothing redelivers in one process, so the in-process publish waits (bounded) for its consumer: else an
 * outbox entry could go before the lookup applied its change, and a crash would lose it.
 */
function awaitInProcessConsumers(broker: ServiceBroker, adapter: ChannelAdapter): void {
	adapter.publish = async (channelName, payload, opts = {}) => {
		const delivered = broker.emit(
			`${adapter.opts.eventPrefix}.${channelName}`,
			{ payload, headers: opts.headers },
			{},
		);
		const timer = new AbortController();
		try {
			const late = await Promise.race([delivered, sleep(IN_PROCESS_WAIT_MS, LATE, { signal: timer.signal })]);
			if (late === LATE) throw new Error(`${channelName}: the consumer did not finish in time`);
		} finally {
			timer.abort();
		}
	};
}

/** NATS's "consumer name already in use" (JetStream API error 10013). */
const CONSUMER_NAME_IN_USE = 10013;
const SUBSCRIBE_ATTEMPTS = 5;

/**
 * Lookup nodes starting together all create the group's durable consumer, and all but one are refused
 * ("consumer name already in use"): a refused subscription tries again and binds to the one made.
 */
function retrySubscriptions(adapter: ChannelAdapter): void {
	const subscribe = adapter.subscribe.bind(adapter);
	adapter.subscribe = async (chan, service) => {
		for (let attempt = 1; ; attempt++) {
			try {
				return await subscribe(chan, service);
			} catch (error) {
				const code = (error as { api_error?: { err_code?: number } }).api_error?.err_code;
				if (code !== CONSUMER_NAME_IN_USE || attempt >= SUBSCRIBE_ATTEMPTS) throw error;
				// The refused attempt registered the channel's in-flight tracking; the next one does again.
				adapter.stopChannelActiveMessages(chan.id);
				await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
			}
		}
	};
}

/** The adapter makes a stream when a consumer subscribes; the publisher does too, so nothing is lost before that. */
async function ensureStream(broker: ServiceBroker, channel: string): Promise<void> {
	const adapter = (broker as unknown as { channelAdapter?: ChannelAdapter }).channelAdapter;
	if (!adapter?.createStream) return;
	const subject = adapter.addPrefixTopic(channel);
	await adapter.createStream(subject.split(".").join("_"), [subject], {});
}

/** How often a consumer's backlog is read (registry_channel_pending_messages). */
const PENDING_INTERVAL_MS = 5000;

/** The backlog of every durable channel a local service consumes, as JetStream counts it for its group. */
async function reportPending(broker: ServiceBroker): Promise<void> {
	const adapter = (broker as unknown as { channelAdapter?: ChannelAdapter }).channelAdapter;
	if (!adapter?.manager) return;
	for (const service of broker.services) {
		const channels = (service.schema as { channels?: Record<string, { group?: string }> }).channels ?? {};
		for (const [name, definition] of Object.entries(channels)) {
			const group = definition.group ?? service.fullName;
			// The adapter's names: the prefixed subject with "_" for ".", the group likewise.
			const stream = adapter.addPrefixTopic(name).split(".").join("_");
			const info = await adapter.manager.consumers.info(stream, group.split(".").join("_")).catch(() => null);
			if (info)
				setMetric(broker, REGISTRY_METRICS.channelPending, info.num_pending + info.num_ack_pending, {
					channel: name,
					group,
				});
		}
	}
}

/** Per broker: resolves once its channels have subscribed (the middleware's `started`, after every service's). */
const subscribed = new WeakMap<ServiceBroker, { promise: Promise<void>; resolve: () => void }>();

function subscriptionsOf(broker: ServiceBroker): { promise: Promise<void>; resolve: () => void } {
	let known = subscribed.get(broker);
	if (!known) {
		let resolve!: () => void;
		const promise = new Promise<void>((done) => (resolve = done));
		subscribed.set(broker, (known = { promise, resolve }));
	}
	return known;
}

/** Resolves once this broker's channel consumers listen (at once without channels): an in-process channel drops what is sent before. */
export function channelsSubscribed(broker: ServiceBroker): Promise<void> {
	if (!(broker as unknown as { channelAdapter?: unknown }).channelAdapter) return Promise.resolve();
	return subscriptionsOf(broker).promise;
}

/** The middleware the broker registers (src/platform/broker.ts), sealing with the broker's cluster keys. */
export function channelsMiddleware(
	source: NodeJS.ProcessEnv = process.env,
	keys: () => ClusterKeys = lazyClusterKeys(source),
): BrokerMiddleware {
	const adapter = channelsAdapter(source, keys);
	// The package's generated typings mark every option as required; the rest have defaults.
	const middleware = Middleware({ adapter } as unknown as Parameters<typeof Middleware>[0]);
	const nats = adapter.type === "NATS";
	let broker: ServiceBroker;
	const pending = new PeriodicTask(
		() => reportPending(broker),
		() => undefined,
	);
	const withStream = {
		...middleware,
		created(created: ServiceBroker) {
			broker = created;
			middleware.created(created);
			const channelAdapter = (created as unknown as { channelAdapter: ChannelAdapter }).channelAdapter;
			if (nats) retrySubscriptions(channelAdapter);
			else awaitInProcessConsumers(created, channelAdapter);
		},
		async started() {
			// A node without a usable cluster key says why before it connects (the message of src/platform/cluster-key.ts).
			if (nats) keys();
			await middleware.started();
			if (nats)
				for (const channel of [PARTICIPANTS_CHANGED, REGISTRY_CHANGES]) await ensureStream(broker, channel);
			subscriptionsOf(broker).resolve();
		},
		// Services subscribe once started: the backlog is read from then on.
		serviceStarted() {
			if (!nats) return;
			if (broker.isMetricsEnabled()) pending.start(PENDING_INTERVAL_MS);
			void reportPending(broker).catch(() => undefined);
		},
		async stopping() {
			await pending.stop();
			await (middleware as { stopping?: () => Promise<void> }).stopping?.();
		},
	};
	return withStream as unknown as BrokerMiddleware;
}

/** Publishes on a durable channel, once more after making sure of the stream; false when the broker has no channels. */
export async function publishOnChannel(broker: ServiceBroker, channel: string, payload: unknown): Promise<boolean> {
	const send = (broker as unknown as { sendToChannel?: (channel: string, payload: unknown) => Promise<void> })
		.sendToChannel;
	if (!send) return false;
	try {
		await send.call(broker, channel, payload);
	} catch {
		await ensureStream(broker, channel);
		await send.call(broker, channel, payload);
	}
	return true;
}
