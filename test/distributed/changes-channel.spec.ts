/**
 * The change feed on the durable channel `registry.changes` (issue 16, docs/decisions.md
 * "Change feed"): a subscriber in its own consumer group receives every committed change that
 * GET /rest/api/changes pages, also across its own stop and restart in the middle of a stream of
 * changes (the group's durable consumer keeps its place), and nothing it applies by version
 * leaves it with another state than the feed's.
 */
import { ServiceBroker, type ServiceSchema } from "moleculer";
import type { Change } from "../../src/contract/changes";
import { channelsMiddleware, REGISTRY_CHANGES } from "../../src/platform/channels";
import { seededRandom } from "../support/seeded-random";
import { PROCESS_READY_TIMEOUT_MS, type Cluster } from "../support/cluster";
import { NATS_URL } from "../support/servers";
import { demoAuth, REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { FREE_PROCESSES, Participants, pollUntil, send, startSeededCluster } from "./support";

const CHANGES = "application/vnd.registry.changes.find.v1+json";
const STEPS = 60;

let cluster: Cluster;

beforeAll(async () => {
	cluster = await startSeededCluster();
	await cluster.broker.waitForServices(["audit"], PROCESS_READY_TIMEOUT_MS);
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => cluster?.stop());

/** Every change of the feed, as ADMIN sees it (the whole registry). */
async function feed(): Promise<Change[]> {
	const changes: Change[] = [];
	for (let after = "0"; ;) {
		const answer = await send(`${cluster.url}/rest/api/changes?after=${after}&limit=1000`, {
			headers: { Authorization: demoAuth("ADMIN"), Accept: CHANGES },
		});
		if (answer.status !== 200) throw new Error(`GET /changes: ${answer.status} ${JSON.stringify(answer.body)}`);
		const page = answer.body as { changes: Change[]; cursor: string; more: boolean };
		changes.push(...page.changes);
		after = page.cursor;
		if (!page.more) return changes;
	}
}

/** A subscriber of `registry.changes` in its own group: what it received, by sequence. */
function subscriber(group: string, received: Map<number, Change>, deliveries: { count: number }): ServiceBroker {
	const broker = new ServiceBroker({
		namespace: cluster.namespace,
		nodeID: `changes-follower-${group}-${Date.now()}`,
		logger: false,
		// The cluster's key: its channel messages are sealed (src/platform/sealed-messages.ts).
		middlewares: [
			channelsMiddleware({
				TRANSPORTER: NATS_URL,
				NAMESPACE: cluster.namespace,
				CLUSTER_KEY: cluster.env.CLUSTER_KEY,
			}) as never,
		],
	});
	broker.createService({
		name: "follower",
		channels: {
			[REGISTRY_CHANGES]: {
				group,
				handler: async (change: Change) => {
					deliveries.count++;
					received.set(change.sequence, change);
				},
			},
		},
	} as unknown as ServiceSchema);
	return broker;
}

/** The state a follower builds: each record at its highest version, tombstones remove. */
function mirror(changes: Iterable<Change>): Map<string, { version: number; record: unknown }> {
	const state = new Map<string, { version: number; deleted: boolean; record: unknown }>();
	for (const change of changes) {
		const key = `${change.resource}/${change.identifier}`;
		const known = state.get(key);
		if (!known || change.version > known.version)
			state.set(key, { version: change.version, deleted: change.deleted, record: change.record });
	}
	return new Map(
		[...state]
			.filter(([, value]) => !value.deleted)
			.map(([key, value]) => [key, { version: value.version, record: value.record }]),
	);
}

test(`a subscriber stopped and restarted during ${STEPS} random changes receives every change of the feed, and mirrors its state`, async () => {
	const random = seededRandom(20261125);
	const group = `test-follower-${Math.random().toString(36).slice(2, 8)}`;
	const received = new Map<number, Change>();
	const deliveries = { count: 0 };
	const participants = new Participants(cluster);
	const held = new Map<string, string[]>();
	const pick = () =>
		FREE_PROCESSES.filter(() => random() < 0.4)
			.concat(FREE_PROCESSES[Math.floor(random() * FREE_PROCESSES.length)])
			.filter((value, index, all) => all.indexOf(value) === index);

	let follower = subscriber(group, received, deliveries);
	await follower.start();
	for (let step = 0; step < STEPS; step++) {
		if (step === Math.floor(STEPS / 3)) await follower.stop();
		if (step === Math.floor((2 * STEPS) / 3)) {
			follower = subscriber(group, received, deliveries);
			await follower.start();
		}
		const organizations = [...held.keys()];
		const roll = random();
		let answer;
		if (organizations.length === 0 || roll < 0.4) {
			const organization = `77${String(process.pid).slice(-3)}${String(step).padStart(4, "0")}`;
			const processes = pick();
			answer = await participants.add(organization, processes);
			if (answer.status === 201) held.set(organization, processes);
		} else {
			const organization = organizations[Math.floor(random() * organizations.length)];
			if (roll < 0.75) {
				const processes = pick();
				answer = await participants.update(organization, processes);
				held.set(organization, processes);
			} else {
				answer = await participants.remove(organization);
				held.delete(organization);
			}
		}
		expect([200, 201, 204]).toContain(answer.status);
	}

	const committed = await feed();
	const last = committed[committed.length - 1].sequence;
	await pollUntil(`the subscriber to receive change ${last}`, 20000, async () =>
		received.has(last) ? true : undefined,
	);
	try {
		// Every change of the feed, none other; redelivery (at least once) may repeat one, never lose one.
		expect([...received.keys()].sort((a, b) => a - b)).toEqual(committed.map((change) => change.sequence));
		for (const change of committed) expect(received.get(change.sequence)).toEqual(change);
		expect(deliveries.count).toBeGreaterThanOrEqual(committed.length);
		expect(mirror(received.values())).toEqual(mirror(committed));
		const participantsMirrored = [...mirror(received.values()).keys()].filter((key) =>
			key.startsWith("participant/"),
		);
		expect(participantsMirrored.length).toBeGreaterThanOrEqual(held.size);
	} finally {
		await follower.stop();
	}
}, 240000);
