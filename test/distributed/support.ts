/**
 * Helpers of the distributed-mode fault tests (test/distributed/*.spec.ts): a seeded cluster
 * of OS processes (test/support/cluster.ts), participant changes through the gateway, the
 * lookup answer against the participants' truth, Prometheus metrics of one process, and
 * polling with a deadline (the only kind of waiting these tests do).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Redis from "ioredis";
import type { Cluster, ClusterOptions } from "../support/cluster";
import { PROCESS_READY_TIMEOUT_MS, startCluster } from "../support/cluster";
import { pollUntil } from "../support/poll";
import { demoAuth, demoSeed } from "../support/registry";
import { organizationKey } from "../../src/contract/identifiers";
import { importSeed } from "../../src/exchange/seed";

export const ADD = "application/vnd.registry.participants.add.v1+json";
export const UPDATE = "application/vnd.registry.participants.update.v1+json";
export const DELETE = "application/vnd.registry.participants.delete.v1+json";
export const LOOKUP = "application/vnd.registry.organizations.processes.v1+json";

/** Demo processes with no dependency, ICD rule or hidden flag: any subset is a valid registration. */
export const FREE_PROCESSES = ["01", "02", "03", "04", "05", "07", "08", "09"].map(
	(n) => `55555555-0000-4000-8000-0000000000${n}`,
);

export const CONTACT = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };

export const qid = (organization: string) => `iso6523-actorid-upis::0088:${organization}`;

/** A cluster seeded with seed/demo.json through the owning services. */
export async function startSeededCluster(options: ClusterOptions = {}): Promise<Cluster> {
	const cluster = await startCluster(options);
	try {
		await cluster.broker.waitForServices(
			["accounts", "catalog", "accessPoints", "participants", "lookup"],
			PROCESS_READY_TIMEOUT_MS,
		);
		// Seeding hashes the demo accounts' passwords: give it more than REQUEST_TIMEOUT on a busy machine.
		const requestTimeout = cluster.broker.options.requestTimeout;
		cluster.broker.options.requestTimeout = 60000;
		try {
			await importSeed(cluster.broker, demoSeed() as never);
		} finally {
			cluster.broker.options.requestTimeout = requestTimeout;
		}
	} catch (error) {
		await cluster.stop();
		throw error;
	}
	return cluster;
}

export { pollUntil };

export interface Answer {
	status: number;
	body: unknown;
	ms: number;
	/** Set when no HTTP answer came (connection refused or reset, client timeout). */
	error?: string;
}

/** One HTTP request that never throws: a network failure is an answer with `error`. */
export async function send(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<Answer> {
	const started = Date.now();
	try {
		const response = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs ?? 30000) });
		const text = await response.text();
		let body: unknown = text;
		try {
			body = text ? JSON.parse(text) : null;
		} catch {
			// not JSON: keep the text
		}
		return { status: response.status, body, ms: Date.now() - started };
	} catch (error) {
		const cause = (error as { cause?: { code?: string } }).cause;
		return {
			status: 0,
			body: null,
			ms: Date.now() - started,
			error: `${(error as Error).name}: ${cause?.code ?? (error as Error).message}`,
		};
	}
}

/** The participant changes a service provider makes through the gateway. */
export class Participants {
	constructor(
		private readonly cluster: Cluster,
		private readonly auth = demoAuth("SERVICE_PROVIDER", 0),
	) {}

	private path(organization: string): string {
		return `${this.cluster.url}/rest/api/participants/${encodeURIComponent(qid(organization))}`;
	}

	add(organization: string, processes: string[]): Promise<Answer> {
		return send(`${this.cluster.url}/rest/api/participants`, {
			method: "POST",
			headers: { Authorization: this.auth, Accept: ADD, "Content-Type": ADD },
			body: JSON.stringify({
				icd: "0088",
				organizationIdentifier: organization,
				processes: processes.map((identifier) => ({ identifier })),
				contact: CONTACT,
			}),
		});
	}

	update(organization: string, processes: string[]): Promise<Answer> {
		return send(this.path(organization), {
			method: "PUT",
			headers: { Authorization: this.auth, Accept: UPDATE, "Content-Type": UPDATE },
			body: JSON.stringify({ processes: processes.map((identifier) => ({ identifier })), contact: CONTACT }),
		});
	}

	remove(organization: string): Promise<Answer> {
		return send(this.path(organization), {
			method: "DELETE",
			headers: { Authorization: this.auth, Accept: DELETE },
		});
	}
}

/** What the participants service says an organization receives: the union of its participants' processes (null: no participant). */
export async function truthOf(cluster: Cluster, organization: string): Promise<string[] | null> {
	const sets = await cluster.broker.call<{ processes: string[] }[], { organizationKey: string }>(
		"participants.organizationProcessSets",
		{
			organizationKey: organizationKey("0088", organization),
		},
	);
	if (sets.length === 0) return null;
	return [...new Set(sets.flatMap((set) => set.processes))].sort();
}

