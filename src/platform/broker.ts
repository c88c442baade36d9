/** A registry broker: moleculer.config.ts with the registry's middlewares, keyed by its cluster key. */
import { ServiceBroker, type BrokerOptions } from "moleculer";
import { checkCredentials } from "./connections";
import { brokerOptions } from "../../moleculer.config";
import { channelsMiddleware } from "./channels";
import { brokerKeys, lazyClusterKeys, type ClusterKeys } from "./cluster-key";
import { permissionsMiddleware } from "./permissions";
import { requestMetricsMiddleware } from "../metrics/request-metrics";
import { sealedPacketsMiddleware } from "./sealed-packets";

/**
 * Moleculer's internal middlewares in its order, with the role check right outside Cacher (so outside
 * Validator too): a refused caller gets neither a cached answer nor a validation error. Its `Metrics`
 * is the registry's (request-metrics.ts): the same metrics at a fraction of the cost per call.
 */
function internalMiddlewares(keys: () => ClusterKeys): NonNullable<BrokerOptions["middlewares"]> {
	const names = ServiceBroker.INTERNAL_MIDDLEWARES;
	if (!names.includes("Cacher") || !names.includes("Metrics"))
		throw new Error(`moleculer's internal middlewares changed: ${names.join(", ")}`);
	return names.flatMap((name) =>
		name === "Cacher"
			? [name, permissionsMiddleware(keys) as never]
			: name === "Metrics"
				? [requestMetricsMiddleware() as never]
				: [name],
	);
}

export interface BrokerBuildOptions {
	env?: NodeJS.ProcessEnv;
	overrides?: Partial<BrokerOptions>;
}

/** The environment each broker was built from: its stores open where it says (DATA_DIR, MONGO_URI). */
const brokerEnvironments = new WeakMap<ServiceBroker, NodeJS.ProcessEnv>();

/** The environment a broker was built from (`options.env`), or the process's. */
export function brokerEnv(broker: ServiceBroker): NodeJS.ProcessEnv {
	return brokerEnvironments.get(broker) ?? process.env;
}

/** A broker with no services yet. */
export function createBroker(options: BrokerBuildOptions = {}): ServiceBroker {
	const source = options.env ?? process.env;
	const base = brokerOptions(source);
	const overrides = options.overrides ?? {};
	// Derived once, when first used: after the start's checks, which say why a key cannot be used.
	const keys = lazyClusterKeys(source);
	// The start's checks (connections.ts) run before anything connects.
	const checks = { name: "Credentials", starting: () => checkCredentials(source) };
	const registry = [checks as never, channelsMiddleware(source, keys) as never, ...(base.middlewares ?? [])];
	const own = [
		...(overrides.middlewares ?? registry),
		// Every packet sealed, whatever the overrides; after the start's checks, whose `starting` comes first.
		sealedPacketsMiddleware(keys) as never,
	];
	// Internal middlewares as moleculer adds them (after the broker's own), unless an override says otherwise.
	const internal = overrides.internalMiddlewares === undefined ? internalMiddlewares(keys) : [];
	const broker = new ServiceBroker({
		...base,
		...overrides,
		middlewares: [...own, ...internal],
		internalMiddlewares: overrides.internalMiddlewares ?? false,
	});
	brokerEnvironments.set(broker, source);
	brokerKeys.set(broker, keys);
	return broker;
}

/** Is some node (this one included) offering the action now? */
export function isActionAvailable(broker: ServiceBroker, action: string): boolean {
	const registry = broker.registry as unknown as {
		getActionEndpoints(name: string): { hasAvailable(): boolean } | undefined;
	};
	return registry.getActionEndpoints(action)?.hasAvailable() === true;
}

/** Broker metadata of an operator tool (the CLI): the services it starts answer its calls and start no background work. */
export const OPERATOR_TOOL = "operatorTool";

export function isOperatorTool(broker: ServiceBroker): boolean {
	return (broker.metadata as Record<string, unknown> | undefined)?.[OPERATOR_TOOL] === true;
}
