/**
 * `npm start`: the registry in this process. With nothing configured: the gateway and
 * every service, in-process transporter, embedded store under ./data, in-memory cache.
 * TRANSPORTER / CACHER / MONGO_URI / SERVICES select the distributed mode (docs/operations.md).
 */
import fs from "node:fs";
import path from "node:path";
import { SHUTDOWN_TIMEOUT_MS } from "./moleculer.config";
import { createRegistryBroker } from "./src/broker";
import { markStartup } from "./src/health";
import { startOperationalServer } from "./src/operational-server";
import { importSeed, parseSeed } from "./src/seed";
import { env, envNumber, selectedServices } from "./src/settings";

const DEMO_SEED = path.join(__dirname, "..", "seed", "demo.json");

/**
 * `npm start` passes --demo-when-empty: a registry that holds nothing yet (no service
 * provider, no process) and was given no REGISTRY_SEED loads seed/demo.json, so that a new
 * user has reference data and demo accounts at once. `node dist/server.js` (the container
 * image) never does.
 */
async function demoSeedWhenEmpty(broker: import("moleculer").ServiceBroker): Promise<string> {
	if (!process.argv.includes("--demo-when-empty") || process.env.REGISTRY_SEED !== undefined) return "";
	await broker.waitForServices(["accounts", "catalog"], 120000);
	const [providers, processes] = await Promise.all([
		broker.call<unknown[]>("accounts.listServiceProviders"),
		broker.call<unknown[]>("catalog.allProcesses"),
	]);
	if (providers.length > 0 || processes.length > 0) return "";
	broker.logger.info("empty registry: loading the demo data of seed/demo.json (set REGISTRY_SEED, or run `npm run seed -- <file>`, to load your own)");
	return DEMO_SEED;
}

async function main(): Promise<void> {
	const services = selectedServices();
	const broker = createRegistryBroker({ services, overrides: { skipProcessEventRegistration: true } });
	let operational: Awaited<ReturnType<typeof startOperationalServer>> | null = null;
	// SIGTERM: a gateway first stops listening and answers every request it took (the API's
	// drain), then the broker leaves the cluster, waits for the calls it serves (tracking),
	// stops the services and closes its connections. A shutdown that cannot finish in time exits
	// 1. The signals are this file's alone (the broker registers no handlers of its own, which
	// would stop it at once, in parallel with the drain), from before the broker starts.
	let stopping = false;
	const shutdown = async (signal: string) => {
		if (stopping) return;
		stopping = true;
		broker.logger.info(`${signal} received: finishing in-flight requests and leaving the cluster`);
		const deadline = setTimeout(() => {
			broker.logger.error(`shutdown did not finish within ${(3 * SHUTDOWN_TIMEOUT_MS) / 1000} s; exiting`);
			process.exit(1);
		}, 3 * SHUTDOWN_TIMEOUT_MS);
		deadline.unref();
		try {
			const api = broker.getLocalService("api") as unknown as { drain?: (timeoutMs: number) => Promise<void> } | undefined;
			if (api?.drain) await api.drain(SHUTDOWN_TIMEOUT_MS);
			operational?.close();
			await broker.stop();
			process.exit(0);
		} catch (error) {
			broker.logger.error("shutdown failed", error);
			process.exit(1);
		}
	};
	process.on("SIGTERM", () => void shutdown("SIGTERM"));
	process.on("SIGINT", () => void shutdown("SIGINT"));

	const mode = env("TRANSPORTER") ? `distributed (transporter ${env("TRANSPORTER").replace(/\/\/[^@/]*@/, "//***@")})` : "one process";
	broker.logger.info(
		`participant registry: mode=${mode}; services=${services.join(",")}; store=${env("MONGO_URI") ? "mongodb" : `sqlite in ${env("DATA_DIR")}`}; cache=${env("CACHER") ? "redis" : "memory"}; namespace=${env("NAMESPACE") || "(none)"}`,
	);
	markStartup(true);
	await broker.start();
	// A process without the gateway still answers health probes and metrics on PORT.
	if (!services.includes("api")) operational = await startOperationalServer(broker, envNumber("PORT"));

	const seedFile = env("REGISTRY_SEED") || (await demoSeedWhenEmpty(broker));
	if (seedFile) {
		if (!fs.existsSync(seedFile)) throw new Error(`REGISTRY_SEED file not found: ${seedFile}`);
		const parsed = parseSeed(fs.readFileSync(seedFile, "utf8"));
		if (parsed.reasons.length) throw new Error(`REGISTRY_SEED ${seedFile} refused:\n${parsed.reasons.map((reason) => `  ${JSON.stringify(reason)}`).join("\n")}`);
		// In distributed mode the owning services may live in other processes: import through
		// their actions once they are reachable, so a seed given to one process fills the cluster.
		await broker.waitForServices(["accounts", "accessPoints", "catalog", "participants"], 120000);
		const result = await importSeed(broker, parsed.seed);
		broker.logger.info(`seed ${seedFile} imported:`, result);
	}
	markStartup(false);
}

main().catch((error) => {
	// eslint-disable-next-line no-console
	console.error("registry failed to start:", error instanceof Error ? error.message : error);
	process.exit(1);
});
