/**
 * Durable channels (architecture "Lookup"): participant changes travel from participants to
 * lookup over @moleculer/channels. With TRANSPORTER=nats://… the adapter is NATS JetStream
 * (a stream and a durable consumer survive restarts of either side); otherwise the
 * in-process "Fake" adapter, which delivers through the broker's own events.
 */
import { Middleware } from "@moleculer/channels";
import { env } from "./settings";

/** The channel participant changes are published on (docs/internals.md "Events and channels"). */
export const PARTICIPANTS_CHANGED = "registry.participants.changed";
/** Consumer group of the lookup: one lookup node applies each change to the shared read model. */
export const LOOKUP_GROUP = "lookup";

/** Payload of PARTICIPANTS_CHANGED: the participant's state after a committed change. */
export interface ParticipantChange {
	participant: string;
	organizationKey: string;
	processes: string[];
	/** The participant's version after the change; a consumer keeps only the latest per participant. */
	version: number;
	deleted: boolean;
}

/**
 * Topic prefix: the namespace, so registries (and test runs) sharing one NATS never read
 * each other's changes. JetStream stream names allow neither dots nor wildcards.
 */
export function channelPrefix(namespace: string): string {
	return `registry-${(namespace || "default").replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** `nats://user:pass@host:4222,nats://…` → connection options for the nats client. */
function natsOptions(transporter: string) {
	const urls = transporter.split(",").map((server) => new URL(server.trim()));
	const first = urls[0];
	return {
		url: urls.map((url) => `nats://${url.host}`).join(","),
		connectionOptions: {
			...(first.username ? { user: decodeURIComponent(first.username), pass: decodeURIComponent(first.password) } : {}),
			name: "registry-channels",
		},
	};
}

export function channelsAdapter(source: NodeJS.ProcessEnv = process.env): { type: string; options: Record<string, unknown> } {
	const transporter = env("TRANSPORTER", source);
	const prefix = channelPrefix(env("NAMESPACE", source));
	if (transporter.startsWith("nats://")) {
		return {
			type: "NATS",
			options: {
				prefix,
				nats: natsOptions(transporter),
				// Applying a change is idempotent (by version), so redelivery is safe and several may run at once.
				maxInFlight: 10,
				maxRetries: 5,
				deadLettering: { enabled: true, queueName: "FAILED_PARTICIPANT_CHANGES" },
			},
		};
	}
	return { type: "Fake", options: { prefix } };
}

/** The middleware the broker registers (src/broker.ts). */
export function channelsMiddleware(source: NodeJS.ProcessEnv = process.env) {
	// The package's generated typings mark every option as required; the rest have defaults.
	return Middleware({ adapter: channelsAdapter(source) } as unknown as Parameters<typeof Middleware>[0]);
}
