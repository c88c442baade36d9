/**
 * Issue 4, "two lookup nodes share the work; nothing is lost if a node dies mid-message
 * (at-least-once, idempotent apply)". Two lookup processes consume the durable channel in
 * one consumer group (`lookup`): JetStream hands each change to one of them. They share one
 * read model (here the same SQLite files, as replicas share MongoDB in production), so the
 * answer is right whichever node applied a change and whichever node is asked.
 */
import { ONE_PROCESS_PER_SERVICE, type Cluster } from "../support/cluster";
import { organizationKey } from "../../src/contract/identifiers";
import { channelPrefix, PARTICIPANTS_CHANGED, type ParticipantChange } from "../../src/platform/channels";
import {
	disagreements,
	FREE_PROCESSES,
	metricOf,
	Participants,
	pollUntil,
	qid,
	startSeededCluster,
	truthOf,
} from "./support";
import { REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { callerMeta } from "../../src/platform/caller-signature";

const NODES = ["lookup", "lookup2"];
const ADMIN = { username: "distributed-test", role: "ADMIN" } as const;

let cluster: Cluster;

beforeAll(async () => {
	cluster = await startSeededCluster({ topology: ONE_PROCESS_PER_SERVICE, shareDataWith: { lookup2: "lookup" } });
	// The second node joins the running cluster (and the consumer group), as a scaled-out replica does.
	await cluster.add("lookup2", "lookup");
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => cluster?.stop());

const nodeId = (name: string) => `${name}-${cluster.namespace}`;

/** Messages the lookup group has not acknowledged yet, as JetStream counts them. */
async function unhandledMessages(): Promise<number> {
	const manager = (
		cluster.broker as unknown as {
			channelAdapter: {
				manager: {
					consumers: {
						info(
							stream: string,
							consumer: string,
						): Promise<{ num_pending: number; num_ack_pending: number }>;
					};
				};
			};
		}
	).channelAdapter.manager;
	const stream = `${channelPrefix(cluster.namespace)}.${PARTICIPANTS_CHANGED}`.split(".").join("_");
	const info = await manager.consumers.info(stream, "lookup");
	return info.num_pending + info.num_ack_pending;
}

/** One node's answer, asked directly (not through the gateway's balancing). */
async function answerOn(name: string, organization: string): Promise<string[] | null> {
	try {
		const processes = await cluster.broker.call<{ identifier: string }[], { qualifiedIdentifier: string }>(
			"lookup.organizationProcesses",
			{ qualifiedIdentifier: qid(organization) },
			{ nodeID: nodeId(name), meta: callerMeta(cluster.broker, ADMIN) },
		);
		return processes.map((process) => process.identifier).sort();
	} catch (error) {
		if ((error as { code?: number }).code === 404) return null;
		throw error;
	}
}

async function nodesDisagreeing(organizations: string[]): Promise<string[]> {
	const differing: string[] = [];
	for (const organization of organizations) {
		const truth = JSON.stringify(await truthOf(cluster, organization));
		for (const name of NODES) {
			const answer = JSON.stringify(await answerOn(name, organization));
			if (answer !== truth) differing.push(`${name} ${organization}: ${answer} (participants: ${truth})`);
		}
	}
	return differing;
}

test("two lookup nodes share the channel work (one consumer group): each applies some of the changes, none is applied twice to a wrong result, and both answer every organization as the participants service does", async () => {
	const sp1 = new Participants(cluster);
	const organizations = Array.from({ length: 16 }, (_, index) => `shared-${cluster.namespace}-${index}`);
	const before = await Promise.all(NODES.map((name) => metricOf(cluster, name, "moleculer_channels_messages_total")));
	const started = Date.now();
	let changes = 0;
	const failures: string[] = [];
	const expectStatus = (organization: string, status: number, expected: number) => {
		changes++;
		if (status !== expected) failures.push(`${organization}: ${status}, expected ${expected}`);
	};
	// Four workers, each on its own organizations: add, two updates, delete, add again.
	await Promise.all(
		[0, 1, 2, 3].map(async (worker) => {
			for (const organization of organizations.filter((_, index) => index % 4 === worker)) {
				const rotate = (offset: number) => [
					FREE_PROCESSES[(worker + offset) % FREE_PROCESSES.length],
					FREE_PROCESSES[(worker + offset + 3) % FREE_PROCESSES.length],
				];
				expectStatus(organization, (await sp1.add(organization, rotate(0))).status, 201);
				expectStatus(organization, (await sp1.update(organization, rotate(1))).status, 200);
				expectStatus(organization, (await sp1.update(organization, rotate(2))).status, 200);
				expectStatus(organization, (await sp1.remove(organization)).status, 204);
				expectStatus(organization, (await sp1.add(organization, rotate(4))).status, 201);
			}
		}),
	);
	const changed = Date.now();
	expect(failures).toEqual([]);

	await pollUntil(
		"both lookup nodes to answer every organization right",
		60000,
		async () => ((await nodesDisagreeing(organizations)).length === 0 ? true : undefined),
		250,
	);
	const settled = Date.now();
	expect(await disagreements(cluster, organizations)).toEqual([]);

	const after = await Promise.all(NODES.map((name) => metricOf(cluster, name, "moleculer_channels_messages_total")));
	const handled = after.map((count, index) => count - before[index]);
	// eslint-disable-next-line no-console
	console.info(
		`lookup-shared-work: ${changes} changes in ${changed - started} ms; messages handled per node ${NODES.map((name, index) => `${name}=${handled[index]}`).join(", ")}; ` +
			`both nodes right ${settled - changed} ms after the last change`,
	);
	// Both nodes took part, and together they handled every change (more only if one was redelivered).
	for (const count of handled) expect(count).toBeGreaterThan(0);
	expect(handled[0] + handled[1]).toBeGreaterThanOrEqual(changes);
}, 180000);

test("a change delivered again, or an older version delivered late, changes nothing and tells no node (apply is idempotent by version); a change applied by one node is seen by both", async () => {
	const sp1 = new Participants(cluster);
	const organization = `replay-${cluster.namespace}`;
	expect((await sp1.add(organization, [FREE_PROCESSES[0], FREE_PROCESSES[1]])).status).toBe(201);
	expect((await sp1.update(organization, [FREE_PROCESSES[2]])).status).toBe(200);
	await pollUntil("both nodes to show the update", 30000, async () =>
		(await nodesDisagreeing([organization])).length === 0 ? true : undefined,
	);

	const [current] = await cluster.broker.call<Omit<ParticipantChange, "deleted">[], { organizationKey: string }>(
		"participants.organizationProcessSets",
		{
			organizationKey: organizationKey("0088", organization),
		},
	);
	expect(current.version).toBeGreaterThanOrEqual(2);
	const redelivered: ParticipantChange = { ...current, deleted: false };
	const late: ParticipantChange = {
		...current,
		processes: [FREE_PROCESSES[0], FREE_PROCESSES[1]],
		version: current.version - 1,
		deleted: false,
	};
	const lateDelete: ParticipantChange = { ...current, processes: [], version: current.version, deleted: true };
	const invalidated: unknown[] = [];
	const probe = cluster.broker.createService({
		name: "invalidated-probe",
		events: { "lookup.invalidated": (ctx: { params: unknown }) => void invalidated.push(ctx.params) },
	});
	try {
		const send = (cluster.broker as unknown as { sendToChannel(name: string, payload: unknown): Promise<void> })
			.sendToChannel;
		for (let round = 0; round < 2; round++)
			for (const change of [redelivered, late, lateDelete])
				await send.call(cluster.broker, PARTICIPANTS_CHANGED, change);
		await pollUntil("the lookup group to have handled every message", 30000, async () =>
			(await unhandledMessages()) === 0 ? true : undefined,
		);
		// Nothing changed, so no node was told to forget anything.
		expect(invalidated).toEqual([]);
	} finally {
		await cluster.broker.destroyService(probe);
	}
	expect(await nodesDisagreeing([organization])).toEqual([]);
	expect(await answerOn("lookup", organization)).toEqual([FREE_PROCESSES[2]]);

	// Both nodes hold the answer in memory now; one of them applies the next change, and the
	// other drops its copy on the `lookup.invalidated` event.
	expect((await sp1.update(organization, [FREE_PROCESSES[3], FREE_PROCESSES[4]])).status).toBe(200);
	await pollUntil("both nodes to show the next change", 30000, async () =>
		(await nodesDisagreeing([organization])).length === 0 ? true : undefined,
	);
	for (const name of NODES)
		expect(await answerOn(name, organization)).toEqual([FREE_PROCESSES[3], FREE_PROCESSES[4]].sort());
}, 120000);
