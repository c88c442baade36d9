/**
 * Issue 4, "a lookup node killed and restarted while participants change: its answers are
 * right again after restart, with no event lost". The lookup runs in a process of its own
 * (not beside the gateway); participants keep changing through the gateway while it is
 * dead; the JetStream durable consumer `lookup` keeps what it missed and delivers it when
 * the node is back (messages it had taken but not acknowledged come again after ack_wait).
 */
import { ONE_PROCESS_PER_SERVICE, type Cluster } from "../support/cluster";
import {
	disagreements,
	FREE_PROCESSES,
	metricOf,
	Participants,
	pollUntil,
	startSeededCluster,
	type Answer,
} from "./support";
import { seededRandom as random } from "../support/seeded-random";
import { REGISTRY_START_TIMEOUT_MS } from "../support/registry";

let cluster: Cluster;

beforeAll(async () => {
	cluster = await startSeededCluster({ topology: ONE_PROCESS_PER_SERVICE });
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => cluster?.stop());

test("a lookup node killed (SIGKILL) while participants are added, updated and deleted, then restarted, answers every touched organization as the participants service does: the durable consumer delivers every change it missed", async () => {
	const seed = Number(process.env.LOOKUP_RESTART_SEED ?? 20261122);
	const next = random(seed);
	const subset = () => {
		const chosen = FREE_PROCESSES.filter(() => next() < 0.4);
		return chosen.length ? chosen : [FREE_PROCESSES[Math.floor(next() * FREE_PROCESSES.length)]];
	};
	const sp1 = new Participants(cluster);
	const organizations = Array.from({ length: 12 }, (_, index) => `restart-${cluster.namespace}-${index}`);
	const registered = new Set<string>();

	// Before the kill: every organization registered, and the lookup agrees (its consumer is live).
	for (const organization of organizations) {
		expect((await sp1.add(organization, subset())).status).toBe(201);
		registered.add(organization);
	}
	await pollUntil("the lookup to agree before the kill", 30000, async () =>
		(await disagreements(cluster, organizations)).length === 0 ? true : undefined,
	);

	// Changes go on through the gateway, one worker per half of the organizations, until told to stop.
	const failures: string[] = [];
	const done = { total: 0 };
	let stop = false;
	const change = async (organization: string): Promise<void> => {
		let answer: Answer;
		let expected: number;
		if (!registered.has(organization)) {
			answer = await sp1.add(organization, subset());
			expected = 201;
			if (answer.status === 201) registered.add(organization);
		} else if (next() < 0.25) {
			answer = await sp1.remove(organization);
			expected = 204;
			if (answer.status === 204) registered.delete(organization);
		} else {
			answer = await sp1.update(organization, subset());
			expected = 200;
		}
		if (answer.status !== expected)
			failures.push(`${organization}: ${answer.status} ${answer.error ?? JSON.stringify(answer.body)}`);
		done.total++;
	};
	const worker = async (mine: string[]) => {
		for (let round = 0; !stop; round++) await change(mine[round % mine.length]);
	};
	const workers = [
		worker(organizations.filter((_, index) => index % 2 === 0)),
		worker(organizations.filter((_, index) => index % 2 === 1)),
	];

	try {
		await pollUntil("changes before the kill", 30000, async () => (done.total >= 10 ? true : undefined), 20);
		const killedAt = Date.now();
		await cluster.kill("lookup", "SIGKILL");
		const atKill = done.total;

		// Dead for a while (3 s at least, the time a real node takes to be replaced) with changes meanwhile.
		await pollUntil(
			"changes while the lookup is dead",
			60000,
			async () => (done.total - atKill >= 30 && Date.now() - killedAt >= 3000 ? true : undefined),
			20,
		);
		const restartAt = Date.now();
		const duringDowntime = done.total - atKill;
		await cluster.restart("lookup");
		const readyAt = Date.now();
		const atRestart = done.total;
		await pollUntil(
			"changes after the restart",
			30000,
			async () => (done.total - atRestart >= 10 ? true : undefined),
			20,
		);
		stop = true;
		await Promise.all(workers);
		const stoppedAt = Date.now();

		const converged = await pollUntil(
			"every lookup answer to equal the participants' union",
			90000,
			async () => ((await disagreements(cluster, organizations)).length === 0 ? true : undefined),
			250,
		);
		const convergedAt = Date.now();
		// The restarted node consumed at least everything published while it was dead.
		const consumed = await metricOf(cluster, "lookup", "moleculer_channels_messages_total");

		// eslint-disable-next-line no-console
		console.info(
			`lookup-restart (seed ${seed}): ${done.total} changes (${duringDowntime} while the lookup was dead for ${restartAt - killedAt} ms); ` +
				`restart ready in ${readyAt - restartAt} ms; all ${organizations.length} organizations right ${convergedAt - stoppedAt} ms after the last change; ` +
				`restarted node consumed ${consumed} message(s)`,
		);
		expect(failures).toEqual([]);
		expect(converged).toBe(true);
		expect(duringDowntime).toBeGreaterThanOrEqual(30);
		expect(consumed).toBeGreaterThanOrEqual(duringDowntime);
	} finally {
		stop = true;
		await Promise.all(workers);
	}
	expect(await disagreements(cluster, organizations)).toEqual([]);
}, 240000);
