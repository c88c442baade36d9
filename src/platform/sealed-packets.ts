/** Every transporter packet sealed with AES-256-GCM (docs/internals.md "Events and channels"). */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { LoggerInstance, Middleware as BrokerMiddleware, ServiceBroker } from "moleculer";
import type { ClusterKeys, DerivedKeys } from "./cluster-key";

const VERSION = 1;
const NONCE_LENGTH = 12;
const TAG_LENGTH = 16;
/** version, key id, sealed at, sender length */
const FIXED_HEADER = 1 + 4 + 6 + 1;
/** Older or newer packets are refused, bounding a replay; the margin is for clocks and a busy event loop. */
export const PACKET_MAX_AGE_MS = 60_000;

/** AES-256-GCM: `header | nonce | ciphertext | tag`, the header and `context` authenticated. */
export function sealWith(key: Buffer, header: Buffer, plaintext: Buffer, context: string): Buffer {
	const nonce = randomBytes(NONCE_LENGTH);
	const cipher = createCipheriv("aes-256-gcm", key, nonce);
	cipher.setAAD(Buffer.concat([header, Buffer.from(context)]));
	const body = cipher.update(plaintext);
	const last = cipher.final();
	return Buffer.concat([header, nonce, body, last, cipher.getAuthTag()]);
}

/** The plaintext of `sealWith`'s output whose header is `headerLength` bytes, or null when it does not authenticate. */
export function openWith(key: Buffer, sealed: Buffer, headerLength: number, context: string): Buffer | null {
	if (sealed.length < headerLength + NONCE_LENGTH + TAG_LENGTH) return null;
	const nonce = sealed.subarray(headerLength, headerLength + NONCE_LENGTH);
	const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_LENGTH });
	decipher.setAAD(Buffer.concat([sealed.subarray(0, headerLength), Buffer.from(context)]));
	decipher.setAuthTag(sealed.subarray(sealed.length - TAG_LENGTH));
	try {
		const body = decipher.update(sealed.subarray(headerLength + NONCE_LENGTH, sealed.length - TAG_LENGTH));
		return Buffer.concat([body, decipher.final()]);
	} catch {
		return null;
	}
}

/** Seals one serialized packet of `type` from `sender`. */
export function sealPacket(keys: DerivedKeys, type: string, sender: string, data: Buffer, now = Date.now()): Buffer {
	const name = Buffer.from(sender, "utf8").subarray(0, 255);
	const header = Buffer.alloc(FIXED_HEADER + name.length);
	header.writeUInt8(VERSION, 0);
	keys.id.copy(header, 1);
	header.writeUIntBE(now, 5, 6);
	header.writeUInt8(name.length, 11);
	name.copy(header, FIXED_HEADER);
	return sealWith(keys.packets, header, data, type);
}

export type OpenedPacket = { data: Buffer } | { refused: string; sender: string };

/** A sealed packet's serialized packet, or why it is refused and who it claims to be from. */
export function openPacket(keys: ClusterKeys, type: string, packet: Buffer, now = Date.now()): OpenedPacket {
	if (packet.length < FIXED_HEADER || packet[0] !== VERSION)
		return { refused: "not sealed with a cluster key", sender: claimedSender(packet) };
	const headerLength = FIXED_HEADER + packet[11];
	const sender = packet.subarray(FIXED_HEADER, Math.min(headerLength, packet.length)).toString("utf8");
	const key = keys.accepted.find((candidate) => candidate.id.equals(packet.subarray(1, 5)));
	if (!key)
		return {
			refused: `sealed with another cluster key (id ${packet.subarray(1, 5).toString("hex")})`,
			sender,
		};
	const age = now - packet.readUIntBE(5, 6);
	if (Math.abs(age) > PACKET_MAX_AGE_MS)
		return {
			refused: `sealed ${Math.round(age / 1000)} s ${age > 0 ? "ago" : "ahead"} (compare the nodes' clocks)`,
			sender,
		};
	const data = openWith(key.packets, packet, headerLength, type);
	return data ? { data } : { refused: "does not authenticate (tampered, or another key)", sender };
}

/** The sender a plain Moleculer packet names (JSON `"sender":"…"` near its start), for the log only. */
function claimedSender(packet: Buffer): string {
	const match = /"sender":"([^"]{1,100})"/.exec(packet.subarray(0, 512).toString("latin1"));
	return match ? match[1] : "(unknown)";
}

/** Senders whose refusals are logged; a flood of invented names stops being logged after this many. */
const LOGGED_SENDERS_MAX = 1000;

/** Logs a refused packet once per sender it claims. */
function refusalLog(logger: LoggerInstance): (type: string, sender: string, reason: string) => void {
	const logged = new Set<string>();
	return (type, sender, reason) => {
		if (logged.has(sender) || logged.size > LOGGED_SENDERS_MAX) return;
		logged.add(sender);
		if (logged.size > LOGGED_SENDERS_MAX)
			logger.warn("transporter packets keep failing to open, from ever new senders: no more are logged");
		else
			logger.warn(
				`dropped a ${type} packet from node ${JSON.stringify(sender)}: ${reason} (its next ones are dropped without a log line)`,
			);
	};
}

type Send = (topic: string, data: Buffer, meta: { packet?: { type?: string } }) => Promise<void>;
type Receive = (type: string, data: Buffer, socket?: unknown) => unknown;

/** The broker middleware (src/platform/broker.ts); `keys` are read when the broker starts, after the start's checks. */
export function sealedPacketsMiddleware(keysOf: () => ClusterKeys): BrokerMiddleware {
	let keys: ClusterKeys;
	let nodeID: string;
	let refused: ReturnType<typeof refusalLog>;
	return {
		name: "SealedPackets",
		created(broker: ServiceBroker) {
			nodeID = broker.nodeID;
			refused = refusalLog(broker.getLogger("sealed-packets"));
		},
		starting() {
			keys = keysOf();
		},
		transporterSend(next: Send): Send {
			return (topic, data, meta) =>
				next(topic, sealPacket(keys.sealing, meta.packet?.type ?? "", nodeID, data), meta);
		},
		transporterReceive(next: Receive): Receive {
			return (type, data, socket) => {
				const opened = openPacket(keys, type, data);
				if ("data" in opened) return next(type, opened.data, socket);
				refused(type, opened.sender, opened.refused);
			};
		},
	} as unknown as BrokerMiddleware;
}
