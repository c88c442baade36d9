/**
 * Processes the benchmark starts and measures: the registry (`node dist/server.js`, one
 * process or the k8s/ topology over the local NATS and Redis) and the bare baseline server.
 * Every process started here is stopped here (by its own pid).
 */
import { execFileSync, fork, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { freePort } from "../../test/support/local-network";
import { removeNamespace } from "../../test/support/namespace-cleanup";

export const ROOT = path.join(__dirname, "..", "..", "..");
const SERVER = path.join(ROOT, "dist", "server.js");

export const NATS_URL = process.env.BENCH_NATS_URL ?? "nats://127.0.0.1:4222";
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a command is on the PATH (the bench's outside tools: wrk, taskset). */
export function installed(command: string): boolean {
	try {
		execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
		return true;
	} catch {
		return false;
	}
}

/** Resident set size of a process, from /proc (bytes). */
export function rssOf(pid: number): number {
	const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
	const match = /VmRSS:\s+(\d+)\s+kB/.exec(status);
	if (!match) throw new Error(`no VmRSS for ${pid}`);
	return Number(match[1]) * 1024;
}

export interface RegistryProcess {
	name: string;
	services: string;
	port: number;
	url: string;
	child: ChildProcess;
	output: string[];
	/** Milliseconds from spawn to the first 200 from /health/ready. */
	readyMs: number;
	stop(): Promise<void>;
}

async function isReady(port: number): Promise<boolean> {
	try {
		const response = await fetch(`http://127.0.0.1:${port}/health/ready`);
		await response.arrayBuffer();
		return response.status === 200;
	} catch {
		return false;
	}
}

/** Starts `node dist/server.js` with the given environment and waits for /health/ready; `started` runs once it is spawned (a CPU limit). */
export async function startRegistry(
	name: string,
	env: Record<string, string>,
	options: { timeoutMs?: number; started?: (pid: number) => void } = {},
): Promise<RegistryProcess> {
	const port = env.PORT ? Number(env.PORT) : await freePort();
	// Health and metrics on a port of their own when k8s/'s ConfigMap says so (OPERATIONS_PORT): a free one here.
	const operationsPort = env.OPERATIONS_PORT ? await freePort() : port;
	const output: string[] = [];
	const started = performance.now();
	const child = spawn(process.execPath, [SERVER], {
		cwd: ROOT,
		env: {
			...process.env,
			...env,
			PORT: String(port),
			...(operationsPort !== port ? { OPERATIONS_PORT: String(operationsPort) } : {}),
		},
		stdio: ["ignore", "pipe", "pipe"],
	});
	const keep = (chunk: Buffer) => {
		output.push(chunk.toString());
		if (output.length > 300) output.shift();
	};
	child.stdout?.on("data", keep);
	child.stderr?.on("data", keep);
	if (child.pid !== undefined) options.started?.(child.pid);
	const stop = async () => {
		if (child.exitCode !== null || child.signalCode !== null) return;
		const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
		child.kill("SIGTERM");
		const timer = setTimeout(() => child.kill("SIGKILL"), 20000);
		await exited;
		clearTimeout(timer);
	};
	const deadline = Date.now() + (options.timeoutMs ?? 120000);
	for (;;) {
		if (child.exitCode !== null)
			throw new Error(`${name} exited with ${child.exitCode}:\n${output.join("").slice(-4000)}`);
		if (await isReady(operationsPort)) break;
		if (Date.now() > deadline) {
			await stop();
			throw new Error(`${name} was not ready in time:\n${output.join("").slice(-4000)}`);
		}
		await sleep(10);
	}
	const readyMs = performance.now() - started;
	return {
		name,
		services: env.SERVICES ?? "all",
		port,
		url: `http://127.0.0.1:${port}`,
		child,
		output,
		readyMs,
		stop,
	};
}

export interface Cluster {
	namespace: string;
	/** What every process of it was started with: a process started later joins it with this. */
	env: Record<string, string>;
	processes: RegistryProcess[];
	gateway: RegistryProcess;
	stop(): Promise<void>;
}

/**
 * The distributed topology: one process per entry of `topology` (name → SERVICES), all on
 * the local NATS and Redis under a namespace of their own, each service on the given
 * DATA_DIR (every service opens only its own file there). stop() ends the processes and
 * removes the namespace's JetStream streams and Redis keys.
 */
export async function startCluster(
	topology: Record<string, string>,
	dataDir: string,
	extraEnv: Record<string, string> = {},
	spawned?: (name: string, pid: number) => void,
): Promise<Cluster> {
	const namespace = `bench${process.pid}x${Math.random().toString(36).slice(2, 7)}`;
	const shared = {
		TRANSPORTER: NATS_URL,
		CACHER: REDIS_URL,
		NAMESPACE: namespace,
		// Every cluster its own key (src/platform/cluster-key.ts): a process on NATS without one does not start.
		CLUSTER_KEY: randomBytes(48).toString("base64"),
		DATA_DIR: dataDir,
		...extraEnv,
	};
	const processes: RegistryProcess[] = [];
	const cleanup = async () => {
		await Promise.all(processes.map((entry) => entry.stop()));
		await removeNamespace(namespace, { natsUrl: NATS_URL, redisUrl: REDIS_URL });
	};
	try {
		// The gateway waits for accounts (readiness), the lookup for catalog: start the owners first.
		const order = Object.entries(topology).sort(
			([, a], [, b]) => Number(a.includes("api")) - Number(b.includes("api")),
		);
		const started = await Promise.all(
			order.map(([name, services]) =>
				startRegistry(
					name,
					{ ...shared, SERVICES: services, NODE_ID: `${name}-${namespace}` },
					{ started: (pid) => spawned?.(name, pid) },
				),
			),
		);
		processes.push(...started);
	} catch (error) {
		await cleanup();
		throw error;
	}
	const gateway = processes.find((entry) => entry.services.split(",").includes("api"));
	if (!gateway) throw new Error("the topology has no gateway (api)");
	return { namespace, env: shared, processes, gateway, stop: cleanup };
}

export interface BaselineServer {
	url: string;
	child: ChildProcess;
	stop(): Promise<void>;
}

/** A baseline answering `answer` from memory (bench/baseline-server.ts): bare node:http, or a bare moleculer-web route. */
export function startBaseline(
	answer: { status: number; headers: [string, string][]; body: string },
	kind: "node:http" | "moleculer-web" = "node:http",
): Promise<BaselineServer> {
	return new Promise((resolve, reject) => {
		const child = fork(path.join(__dirname, "..", "baseline-server.js"), [kind], {
			stdio: ["ignore", "inherit", "inherit", "ipc"],
		});
		child.once("message", (message: { port?: number; error?: string }) => {
			if (!message.port) return reject(new Error(message.error ?? "baseline failed"));
			resolve({
				url: `http://127.0.0.1:${message.port}`,
				child,
				stop: () =>
					new Promise<void>((done) => {
						if (child.exitCode !== null) return done();
						child.once("exit", () => done());
						child.kill("SIGTERM");
					}),
			});
		});
		child.once("exit", (code) => reject(new Error(`the ${kind} baseline exited with ${code}`)));
		child.send(answer);
	});
}
