/**
 * `npm start`: the registry in this process. With nothing configured: the gateway and
 * every service, in-process transporter, embedded store under ./data, in-memory cache.
 * TRANSPORTER / CACHER / MONGO_URI / SERVICES select the distributed mode (docs/operations.md).
 */
import path from "node:path";
import { SHUTDOWN_TIMEOUT_MS } from "./src/config/runtime";
import { createRegistryBroker } from "./services";
import { markStartup } from "./src/platform/health";
import { startOperationalServer } from "./src/platform/operational-server";
import { bootstrapRegistry } from "./src/exchange/bootstrap";
import { env, envNumber, selectedServices } from "./src/config/settings";
import { redact } from "./src/platform/connections";

const DEMO_SEED = path.join(__dirname, "..", "seed", "demo.json");

async function main(): Promise<void> {
	const services = selectedServices();
	const broker = createRegistryBroker({ services, node: true, overrides: { skipProcessEventRegistration: true } });
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
			const api = broker.getLocalService("api") as unknown as
				{ drain?: (timeoutMs: number) => Promise<void> } | undefined;
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

	// Addresses only, credentials masked (src/platform/connections.ts redact).
	const mode = env("TRANSPORTER") ? `distributed (transporter ${redact(env("TRANSPORTER"))})` : "one process";
	broker.logger.info(
		`participant registry: mode=${mode}; services=${services.join(",")}; store=${env("MONGO_URI") ? "mongodb" : `sqlite in ${env("DATA_DIR")}`}; cache=${env("CACHER") ? `redis (${redact(env("CACHER"))})` : "memory"}; namespace=${env("NAMESPACE") || "(none)"}`,
	);
	markStartup(true);
	await broker.start();
	// Health and metrics on a port of their own when one is set; else on PORT, by the gateway or, without one, here.
	const operationsPort = env("OPERATIONS_PORT");
	if (operationsPort) operational = await startOperationalServer(broker, Number(operationsPort));
	else if (!broker.getLocalService("api")) operational = await startOperationalServer(broker, envNumber("PORT"));

	// REGISTRY_SEED, or with `npm start` the demo data into an empty registry: once for the registry (src/exchange/bootstrap.ts).
	const seedFile = env("REGISTRY_SEED") || undefined;
	const demoFile =
		process.argv.includes("--demo-when-empty") && process.env.REGISTRY_SEED === undefined ? DEMO_SEED : undefined;
	const result = await bootstrapRegistry(broker, { seedFile, demoFile });
	if (result) broker.logger.info(`${seedFile ?? demoFile} imported:`, result);
	markStartup(false);
}

main().catch((error) => {
	// eslint-disable-next-line no-console
	console.error("registry failed to start:", redact(error instanceof Error ? error.message : String(error)));
	process.exit(1);
});
