/**
 * The durable channel's consumer group under a concurrent start (issue 17: every process of
 * the topology started at once). Lookup nodes that start together all find the group's
 * consumer missing and create it; NATS refuses all but one ("consumer name already in use").
 * None of them may fail to start, and each change still goes to one node of the group.
 */
import { randomBytes } from "node:crypto";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { channelsMiddleware, LOOKUP_GROUP, PARTICIPANTS_CHANGED, publishOnChannel } from "../../src/platform/channels";
import { removeNamespace } from "../support/namespace-cleanup";
import { NATS_URL, REDIS_URL } from "../support/servers";
import { pollUntil } from "./support";

const NODES = 6;
/** The channel's messages are sealed with it (src/platform/sealed-messages.ts). */
const CLUSTER_KEY = randomBytes(48).toString("base64");

test(`${NODES} lookup nodes subscribing to one group at the same moment all start, and a change goes to one of them`, async () => {
	const namespace = `ch${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
	const received: string[] = [];
	const brokers = Array.from({ length: NODES }, (_, index) => {
		const broker = new ServiceBroker({
			nodeID: `lookup-${index}`,
			logger: false,
			middlewares: [channelsMiddleware({ TRANSPORTER: NATS_URL, NAMESPACE: namespace, CLUSTER_KEY }) as never],
		});
		broker.createService({
			name: "lookup",
			channels: {
				[PARTICIPANTS_CHANGED]: { group: LOOKUP_GROUP, handler: async () => void received.push(broker.nodeID) },
			},
		} as unknown as ServiceSchema);
		return broker;
	});
	try {
		const started = await Promise.allSettled(brokers.map((broker) => broker.start()));
		expect(started.filter((result) => result.status === "rejected")).toEqual([]);
		await publishOnChannel(brokers[0], PARTICIPANTS_CHANGED, {
			participant: "p",
			organizationKey: "0088:1",
			processes: [],
			version: 1,
			deleted: false,
		});
		await pollUntil("the change to be consumed", 10000, async () => (received.length > 0 ? true : undefined));
		await new Promise((resolve) => setTimeout(resolve, 500));
		expect(received).toHaveLength(1);
	} finally {
		await Promise.allSettled(brokers.map((broker) => broker.stop()));
		await removeNamespace(namespace, { natsUrl: NATS_URL, redisUrl: REDIS_URL });
	}
}, 60000);
