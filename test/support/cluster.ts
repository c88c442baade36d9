/**
 * The registry in distributed mode for tests: the gateway and every service as separate OS
 * processes (`node dist/server.js` with SERVICES=<one>), over the real NATS and Redis of this
 * machine, each with its own embedded store. Every run has its own NAMESPACE, so its
 * JetStream stream and Redis keys are its own (stop() removes them), and its own CLUSTER_KEY.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import { freePort } from "./local-network";
import { removeNamespace } from "./namespace-cleanup";
import { NATS_URL, REDIS_URL } from "./servers";

const ROOT = path.join(__dirname, "..", "..");

export interface ClusterProcess {
	name: string;
	services: string;
	port: number;
	child: ChildProcess;
	output: string[];
	/** Exited and its output read to the end (the child's `close`). */
	closed: boolean;
	/** Exited because its port was taken, and launched again on another (`launch`). */
	relaunched: boolean;
}

/** How often a process whose port was taken is launched again on another before its start fails. */
const PORT_ATTEMPTS = 5;

export interface Cluster {
	url: string;
	namespace: string;
	/** A service-less node on the same NATS namespace: broker.call reaches the cluster's services. */
	broker: ServiceBroker;
	processes: Map<string, ClusterProcess>;
	/** Environment every process of this cluster shares. */
	env: Record<string, string>;
	kill(name: string, signal?: NodeJS.Signals): Promise<void>;
	restart(name: string): Promise<void>;
	/** Starts one more process (e.g. a second node of a service) and waits until it is ready (unless `untilReady` is false). */
	add(name: string, services: string, untilReady?: boolean): Promise<void>;
	stop(): Promise<void>;
}

export interface ClusterOptions {
	/** Process name → SERVICES. Default: one process per service. */
	topology?: Record<string, string>;
	env?: Record<string, string>;
	/** Extra environment per process name. */
	processEnv?: Record<string, Record<string, string>>;
	/** Command-line arguments of dist/server.js (e.g. `--demo-when-empty`, as `npm start` passes). */
	args?: string[];
	/**
	 * Process name → the process whose DATA_DIR it uses: two nodes of one service then share its
	 * SQLite files (WAL, one machine), as replicas share MongoDB in production.
	 */
	shareDataWith?: Record<string, string>;
}

export const ONE_PROCESS_PER_SERVICE: Record<string, string> = {
	gateway: "api",
	catalog: "catalog",
	participants: "participants",
	accessPoints: "accessPoints",
	lookup: "lookup",
	accounts: "accounts",
	audit: "audit",
	network: "network",
};

/** How long one process may take to answer /health/ready: it ends a start that hangs, not a slow one. */
export const PROCESS_READY_TIMEOUT_MS = 5 * 60 * 1000;

/** A process that exited while being waited for: waiting longer cannot help. */
class ProcessExited extends Error {}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		const done = await check().catch((error: unknown) => {
			if (error instanceof ProcessExited) throw error;
			return false;
		});
		if (done) return;
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	throw new Error(`timed out waiting for ${what}`);
}

