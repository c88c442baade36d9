/**
 * Starts the whole registry in this process, as `npm start` does, for HTTP tests: every
 * service and the real gateway on an ephemeral port, an in-memory store, seeded with
 * seed/demo.json unless told otherwise.
 */
import fs from "node:fs";
import path from "node:path";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";

export const DEMO_SEED_FILE = path.join(__dirname, "..", "..", "seed", "demo.json");

export interface RunningRegistry {
	url: string;
	/** On the distributed project: the lookup node's address (SERVICES=lookup, decisions §12); absent in one process. */
	lookupUrl?: string;
	broker: ServiceBroker;
	stop(): Promise<void>;
}

export interface StartOptions {
	/** A seed object, or false for an empty registry. Default: seed/demo.json. */
	seed?: object | false;
	/** Extra environment for this registry (DATA_DIR defaults to ":memory:"). */
	env?: Record<string, string>;
	services?: string[];
}

export function demoSeed(): Record<string, unknown> {
	return JSON.parse(fs.readFileSync(DEMO_SEED_FILE, "utf8"));
}

/**
 * Which topology the HTTP suites run against: the one-process default, or (jest project
 * "distributed", REGISTRY_TOPOLOGY=distributed) every service in its own OS process over
 * the real NATS and Redis. The same test files run against both.
 */
export const TOPOLOGY = process.env.REGISTRY_TOPOLOGY === "distributed" ? "distributed" : "one-process";

/**
 * The timeout of a hook that starts a registry. The start waits on readiness (every process's
 * /health/ready, then the services as the test's node sees them), never on the clock: this bound
 * only ends a start that hangs, far above a start on a loaded two-core machine.
 */
export const REGISTRY_START_TIMEOUT_MS = 10 * 60 * 1000;

async function importSeedThrough(broker: ServiceBroker, seed: object): Promise<void> {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const { importSeed } = require("../../src/exchange/seed") as {
		importSeed: (broker: ServiceBroker, seed: object) => Promise<unknown>;
	};
	await importSeed(broker, seed);
}

async function startDistributed(options: StartOptions): Promise<RunningRegistry> {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const { startCluster, PROCESS_READY_TIMEOUT_MS } = require("./cluster") as typeof import("./cluster");
	const cluster = await startCluster({ env: options.env });
	const seed = options.seed === undefined ? demoSeed() : options.seed;
	try {
		await cluster.broker.waitForServices(
			["accounts", "catalog", "accessPoints", "participants", "lookup", "audit", "network"],
			PROCESS_READY_TIMEOUT_MS,
		);
		if (seed) await importSeedThrough(cluster.broker, seed);
	} catch (error) {
		await cluster.stop();
		throw error;
	}
	const lookupPort = cluster.processes.get("lookup")?.port;
	return {
		url: cluster.url,
		...(lookupPort ? { lookupUrl: `http://127.0.0.1:${lookupPort}` } : {}),
		broker: cluster.broker,
		stop: () => cluster.stop(),
	};
}

export async function startRegistry(options: StartOptions = {}): Promise<RunningRegistry> {
	if (TOPOLOGY === "distributed" && !options.services) return startDistributed(options);
	const previous = { ...process.env };
	Object.assign(process.env, { DATA_DIR: ":memory:", PORT: "0", LOG_LEVEL: "warn" }, options.env ?? {});
	const broker = createRegistryBroker({ services: options.services, overrides: { logger: false } });
	await broker.start();
	const seed = options.seed === undefined ? demoSeed() : options.seed;
	if (seed) await importSeedThrough(broker, seed);
	const api = broker.getLocalService("api") as unknown as { settings: { port: number } } | undefined;
	const url = api ? `http://127.0.0.1:${api.settings.port}` : "";
	return {
		url,
		broker,
		async stop() {
			await broker.stop();
			for (const key of Object.keys(process.env)) if (!(key in previous)) delete process.env[key];
			Object.assign(process.env, previous);
		},
	};
}

/** Basic credentials of the demo accounts (docs/demo-data.md). */
export function basic(username: string, password: string): string {
	return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}

interface SeedAccount {
	username: string;
	password?: string;
	role: string;
	serviceProvider?: string;
}

/** Authorization header of the first demo account with that role (the n-th with `index`). */
export function demoAuth(role: string, index = 0): string {
	const accounts = (demoSeed().accounts as SeedAccount[]).filter(
		(account) => account.role === role && account.password,
	);
	const account = accounts[index];
	if (!account) throw new Error(`seed/demo.json has no account #${index} with role ${role}`);
	return basic(account.username, account.password as string);
}

/** The demo account itself (username, password, serviceProvider). */
export function demoAccount(role: string, index = 0): SeedAccount {
	const accounts = (demoSeed().accounts as SeedAccount[]).filter(
		(account) => account.role === role && account.password,
	);
	if (!accounts[index]) throw new Error(`seed/demo.json has no account #${index} with role ${role}`);
	return accounts[index];
}
