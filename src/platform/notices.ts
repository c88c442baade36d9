/**
 * Notices: facts every process must hear, because it holds something they make stale (the
 * lookup's answers and catalog copy, held read answers, resolved processes and providers,
 * verified credentials). docs/internals.md "Notices".
 *
 * A notice is published once and delivered to every process of the registry, each as a local
 * broker event of the same name (`broker.broadcastLocal`), so a service listens with a plain
 * `events` handler. With NATS (TRANSPORTER=nats://…) notices go through a JetStream stream
 * and every process reads it with an ordered consumer: it resumes after a reconnect from the
 * last notice it saw, so none is lost or seen twice. When a process cannot be sure it heard
 * everything (NATS lost, a gap in the stream, its consumer gone), it emits NOTICES_RESET:
 * everyone holding anything drops it all, and holds nothing new (`trusted` false) until the
 * stream is back. In one process, notices are local events.
 */
import {
	connect,
	consumerOpts,
	JSONCodec,
	type ConnectionOptions,
	type JetStreamClient,
	type NatsConnection,
	type JetStreamSubscription,
} from "nats";
import type { Middleware as BrokerMiddleware, ServiceBroker } from "moleculer";
import type { RegistryContext, RegistryMeta } from "./context";
import { channelPrefix } from "./channels";
import { isNatsTransporter, natsConnectionOptions } from "./connections";
import { newRecordIdentifier } from "./record-identifier";
import { countLockout, countMetric, observeMetric, REGISTRY_METRICS, setMetric } from "./registry-metrics";
import { env } from "../config/settings";
import type { ModelSpec, WriteOp } from "../store/types";

/** Notice names (each is also the local event its listeners declare). */
export const NOTICES = {
	/** A lookup node applied a participant change: `{ organizationKey }`, or `{}` for every organization. */
	lookupInvalidated: "lookup.invalidated",
	/** `{ participant, organizationKey, serviceProviders }` after a participant change committed. */
	participantsChanged: "participants.changed",
	/** `{ resource, identifier, operation }` after a catalog record changed. */
	catalogChanged: "catalog.changed",
	/** `{ username }` or `{ serviceProvider }` after an account or provider changed. */
	accountsChanged: "accounts.changed",
	/** `{ key, seconds }`: a gateway locked a username or address out (services/api/login-throttle.ts). */
	loginLocked: "auth.locked",
	/** `{ sequence }`: the change feed grew to this sequence (services/audit/feed.ts); followers read on. */
	changesRecorded: "changes.recorded",
} as const;

/**
 * Call meta a caller sets to the last notice it has heard: the callee answers only once it has
 * heard as much (`caughtUp`), so an answer the caller holds is never older than what it knows.
 */
export const HEARD_NOTICES_META = "$heardNotices" satisfies keyof RegistryMeta;
/** How long a callee waits to catch up before it answers anyway (and says it is behind). */
const CATCH_UP_MS = 1000;
/** Call meta a callee sets when it answered without having caught up: the caller must not hold the answer. */
export const BEHIND_NOTICES_META = "$behindNotices" satisfies keyof RegistryMeta;

/** Local event: this process may have missed notices; drop everything held from other services' data. */
export const NOTICES_RESET = "registry.notices.reset";

export interface NoticeBus {
	/** Resolves once the notice is safely on its way to every process (JetStream acknowledged it). */
	publish(topic: string, payload: object): Promise<void>;
	/** False while this process may miss notices: hold nothing new meanwhile. */
	readonly trusted: boolean;
	/** The position of the last notice this process has heard (and its listeners handled). */
	readonly heard: number;
	/** Resolves true once this process has heard up to `position`, false after `timeoutMs` without. */
	caughtUp(position: number, timeoutMs?: number): Promise<boolean>;
}

/** Counts a notice this process publishes; a login lockout also in registry_login_lockouts_total. */
function countPublished(broker: ServiceBroker, topic: string, payload: object): void {
	countMetric(broker, REGISTRY_METRICS.noticesPublished, { topic });
	if (topic === NOTICES.loginLocked) countLockout(broker, (payload as { key?: unknown }).key);
}

/** Positions heard, and who waits for one. */
class HeardPosition {
	heard = 0;
	private waiters: { position: number; resolve: (done: boolean) => void }[] = [];

	advance(position: number): void {
		this.heard = position;
		if (this.waiters.length === 0) return;
		const waiting = this.waiters;
		this.waiters = [];
		for (const waiter of waiting) {
			if (waiter.position <= position) waiter.resolve(true);
			else this.waiters.push(waiter);
		}
	}

	caughtUp(position: number, timeoutMs = CATCH_UP_MS): Promise<boolean> {
		if (position <= this.heard) return Promise.resolve(true);
		return new Promise((resolve) => {
			const waiter = { position, resolve };
			this.waiters.push(waiter);
			setTimeout(() => {
				this.waiters = this.waiters.filter((other) => other !== waiter);
				resolve(false);
			}, timeoutMs).unref();
		});
	}
}

