/**
 * Issue 8, "a service process killed in distributed mode (lookup, participants, catalog):
 * requests that need it answer 503 in the spec's error shape within the configured request
 * timeout (never hang, never 500); a second node of the same service takes over without a
 * failed request; the killed one rejoins and serves again".
 *
 * A SIGKILLed node says no goodbye: the gateway learns of it when its heartbeats stop
 * (moleculer.config.ts: every second, gone after 4 s without one). Until then requests may
 * still be routed to it; they wait, and are rejected when the node is declared gone. A read
 * rejected that way is tried again on another node (src/platform/retry-policy.ts), so with a second
 * node nothing fails; with none, the answer is the spec's 503.
 *
 * The lookup's reads name a new organization each time: the gateway holds the answers of those
 * it has asked before (services/api/held-answers.ts), and those are answered without the lookup.
 */
import { ONE_PROCESS_PER_SERVICE, type Cluster } from "../support/cluster";
import { demoAuth, REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { metricOf, pollUntil, send, type Answer } from "./support";
import { startSeededCluster } from "./support";

/** The configured request timeout of this cluster (the default of src/config/settings.ts). */
const REQUEST_TIMEOUT = 10000;

let cluster: Cluster;

beforeAll(async () => {
	cluster = await startSeededCluster({
		topology: ONE_PROCESS_PER_SERVICE,
		env: { REQUEST_TIMEOUT: String(REQUEST_TIMEOUT) },
		shareDataWith: { participants2: "participants", lookup2: "lookup", catalog2: "catalog" },
	});
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => cluster?.stop());

interface Subject {
	service: string;
	action: string;
	read(): Promise<Answer>;
	/** The answer of a node that served the read. */
	served(answer: Answer): boolean;
}

const ok = (answer: Answer) => answer.status === 200;
let unknownOrganization = 0;

const sp1 = demoAuth("SERVICE_PROVIDER", 0);

const SUBJECTS: Subject[] = [
	{
		service: "participants",
		action: "participants.find",
		read: () =>
			send(`${cluster.url}/rest/api/participants?size=5&sort=name`, {
				headers: { Accept: "application/vnd.registry.participants.find.v1+json", Authorization: sp1 },
			}),
		served: ok,
	},
	{
		service: "lookup",
		action: "lookup.organizationProcesses",
		// An organization the registry has no participant of: the lookup's 404, never held before.
		read: () =>
			send(
				`${cluster.url}/rest/api/organizations/${encodeURIComponent(`iso6523-actorid-upis::0088:sk${process.pid}x${++unknownOrganization}`)}/processes`,
				{
					headers: { Accept: "application/vnd.registry.organizations.processes.v1+json" },
				},
			),
		served: (answer) =>
			answer.status === 404 && (answer.body as { exception?: string } | null)?.exception === "NotFoundException",
	},
	{
		service: "catalog",
		action: "catalog.findProcesses",
		read: () =>
			send(`${cluster.url}/rest/api/processes?size=5&sort=title`, {
				headers: { Accept: "application/vnd.registry.processes.find.v1+json" },
			}),
		served: ok,
	},
];

interface Timed extends Answer {
	/** When it was sent (Date.now()), for the figures. */
	at: number;
	/** Its place among the loop's events and the test's marks: when it was sent, and when its answer came. */
	sent: number;
	answered: number;
}

/**
 * `workers` clients sending the subject's read one after another until stopped. Sending, answers
 * and the test's marks are counted in the order they happen in this process, so "sent after X"
 * is exact: a clock in milliseconds cannot order a request sent in the same millisecond as X.
 */
function readLoop(subject: Subject, workers = 2) {
	const answers: Timed[] = [];
	let events = 0;
	let stopped = false;
	const run = async () => {
		while (!stopped) {
			const at = Date.now();
			const sent = ++events;
			const answer = await subject.read();
			answers.push({ ...answer, at, sent, answered: ++events });
		}
	};
	const running = Array.from({ length: workers }, run);
	return {
		/** In the order they were answered. */
		answers,
		/** Now, in the loop's order of events. */
		mark: () => ++events,
		/** The answers to requests sent after the mark. */
		since: (mark: number) => answers.filter((answer) => answer.sent > mark),
		async stop() {
			stopped = true;
			await Promise.all(running);
		},
	};
}

const onlineNodes = () => metricOf(cluster, "gateway", "moleculer_registry_nodes_online_total");

/** Waits until the gateway knows every running process (and the test's broker) as online; returns that count. */
async function everyNodeOnline(): Promise<number> {
	const running = [...cluster.processes.values()].filter(
		(entry) => entry.child.exitCode === null && entry.child.signalCode === null,
	).length;
	// The gateway counts itself, the other processes and the test's broker.
	return pollUntil("the gateway to see every node", 30000, async () =>
		(await onlineNodes()) === running + 1 ? running + 1 : undefined,
	);
}
const describeAnswer = (answer: Answer) =>
	`${answer.status} after ${answer.ms} ms: ${answer.error ?? JSON.stringify(answer.body)}`;

/** The spec's error body of a 503. */
function expectServiceUnavailable(answer: Answer): void {
	expect({ status: answer.status, error: answer.error }).toEqual({ status: 503, error: undefined });
	expect(answer.body).toEqual({
		timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/),
		status: 503,
		error: "Service Unavailable",
		exception: "ServiceUnavailableException",
		message: expect.any(String),
		path: expect.stringMatching(/^\/rest\/api\//),
	});
}

describe("the only node of a service killed (SIGKILL)", () => {
	test.each(SUBJECTS.map((subject) => [subject.service, subject]))(
		"%s: requests that need it answer 503 ServiceUnavailableException within REQUEST_TIMEOUT (never hang, never 500); restarted, it rejoins and serves again",
		async (_name, subject) => {
			const { served } = subject as Subject;
			const loop = readLoop(subject as Subject);
			try {
				await pollUntil(
					"answers before the kill",
					30000,
					async () => (loop.answers.filter(served).length >= 10 ? true : undefined),
					20,
				);
				const online = await everyNodeOnline();
				const killedAt = Date.now();
				const killed = loop.mark();
				await cluster.kill((subject as Subject).service, "SIGKILL");
				await pollUntil("the gateway to drop the dead node", 30000, async () =>
					(await onlineNodes()) < online ? true : undefined,
				);
				const droppedAt = Date.now();
				const dropped = loop.mark();
				// Requests after the node is known gone: answered at once.
				await pollUntil(
					"answers after the node was dropped",
					30000,
					async () => (loop.since(dropped).length >= 10 ? true : undefined),
					20,
				);
				const restartAt = Date.now();
				const restarted = loop.mark();
				await cluster.restart((subject as Subject).service);
				// It serves again once a served answer came: a request sent meanwhile may have reached the
				// gateway before the restarted node's INFO did (a 503 then), one sent after it cannot.
				const firstServed = await pollUntil(
					"the restarted node to serve",
					30000,
					async () => loop.since(restarted).find(served),
					20,
				);
				const servedAgain = firstServed.answered;
				await pollUntil(
					"answers after it serves again",
					30000,
					async () => (loop.since(servedAgain).length >= 10 ? true : undefined),
					20,
				);
				await loop.stop();

				// Everything answered after the kill (the requests in flight at the kill included) and
				// sent before the node served again: a 503 in the spec's shape, in time.
				const dead = loop.answers.filter(
					(answer) => answer.answered > killed && answer.sent < servedAgain && !served(answer),
				);
				const slowest = Math.max(...dead.map((answer) => answer.ms));
				const afterDrop = dead.filter((answer) => answer.sent > dropped);
				// eslint-disable-next-line no-console
				console.info(
					`service-kill ${(subject as Subject).service} (only node): dropped by the gateway ${droppedAt - killedAt} ms after the kill; ${dead.length} answers while dead, ` +
						`slowest ${slowest} ms, slowest once dropped ${Math.max(...afterDrop.map((answer) => answer.ms))} ms; restarted and serving ${firstServed.at + firstServed.ms - restartAt} ms after the restart began`,
				);
				expect(dead.length).toBeGreaterThan(0);
				for (const answer of dead) {
					expectServiceUnavailable(answer);
					expect(answer.ms).toBeLessThanOrEqual(REQUEST_TIMEOUT + 1000);
				}
				// Once the node is known gone, a 503 is immediate.
				for (const answer of afterDrop) expect(answer.ms).toBeLessThan(1000);
				// Nothing else than served answers and 503 at any time, and only served ones once it serves again.
				expect(
					loop.answers.filter((answer) => !served(answer) && answer.status !== 503).map(describeAnswer),
				).toEqual([]);
				expect(
					loop
						.since(servedAgain)
						.filter((answer) => !served(answer))
						.map(describeAnswer),
				).toEqual([]);
			} finally {
				await loop.stop();
			}
		},
		90000,
	);
});

describe("one of two nodes of a service killed (SIGKILL)", () => {
	beforeAll(async () => {
		// A second node of each service joins the running cluster (sharing the first one's store).
		for (const subject of SUBJECTS) await cluster.add(`${subject.service}2`, subject.service);
	}, 120000);

	test.each(SUBJECTS.map((subject) => [subject.service, subject]))(
		"%s: the other node takes over without a failed request; the killed one, restarted, rejoins and serves again",
		async (_name, subject) => {
			const { service, action, served } = subject as Subject;
			const loop = readLoop(subject as Subject, 3);
			try {
				// Both nodes serve before the kill.
				const before = await Promise.all(
					[service, `${service}2`].map((name) =>
						metricOf(cluster, name, "moleculer_request_total", { action }),
					),
				);
				await pollUntil("both nodes to serve", 30000, async () => {
					const now = await Promise.all(
						[service, `${service}2`].map((name) =>
							metricOf(cluster, name, "moleculer_request_total", { action }),
						),
					);
					return now.every((count, index) => count > before[index]) ? true : undefined;
				});
				const online = await everyNodeOnline();
				const killedAt = Date.now();
				const killed = loop.mark();
				await cluster.kill(service, "SIGKILL");
				await pollUntil("the gateway to drop the dead node", 30000, async () =>
					(await onlineNodes()) < online ? true : undefined,
				);
				const droppedAt = Date.now();
				const dropped = loop.mark();
				await pollUntil(
					"answers after the node was dropped",
					30000,
					async () => (loop.since(dropped).length >= 20 ? true : undefined),
					20,
				);
				const restartAt = Date.now();
				await cluster.restart(service);
				// The restarted node takes requests again (its own metrics count them).
				await pollUntil("the restarted node to serve again", 30000, async () =>
					(await metricOf(cluster, service, "moleculer_request_total", { action })) > 0 ? true : undefined,
				);
				const servingAt = Date.now();
				await loop.stop();

				// The requests in flight at the kill included.
				const sinceKill = loop.answers.filter((answer) => answer.answered > killed);
				// eslint-disable-next-line no-console
				console.info(
					`service-kill ${service} (one of two): dropped by the gateway ${droppedAt - killedAt} ms after the kill; ${sinceKill.length} requests from the kill to the end, ` +
						`slowest ${Math.max(...sinceKill.map((answer) => answer.ms))} ms; restarted node serving ${servingAt - restartAt} ms after the restart began`,
				);
				expect(loop.answers.filter((answer) => !served(answer)).map(describeAnswer)).toEqual([]);
				expect(sinceKill.length).toBeGreaterThan(20);
			} finally {
				await loop.stop();
			}
		},
		90000,
	);
});
