/** Channel messages sealed with the cluster key (docs/internals.md "Events and channels"). */
import { Serializers, type LoggerInstance, type ServiceBroker } from "moleculer";
import type { ClusterKeys } from "./cluster-key";
import { openWith, sealWith } from "./sealed-packets";

const VERSION = 1;
const HEADER_LENGTH = 1 + 4;
/** Authenticated with every message: a transporter packet's bytes cannot pass for a message (nor its key, derived apart). */
const CONTEXT = "channel message";

/** Thrown for a message that does not open; the adapter's retries and dead letter take it from there. */
export class UnsealedMessage extends Error {}

export class SealedJsonSerializer extends Serializers.Base {
	private logger?: LoggerInstance;
	private warned = false;

	constructor(private readonly keysOf: () => ClusterKeys) {
		super();
	}

	init(broker: ServiceBroker): void {
		super.init(broker);
		this.logger = broker.getLogger("sealed-messages");
	}

	serialize(message: object): Buffer {
		const keys = this.keysOf().sealing;
		const header = Buffer.concat([Buffer.of(VERSION), keys.id]);
		return sealWith(keys.channels, header, Buffer.from(JSON.stringify(message)), CONTEXT);
	}

	deserialize(sealed: Buffer): Record<string, unknown> {
		const opened = this.open(sealed);
		if (opened) return JSON.parse(opened.toString("utf8"));
		// Once per process: every refused message also reaches the adapter's dead-letter log line.
		if (!this.warned)
			this.logger?.warn(
				"a channel message did not open (published without the cluster key, with another key, or tampered with): it is not applied, and goes to the dead-letter stream after the retries",
			);
		this.warned = true;
		throw new UnsealedMessage("channel message not sealed with the cluster key");
	}

	private open(sealed: Buffer): Buffer | null {
		if (sealed.length < HEADER_LENGTH || sealed[0] !== VERSION) return null;
		const key = this.keysOf().accepted.find((candidate) => candidate.id.equals(sealed.subarray(1, HEADER_LENGTH)));
		return key ? openWith(key.channels, sealed, HEADER_LENGTH, CONTEXT) : null;
	}
}