/** The lookup's answer through the gateway, as an authenticated caller (hidden processes included): sorted ids, or null for 404. */
export async function lookupOf(
	cluster: Cluster,
	organization: string,
	auth = demoAuth("ADMIN"),
): Promise<string[] | null> {
	const answer = await send(
		`${cluster.url}/rest/api/organizations/${encodeURIComponent(qid(organization))}/processes`,
		{ headers: { Accept: LOOKUP, Authorization: auth } },
	);
	if (answer.status === 404) return null;
	if (answer.status !== 200)
		throw new Error(`lookup of ${organization} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
	return (answer.body as { identifier: string }[]).map((process) => process.identifier).sort();
}

/** Organizations whose lookup answer differs from the participants' truth (empty: all agree). */
export async function disagreements(cluster: Cluster, organizations: Iterable<string>): Promise<string[]> {
	const differing: string[] = [];
	for (const organization of organizations) {
		const [truth, lookup] = await Promise.all([truthOf(cluster, organization), lookupOf(cluster, organization)]);
		if (JSON.stringify(truth) !== JSON.stringify(lookup))
			differing.push(`${organization}: participants ${JSON.stringify(truth)}, lookup ${JSON.stringify(lookup)}`);
	}
	return differing;
}

/** Sum of a Prometheus metric's samples on one process's /metrics, filtered by labels. */
export async function metricOf(
	cluster: Cluster,
	processName: string,
	metric: string,
	labels: Record<string, string> = {},
): Promise<number> {
	const entry = cluster.processes.get(processName);
	if (!entry) throw new Error(`no process ${processName}`);
	const response = await fetch(`http://127.0.0.1:${entry.port}/metrics`, { signal: AbortSignal.timeout(5000) });
	const text = await response.text();
	let total = 0;
	for (const line of text.split("\n")) {
		if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
		if (!Object.entries(labels).every(([name, value]) => line.includes(`${name}="${value}"`))) continue;
		total += Number(line.slice(line.lastIndexOf(" ") + 1));
	}
	return total;
}

/** Exit code of a process once it has exited (null while it runs). */
export function exitCodeOf(cluster: Cluster, processName: string): number | null {
	return cluster.processes.get(processName)?.child.exitCode ?? null;
}

/** A private redis-server: no persistence of its own (SAVE is asked for explicitly when a test wants the data kept). */
/** SIGKILL a server a test started, and wait until it is gone. */
export async function killNow(child: ChildProcess | null): Promise<void> {
	if (!child || child.exitCode !== null || child.signalCode !== null) return;
	const exited = new Promise((resolve) => child.once("exit", resolve));
	child.kill("SIGKILL");
	await exited;
}

export class PrivateRedis {
	private child: ChildProcess | null = null;
	readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-redis-"));
	constructor(readonly port: number) {}

	get url(): string {
		return `redis://127.0.0.1:${this.port}`;
	}

	async start(): Promise<number> {
		const started = Date.now();
		this.child = spawn(
			"redis-server",
			["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.dir],
			{ stdio: "ignore" },
		);
		const child = this.child;
		await pollUntil(
			"the private redis-server to answer",
			10000,
			async () => {
				if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
				const client = this.client();
				try {
					await client.connect();
					return (await client.ping()) === "PONG" ? true : undefined;
				} finally {
					client.disconnect();
				}
			},
			50,
		);
		return Date.now() - started;
	}

	/** SIGKILL: the process is gone at once, like a crashed node. */
	kill(): Promise<void> {
		return killNow(this.child);
	}

	client(): Redis {
		return new Redis(this.url, {
			lazyConnect: true,
			maxRetriesPerRequest: 0,
			enableOfflineQueue: false,
			retryStrategy: () => null,
		});
	}

	/** Cache keys of a namespace (the counters of the gateway excluded). */
	async cacheKeys(namespace: string): Promise<string[]> {
		const client = this.client();
		try {
			await client.connect();
			const keys: string[] = [];
			let cursor = "0";
			do {
				const [next, batch] = await client.scan(cursor, "MATCH", `registry-${namespace}*`, "COUNT", 1000);
				cursor = next;
				keys.push(...batch.filter((key) => !key.startsWith(`registry-${namespace}-counters:`)));
			} while (cursor !== "0");
			return keys;
		} finally {
			client.disconnect();
		}
	}

	async command(...args: string[]): Promise<unknown> {
		const client = this.client();
		try {
			await client.connect();
			return await client.call(args[0], ...args.slice(1));
		} finally {
			client.disconnect();
		}
	}

	dispose(): void {
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}