/** One process: notices are local events, and nothing can be missed. */
class LocalNotices extends HeardPosition implements NoticeBus {
	readonly trusted = true;
	constructor(private readonly broker: ServiceBroker) {
		super();
	}
	async publish(topic: string, payload: object): Promise<void> {
		countPublished(this.broker, topic, payload);
		const position = this.heard + 1;
		await this.broker.broadcastLocal(topic, payload);
		this.advance(Math.max(position, this.heard));
	}
}

/** A transporter other than NATS: Moleculer's broadcast, which a disconnected node misses (docs/operations.md). */
class BroadcastNotices extends HeardPosition implements NoticeBus {
	readonly trusted = true;
	constructor(private readonly broker: ServiceBroker) {
		super();
	}
	async publish(topic: string, payload: object): Promise<void> {
		countPublished(this.broker, topic, payload);
		await this.broker.broadcast(topic, payload);
	}
}

/** Seconds a notice is kept: a process away for longer resets instead of catching up. */
const STREAM_MAX_AGE_NANOS = 3600 * 1e9;
/** The consumer's idle heartbeat: a consumer lost on the server is recreated after two missed ones. */
const HEARTBEAT_MS = 1000;

const codec = JSONCodec<Record<string, unknown>>();

/** NATS JetStream: one stream of notices per namespace, read by every process from "now" on; positions are stream sequences. */
class JetStreamNotices extends HeardPosition implements NoticeBus {
	private connection: NatsConnection | null = null;
	private js: JetStreamClient | null = null;
	private subscription: JetStreamSubscription | null = null;
	private connected = false;
	private stopping = false;
	readonly stream: string;
	readonly subjectPrefix: string;

	constructor(
		private readonly broker: ServiceBroker,
		private readonly connectionOptions: ConnectionOptions,
		namespace: string,
	) {
		super();
		const prefix = channelPrefix(namespace);
		this.stream = `${prefix}_notices`;
		this.subjectPrefix = `${prefix}.notices.`;
	}

	get trusted(): boolean {
		return this.connected && this.subscription !== null;
	}

	async start(): Promise<void> {
		this.connection = await connect({
			...this.connectionOptions,
			name: "registry-notices",
			// A silent partition is noticed within ~3 s (docs/operations.md "Partitions").
			pingInterval: 1000,
			maxPingOut: 2,
			reconnect: true,
			maxReconnectAttempts: -1,
			reconnectTimeWait: 500,
			waitOnFirstConnect: true,
		});
		const manager = await this.connection.jetstreamManager();
		await manager.streams
			.add({ name: this.stream, subjects: [`${this.subjectPrefix}>`], max_age: STREAM_MAX_AGE_NANOS })
			.catch(async (error) => {
				// Already there (another process made it): fine when it covers our subjects.
				const info = await manager.streams.info(this.stream).catch(() => null);
				if (!info) throw error;
			});
		this.js = this.connection.jetstream();
		this.connected = true;
		countMetric(this.broker, REGISTRY_METRICS.noticesResets, {}, 0);
		this.reportTrusted();
		void this.watchConnection(this.connection);
		await this.subscribe();
	}

	async stop(): Promise<void> {
		this.stopping = true;
		const connection = this.connection;
		this.connection = null;
		this.subscription = null;
		if (connection) await connection.drain().catch(() => connection.close());
	}

	async publish(topic: string, payload: object): Promise<void> {
		countPublished(this.broker, topic, payload);
		if (!this.js) throw new Error("notices: not connected to NATS");
		await this.js.publish(`${this.subjectPrefix}${topic}`, codec.encode(payload as Record<string, unknown>));
	}

	/** An ordered consumer from the next notice on; it recreates itself after reconnects and gaps of its own. */
	private async subscribe(): Promise<void> {
		if (!this.js || this.stopping) return;
		const options = consumerOpts();
		options.orderedConsumer();
		options.idleHeartbeat(HEARTBEAT_MS);
		if (this.heard > 0) options.startSequence(this.heard + 1);
		else options.deliverNew();
		const subscription = await this.js.subscribe(`${this.subjectPrefix}>`, options);
		this.subscription = subscription;
		this.reportTrusted();
		void this.read(subscription);
	}

	private async read(subscription: JetStreamSubscription): Promise<void> {
		try {
			for await (const message of subscription) {
				const sequence = message.info.streamSequence;
				if (this.heard > 0 && sequence !== this.heard + 1)
					this.reset(`notices ${this.heard + 1}–${sequence - 1} are no longer in the stream`);
				const topic = message.subject.slice(this.subjectPrefix.length);
				try {
					await this.broker.broadcastLocal(topic, codec.decode(message.data));
				} catch {
					this.broker.logger.warn(`notices: ignoring a malformed ${topic} notice`);
				}
				this.advance(sequence);
				observeMetric(
					this.broker,
					REGISTRY_METRICS.noticeDelay,
					Math.max(0, Date.now() - message.info.timestampNanos / 1e6) / 1000,
				);
			}
		} catch (error) {
			if (!this.stopping) this.broker.logger.warn("notices: the subscription ended:", String(error));
		}
		if (this.stopping || this.subscription !== subscription) return;
		// The consumer could not be recreated: start a new one and say that something may be missed.
		this.subscription = null;
		this.reset("the notice subscription ended");
		await new Promise((resolve) => setTimeout(resolve, 500));
		await this.subscribe().catch((error) =>
			this.broker.logger.warn("notices: subscribing again failed:", String(error)),
		);
	}

