/**
 * The cluster key and what it seals (src/platform/cluster-key.ts, sealed-packets.ts,
 * sealed-messages.ts; docs/security.md "The cluster's wires"): a start without a usable key is
 * refused, and a packet or channel message opens only unchanged, with an accepted key, as the
 * packet type it was sealed as, and while it is fresh.
 */
import { ServiceBroker } from "moleculer";
import {
	clusterKeyProblem,
	clusterKeys,
	deriveKeys,
	MIN_CLUSTER_KEY_LENGTH,
	type ClusterKeys,
} from "../../src/platform/cluster-key";
import { checkCredentials } from "../../src/platform/connections";
import { openPacket, PACKET_MAX_AGE_MS, sealPacket } from "../../src/platform/sealed-packets";
import { SealedJsonSerializer, UnsealedMessage } from "../../src/platform/sealed-messages";

const KEY = "k".repeat(20) + "-cluster-key-of-the-tests-" + "x".repeat(20);
const OTHER_KEY = "o".repeat(20) + "-another-cluster-key-here-" + "y".repeat(20);
const NATS = "nats://127.0.0.1:1";
const PACKET = Buffer.from(JSON.stringify({ ver: "4", sender: "gateway-1", action: "accounts.exportRecords" }));

const keysOf = (key: string, namespace = "ns"): ClusterKeys => clusterKeys({ CLUSTER_KEY: key, NAMESPACE: namespace });

function opened(keys: ClusterKeys, type: string, packet: Buffer, now?: number): string {
	const result = openPacket(keys, type, packet, now);
	return "data" in result ? result.data.toString() : `refused: ${result.refused}`;
}

describe("CLUSTER_KEY at start", () => {
	test("a process with TRANSPORTER and no CLUSTER_KEY is refused, saying how to make one", async () => {
		expect(clusterKeyProblem({ TRANSPORTER: NATS })).toMatch(/^CLUSTER_KEY is not set: .*openssl rand -base64 48/);
		await expect(checkCredentials({ TRANSPORTER: NATS })).rejects.toThrow(/CLUSTER_KEY is not set/);
	});

	test("the one-process default needs none", () => {
		expect(clusterKeyProblem({})).toBeNull();
		expect(clusterKeys({}).accepted).toHaveLength(1);
	});

	test("a key shorter than 32 characters, or the Secret's placeholder, is refused without showing it", () => {
		const short = "s".repeat(MIN_CLUSTER_KEY_LENGTH - 1);
		expect(clusterKeyProblem({ TRANSPORTER: NATS, CLUSTER_KEY: short })).toMatch(
			/^CLUSTER_KEY is too short \(31 characters, at least 32\)/,
		);
		expect(clusterKeyProblem({ TRANSPORTER: NATS, CLUSTER_KEY: short })).not.toContain(short);
		expect(clusterKeyProblem({ CLUSTER_KEY: "CHANGE-ME" })).toMatch(/^CLUSTER_KEY still holds the placeholder/);
		expect(clusterKeyProblem({ TRANSPORTER: NATS, CLUSTER_KEY: KEY, CLUSTER_KEY_PREVIOUS: "short" })).toMatch(
			/^CLUSTER_KEY_PREVIOUS is too short/,
		);
		expect(clusterKeyProblem({ CLUSTER_KEY_PREVIOUS: KEY })).toMatch(/without CLUSTER_KEY/);
		expect(() => clusterKeys({ TRANSPORTER: NATS })).toThrow(/CLUSTER_KEY is not set/);
		expect(clusterKeyProblem({ TRANSPORTER: NATS, CLUSTER_KEY: KEY })).toBeNull();
	});

	test("each use has its own key, and each namespace its own keys", () => {
		const keys = deriveKeys(KEY, "ns");
		const uses = [keys.packets, keys.channels, keys.callers].map((key) => key.toString("hex"));
		expect(new Set(uses).size).toBe(3);
		expect(deriveKeys(KEY, "other").packets.equals(keys.packets)).toBe(false);
		expect(deriveKeys(KEY, "ns").packets.equals(keys.packets)).toBe(true);
	});
});

