/**
 * Builds the registry's broker: the configuration of moleculer.config.ts plus the services
 * this process runs (SERVICES). Used by server.ts, the CLI, the tests and the benchmarks, so
 * that every one of them starts the registry the same way.
 */
import path from "node:path";
import { ServiceBroker, type BrokerOptions, type ServiceSchema } from "moleculer";
import { brokerOptions } from "../moleculer.config";
import { selectedServices } from "./settings";

/** Service name → module under services/ (one file per service). */
export const SERVICE_MODULES: Record<string, string> = {
	api: "api.service",
	catalog: "catalog.service",
	participants: "participants.service",
	accessPoints: "access-points.service",
	lookup: "lookup.service",
	accounts: "accounts.service",
	audit: "audit.service",
};

export function loadServiceSchema(name: string): ServiceSchema {
	const file = SERVICE_MODULES[name];
	if (!file) throw new Error(`unknown service ${name}`);
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const loaded = require(path.join(__dirname, "..", "services", file)) as { default?: ServiceSchema };
	return (loaded.default ?? loaded) as ServiceSchema;
}

/** Middlewares every registry broker uses (the durable channels for participant changes). */
function registryMiddlewares(source: NodeJS.ProcessEnv): NonNullable<BrokerOptions["middlewares"]> {
	try {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const channels = require("./channels") as { channelsMiddleware?: (env: NodeJS.ProcessEnv) => unknown };
		return channels.channelsMiddleware ? [channels.channelsMiddleware(source) as never] : [];
	} catch (error) {
		if ((error as { code?: string }).code === "MODULE_NOT_FOUND") return [];
		throw error;
	}
}

export interface RegistryBrokerOptions {
	env?: NodeJS.ProcessEnv;
	/** Defaults to SERVICES from the environment (all services). */
	services?: string[];
	overrides?: Partial<BrokerOptions>;
}

export function createRegistryBroker(options: RegistryBrokerOptions = {}): ServiceBroker {
	const source = options.env ?? process.env;
	const base = brokerOptions(source);
	const broker = new ServiceBroker({
		...base,
		middlewares: [...registryMiddlewares(source), ...(base.middlewares ?? [])],
		...options.overrides,
	});
	for (const name of options.services ?? selectedServices(source)) broker.createService(loadServiceSchema(name));
	return broker;
}