	private async watchConnection(connection: NatsConnection): Promise<void> {
		for await (const status of connection.status()) {
			if (status.type === "disconnect") {
				this.connected = false;
				this.reportTrusted();
				this.reset("NATS connection lost");
			} else if (status.type === "reconnect") {
				// The ordered consumer resumes after the last notice it saw: nothing is missed from here on.
				this.connected = true;
				this.reportTrusted();
				this.broker.logger.info("notices: NATS connection back; holding answers again");
			}
		}
	}

	private reportTrusted(): void {
		setMetric(this.broker, REGISTRY_METRICS.noticesTrusted, this.trusted ? 1 : 0);
	}

	private reset(reason: string): void {
		countMetric(this.broker, REGISTRY_METRICS.noticesResets);
		this.reportTrusted();
		this.broker.logger.warn(`notices: ${reason}; every process-held answer is dropped`);
		void this.broker.broadcastLocal(NOTICES_RESET, { reason });
	}
}

const BUS = Symbol.for("registry.notices");

type WithBus = ServiceBroker & { [BUS]?: NoticeBus };

/** This broker's notice bus (a local one for brokers built without the middleware, e.g. unit tests). */
export function noticesOf(broker: ServiceBroker): NoticeBus {
	const holder = broker as WithBus;
	holder[BUS] ??= new LocalNotices(broker);
	return holder[BUS];
}

/** The broker middleware (src/platform/broker.ts): the bus is connected before any service starts. */
export function noticesMiddleware(source: NodeJS.ProcessEnv = process.env): BrokerMiddleware {
	const transporter = env("TRANSPORTER", source);
	let bus: JetStreamNotices | null = null;
	return {
		name: "Notices",
		created(broker: ServiceBroker) {
			const holder = broker as WithBus;
			if (isNatsTransporter(transporter)) {
				// The transporter's servers, credentials and TLS (src/platform/connections.ts).
				bus = new JetStreamNotices(
					broker,
					natsConnectionOptions(source, transporter),
					env("NAMESPACE", source),
				);
				holder[BUS] = bus;
			} else {
				holder[BUS] = transporter ? new BroadcastNotices(broker) : new LocalNotices(broker);
			}
		},
		async starting() {
			await bus?.start();
		},
		// A gateway's lockout counters exist from its start (0), so the first lockout is an increase.
		serviceStarted(service: { name: string; broker: ServiceBroker }) {
			if (service.name !== "api") return;
			for (const scope of ["user", "address"])
				countMetric(service.broker, REGISTRY_METRICS.loginLockouts, { scope }, 0);
		},
		// A caller that holds answers says which notices it has heard; answer once this process has too.
		localAction(handler: (ctx: RegistryContext) => Promise<unknown>) {
			return function heardNotices(this: unknown, ctx: RegistryContext): Promise<unknown> {
				const position = ctx.meta[HEARD_NOTICES_META];
				if (typeof position !== "number") return handler.call(this, ctx);
				const bus = noticesOf(ctx.broker);
				if (position <= bus.heard) return handler.call(this, ctx);
				return bus.caughtUp(position).then((done) => {
					if (!done) {
						ctx.meta[BEHIND_NOTICES_META] = true;
						countMetric(ctx.broker, REGISTRY_METRICS.noticeCatchUpTimeouts, {
							action: ctx.action?.name ?? "",
						});
					}
					return handler.call(this, ctx);
				});
			};
		},
		async stopped() {
			await bus?.stop();
		},
	} as unknown as BrokerMiddleware;
}

/** The outbox of notices a writing service publishes after its commit (mixins/outbox.mixin.ts). */
export const NOTICE_OUTBOX_MODEL: ModelSpec = {
	collection: "noticeOutbox",
	fields: { at: { kind: "string" } },
	indexes: [{ name: "at", fields: ["at"] }],
};

export interface NoticeOutboxDoc {
	identifier: string;
	at: string;
	topic: string;
	payload: object;
	version?: number;
}

/** The write that puts a notice into the same batch as the change it tells of. */
export function noticeWrite(topic: string, payload: object): WriteOp {
	const doc: NoticeOutboxDoc = { identifier: newRecordIdentifier(), at: new Date().toISOString(), topic, payload };
	return { kind: "insert", collection: NOTICE_OUTBOX_MODEL.collection, doc };
}
