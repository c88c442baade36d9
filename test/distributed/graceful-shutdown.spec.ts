/**
 * Issue 4, "graceful shutdown on SIGTERM: stop taking requests, finish the ones in flight,
 * leave the cluster, close connections". server.ts drains the gateway first (the API stops
 * listening, answers what it took, closes each connection after its answer), then stops the
 * broker (Moleculer's request tracking, services' `stopped`, transporter, cacher).
 */
import http from "node:http";
import { SHUTDOWN_TIMEOUT_MS } from "../../src/config/runtime";
import { ONE_PROCESS_PER_SERVICE, type Cluster } from "../support/cluster";
import { connectionRefused } from "../support/raw-http";
import { demoAuth, REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { ADD, CONTACT, FREE_PROCESSES, metricOf, pollUntil, send, startSeededCluster } from "./support";

let cluster: Cluster;

beforeAll(async () => {
	cluster = await startSeededCluster({
		topology: ONE_PROCESS_PER_SERVICE,
		shareDataWith: { participants2: "participants" },
	});
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => cluster?.stop());

interface Outcome {
	index: number;
	/** When the request's last byte was handed to the socket (undefined: never). */
	flushedAt?: number;
	status?: number;
	answeredAt?: number;
	body?: string;
	complete?: boolean;
	error?: string;
}

/** One request on the agent's connections, recording when it was fully sent and whether its answer came whole. */
function request(
	agent: http.Agent,
	port: number,
	index: number,
	options: { method: string; path: string; headers: Record<string, string>; body?: string },
): { outcome: Outcome; done: Promise<Outcome> } {
	const outcome: Outcome = { index };
	const done = new Promise<Outcome>((resolve) => {
		const req = http.request(
			{ host: "127.0.0.1", port, agent, method: options.method, path: options.path, headers: options.headers },
			(res) => {
				const chunks: Buffer[] = [];
				res.on("data", (chunk: Buffer) => chunks.push(chunk));
				res.on("end", () => {
					outcome.status = res.statusCode;
					outcome.answeredAt = Date.now();
					outcome.body = Buffer.concat(chunks).toString("utf8");
					const length = Number(res.headers["content-length"] ?? NaN);
					outcome.complete =
						res.complete && (Number.isNaN(length) || length === Buffer.byteLength(outcome.body));
					resolve(outcome);
				});
				res.on("error", (error: NodeJS.ErrnoException) => {
					outcome.error = error.code ?? error.message;
					resolve(outcome);
				});
			},
		);
		req.on("finish", () => (outcome.flushedAt = Date.now()));
		req.on("error", (error: NodeJS.ErrnoException) => {
			outcome.error = error.code ?? error.message;
			resolve(outcome);
		});
		req.end(options.body);
	});
	return { outcome, done };
}

test("SIGTERM to the gateway while participant adds and finds are in flight: every request sent before the signal gets a complete answer, new connections are refused, and the process exits 0 within the shutdown timeout", async () => {
	const gateway = cluster.processes.get("gateway");
	if (!gateway) throw new Error("no gateway process");
	const sp1 = demoAuth("SERVICE_PROVIDER", 0);
	// Credentials are verified once and then cached by the gateway: the burst is about the services.
	expect(
		(await send(`${cluster.url}/rest/api/participants?size=1`, { headers: { Authorization: sp1 } })).status,
	).toBe(200);

	const BURST = 80;
	const agent = new http.Agent({ keepAlive: true, maxSockets: BURST });
	const requests = Array.from({ length: BURST }, (_, index) =>
		index % 2 === 0
			? request(agent, gateway.port, index, {
					method: "POST",
					path: "/rest/api/participants",
					headers: { Authorization: sp1, Accept: ADD, "Content-Type": ADD },
					body: JSON.stringify({
						icd: "0088",
						organizationIdentifier: `shutdown-${cluster.namespace}-${index}`,
						processes: [{ identifier: FREE_PROCESSES[index % FREE_PROCESSES.length] }],
						contact: CONTACT,
					}),
				})
			: request(agent, gateway.port, index, {
					method: "GET",
					path: "/rest/api/participants?size=100&processes=true&sort=name",
					headers: { Authorization: sp1, Accept: "application/vnd.registry.participants.find.v1+json" },
				}),
	);
	// Every request is on the wire and the gateway is answering them: now the signal.
	await pollUntil(
		"the burst to be sent and the first answer back",
		30000,
		async () =>
			requests.every(({ outcome }) => outcome.flushedAt !== undefined) &&
			requests.some(({ outcome }) => outcome.status !== undefined || outcome.error !== undefined)
				? true
				: undefined,
		5,
	);
	const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
		gateway.child.once("exit", (code) => resolve({ code, at: Date.now() })),
	);
	const signalledAt = Date.now();
	const answeredBefore = requests.filter(({ outcome }) => outcome.status !== undefined).length;
	gateway.child.kill("SIGTERM");

	// The gateway stops listening at once, while it still finishes what it took.
	// (Probing every 100 ms: each probe that is still accepted keeps the gateway accepting for a moment.)
	const refusedAt = await pollUntil(
		"new connections to be refused",
		10000,
		async () => ((await connectionRefused(gateway.port)) ? Date.now() : undefined),
		100,
	);
	const stillRunningWhenRefused = gateway.child.exitCode === null && gateway.child.signalCode === null;
	const outcomes = await Promise.all(requests.map(({ done }) => done));
	const { code, at: exitedAt } = await exited;
	agent.destroy();

	const inFlight = outcomes.filter((outcome) => outcome.flushedAt !== undefined && outcome.flushedAt < signalledAt);
	// eslint-disable-next-line no-console
	console.info(
		`graceful-shutdown: ${BURST} requests, ${BURST - answeredBefore} still unanswered at SIGTERM; new connections refused ${refusedAt - signalledAt} ms after it ` +
			`(process still draining: ${stillRunningWhenRefused}); last answer ${Math.max(...outcomes.map((outcome) => outcome.answeredAt ?? 0)) - signalledAt} ms after it; exit ${code} after ${exitedAt - signalledAt} ms`,
	);
	expect(inFlight).toHaveLength(BURST);
	const failed = outcomes
		.filter((outcome) => outcome.error || !outcome.complete)
		.map((outcome) => `#${outcome.index}: ${outcome.error ?? `incomplete ${outcome.status}`}`);
	// What the gateway said while it stopped (warnings and errors: a cut at the deadline, a failed call) explains a failure.
	if (failed.length) failed.push(`gateway log: ${gateway.output.join("").slice(-3000)}`);
	expect(failed).toEqual([]);
	for (const outcome of outcomes) {
		expect({ index: outcome.index, status: outcome.status }).toEqual({
			index: outcome.index,
			status: outcome.index % 2 === 0 ? 201 : 200,
		});
		expect(() => JSON.parse(outcome.body as string)).not.toThrow();
	}
	expect(BURST - answeredBefore).toBeGreaterThan(0);
	expect(code).toBe(0);
	expect(exitedAt - signalledAt).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS);
	expect(await connectionRefused(gateway.port)).toBe(true);
}, 120000);