describe("a sealed transporter packet", () => {
	const keys = keysOf(KEY);
	const sealed = sealPacket(keys.sealing, "REQ", "gateway-1", PACKET);

	test("opens with the cluster key, as the type it was sealed as; its payload is not in the clear", () => {
		expect(opened(keys, "REQ", sealed)).toBe(PACKET.toString());
		expect(sealed.includes("accounts.exportRecords")).toBe(false);
		// A fresh nonce each time: the same packet never seals to the same bytes.
		expect(sealPacket(keys.sealing, "REQ", "gateway-1", PACKET).equals(sealed)).toBe(false);
	});

	test("a byte changed anywhere (header, sender, nonce, ciphertext, tag) is refused", () => {
		for (let index = 0; index < sealed.length; index++) {
			const tampered = Buffer.from(sealed);
			tampered[index] ^= 0x01;
			expect({ index, result: opened(keys, "REQ", tampered) }).toEqual({
				index,
				result: expect.stringMatching(/^refused/),
			});
		}
	});

	test("another key, another packet type, a plain Moleculer packet or a stale one is refused", () => {
		expect(opened(keysOf(OTHER_KEY), "REQ", sealed)).toMatch(/^refused: sealed with another cluster key/);
		expect(opened(keysOf(KEY, "another-namespace"), "REQ", sealed)).toMatch(/^refused/);
		expect(opened(keys, "RES", sealed)).toMatch(/^refused: does not authenticate/);
		expect(opened(keys, "REQ", PACKET)).toMatch(/^refused: not sealed/);
		const old = sealPacket(keys.sealing, "REQ", "gateway-1", PACKET, Date.now() - PACKET_MAX_AGE_MS - 1000);
		expect(opened(keys, "REQ", old)).toMatch(/^refused: sealed \d+ s ago/);
		expect(openPacket(keys, "REQ", PACKET)).toMatchObject({ sender: "gateway-1" });
	});

	test("a rotation: processes with CLUSTER_KEY_PREVIOUS seal with it and accept both, so old and new understand each other", () => {
		const before = keysOf(OTHER_KEY);
		const during = clusterKeys({ CLUSTER_KEY: KEY, CLUSTER_KEY_PREVIOUS: OTHER_KEY, NAMESPACE: "ns" });
		const after = keysOf(KEY);
		const from = (sender: ClusterKeys) => sealPacket(sender.sealing, "INFO", "node", PACKET);
		expect(opened(before, "INFO", from(during))).toBe(PACKET.toString());
		expect(opened(during, "INFO", from(before))).toBe(PACKET.toString());
		expect(opened(during, "INFO", from(after))).toBe(PACKET.toString());
		expect(opened(after, "INFO", from(during))).toMatch(/^refused/);
	});
});

describe("a sealed channel message (the channels adapter's serializer)", () => {
	const broker = new ServiceBroker({ logger: false });
	const serializer = (key: string) => {
		const made = new SealedJsonSerializer(() => keysOf(key));
		made.init(broker);
		return made;
	};
	const change = { participant: "p", organizationKey: "0192:910000001", processes: [], version: 1, deleted: false };

	test("opens with the cluster key; its content is not in the clear", () => {
		const sealed = serializer(KEY).serialize(change);
		expect(sealed.includes("910000001")).toBe(false);
		expect(serializer(KEY).deserialize(sealed)).toEqual(change);
	});

	test("a message published without the key, with another key, or changed, throws (the adapter's retries and dead letter follow)", () => {
		const sealed = serializer(KEY).serialize(change);
		const tampered = Buffer.from(sealed);
		tampered[tampered.length - 20] ^= 0x01;
		for (const message of [Buffer.from(JSON.stringify(change)), serializer(OTHER_KEY).serialize(change), tampered])
			expect(() => serializer(KEY).deserialize(message)).toThrow(UnsealedMessage);
	});
});