async function ready(port: number): Promise<boolean> {
	const response = await fetch(`http://127.0.0.1:${port}/health/ready`);
	return response.status === 200;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
	const namespace = `t${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
	const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), "registry-cluster-"));
	const topology = options.topology ?? ONE_PROCESS_PER_SERVICE;
	const shared: Record<string, string> = {
		TRANSPORTER: NATS_URL,
		CACHER: REDIS_URL,
		NAMESPACE: namespace,
		LOG_LEVEL: "warn",
		REQUEST_TIMEOUT: "5000",
		// Every cluster its own key (src/platform/cluster-key.ts), as an operator makes one.
		CLUSTER_KEY: randomBytes(48).toString("base64"),
		...options.env,
	};
	const processes = new Map<string, ClusterProcess>();
	let stopping = false;

	/**
	 * Starts one process. A port picked by freePort() can be taken by someone else (another
	 * suite's process, an outgoing connection's ephemeral port) before the child binds it: such a
	 * child exits with EADDRINUSE and is launched again on a fresh port at once, not when its
	 * turn to be waited for comes (the processes started before it wait for it meanwhile).
	 */
	const launch = (name: string, services: string, port: number, attempt = 1): ClusterProcess => {
		const output: string[] = [];
		const child = spawn(process.execPath, [path.join(ROOT, "dist", "server.js"), ...(options.args ?? [])], {
			cwd: ROOT,
			env: {
				...process.env,
				...shared,
				...options.processEnv?.[name],
				SERVICES: services,
				PORT: String(port),
				DATA_DIR: path.join(dataRoot, options.shareDataWith?.[name] ?? name),
				NODE_ID: `${name}-${namespace}`,
			},
			stdio: ["ignore", "pipe", "pipe"],
		});
		const keep = (chunk: Buffer) => {
			output.push(chunk.toString());
			if (output.length > 1000) output.shift();
		};
		child.stdout?.on("data", keep);
		child.stderr?.on("data", keep);
		const entry: ClusterProcess = { name, services, port, child, output, closed: false, relaunched: false };
		// `close`, not `exit`: only then has the output (the EADDRINUSE) been read whole.
		child.once("close", () => {
			entry.closed = true;
			if (stopping || processes.get(name) !== entry || attempt >= PORT_ATTEMPTS) return;
			if (!output.join("").includes("EADDRINUSE")) return;
			entry.relaunched = true;
			freePort().then(
				(fresh) => {
					if (!stopping) launch(name, services, fresh, attempt + 1);
				},
				() => {
					entry.relaunched = false; // no port to move to: the start fails as it is
				},
			);
		});
		processes.set(name, entry);
		return entry;
	};

	for (const [name, services] of Object.entries(topology)) launch(name, services, await freePort());
	const broker = createRegistryBroker({
		services: [],
		env: { ...process.env, ...shared, SERVICES: "" },
		overrides: { logger: false, nodeID: `test-client-${namespace}` },
	});

	const stopProcess = async (entry: ClusterProcess, signal: NodeJS.Signals) => {
		if (entry.child.exitCode !== null || entry.child.signalCode !== null) return;
		const exited = new Promise<void>((resolve) => entry.child.once("exit", () => resolve()));
		entry.child.kill(signal);
		const timer = setTimeout(() => entry.child.kill("SIGKILL"), 15000);
		await exited;
		clearTimeout(timer);
	};

	/** Waits until a process (or the one launched again in its place, `launch`) answers /health/ready. */
	const untilReady = async (name: string, timeoutMs: number): Promise<ClusterProcess> => {
		let entry = processes.get(name) as ClusterProcess;
		const firstPort = entry.port;
		await waitFor(
			async () => {
				entry = processes.get(name) as ClusterProcess;
				// Exited but not yet closed: not ready, and its output is not whole yet.
				if (entry.closed) {
					if (entry.relaunched) return false;
					throw new ProcessExited(`${name} exited:\n${entry.output.join("")}`);
				}
				return ready(entry.port);
			},
			timeoutMs,
			`${name} to be ready`,
		);
		// A gateway that had to move keeps being the cluster's address.
		if (entry.port !== firstPort && cluster.url === `http://127.0.0.1:${firstPort}`)
			cluster.url = `http://127.0.0.1:${entry.port}`;
		return entry;
	};

	const cluster: Cluster = {
		url: "",
		namespace,
		broker,
		processes,
		env: shared,
		async kill(name, signal = "SIGKILL") {
			const entry = processes.get(name);
			if (entry) await stopProcess(entry, signal);
		},
		async restart(name) {
			const entry = processes.get(name);
			if (!entry) throw new Error(`no process ${name}`);
			await stopProcess(entry, "SIGTERM");
			launch(name, entry.services, entry.port);
			await untilReady(name, 30000);
		},
		async add(name, services, waitUntilReady = true) {
			if (processes.has(name)) throw new Error(`process ${name} exists already`);
			launch(name, services, await freePort());
			if (waitUntilReady) await untilReady(name, 60000);
		},
		async stop() {
			stopping = true;
			await Promise.all([...processes.values()].map((entry) => stopProcess(entry, "SIGTERM")));
			await broker.stop().catch(() => undefined);
			await removeNamespace(
				namespace,
				{ natsUrl: shared.TRANSPORTER, redisUrl: shared.CACHER },
				{ ...process.env, ...shared },
			);
			fs.rmSync(dataRoot, { recursive: true, force: true });
		},
	};

	try {
		await broker.start();
		for (const name of [...processes.keys()]) await untilReady(name, PROCESS_READY_TIMEOUT_MS);
	} catch (error) {
		const logs = [...processes.values()]
			.map((entry) => `--- ${entry.name}\n${entry.output.join("").slice(-3000)}`)
			.join("\n");
		await cluster.stop();
		throw new Error(`${(error as Error).message}\n${logs}`);
	}
	const gateway = [...processes.values()].find((entry) => entry.services.split(",").includes("api"));
	cluster.url = gateway ? `http://127.0.0.1:${gateway.port}` : "";
	return cluster;
}