test("SIGTERM to one of two participants nodes while reads run: it leaves the cluster first, finishes what it took, and no read fails; it exits 0", async () => {
	const gateway = cluster.processes.get("gateway");
	if (gateway && (gateway.child.exitCode !== null || gateway.child.signalCode !== null))
		await cluster.restart("gateway");
	await cluster.add("participants2", "participants");
	const sp1 = demoAuth("SERVICE_PROVIDER", 0);
	const node = cluster.processes.get("participants2");
	if (!node) throw new Error("no participants2 process");
	const answers: { status: number; ms: number; error?: string }[] = [];
	let stopped = false;
	const worker = async () => {
		while (!stopped)
			answers.push(
				await send(`${cluster.url}/rest/api/participants?size=20&processes=true`, {
					headers: { Authorization: sp1, Accept: "application/vnd.registry.participants.find.v1+json" },
				}),
			);
	};
	const workers = [worker(), worker(), worker()];
	try {
		// Both nodes serve reads before the signal.
		await pollUntil("the second node to serve reads", 30000, async () =>
			(await metricOf(cluster, "participants2", "moleculer_request_total", { action: "participants.find" })) > 0
				? true
				: undefined,
		);
		const exited = new Promise<number | null>((resolve) => node.child.once("exit", resolve));
		const signalledAt = Date.now();
		node.child.kill("SIGTERM");
		const code = await exited;
		const exitedAt = Date.now();
		const atExit = answers.length;
		await pollUntil(
			"reads after the node left",
			30000,
			async () => (answers.length - atExit >= 30 ? true : undefined),
			20,
		);
		stopped = true;
		await Promise.all(workers);
		// eslint-disable-next-line no-console
		console.info(
			`graceful-shutdown (participants node): exit ${code} after ${exitedAt - signalledAt} ms; ${answers.length} reads, slowest ${Math.max(...answers.map((answer) => answer.ms))} ms`,
		);
		expect(code).toBe(0);
		expect(exitedAt - signalledAt).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS);
		expect(
			answers.filter((answer) => answer.status !== 200).map((answer) => `${answer.status} ${answer.error ?? ""}`),
		).toEqual([]);
	} finally {
		stopped = true;
		await Promise.all(workers);
	}
}, 120000);
