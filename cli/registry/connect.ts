/**
 * How an operator CLI command reaches the registry, as cli/seed.ts does:
 *   - TRANSPORTER set: the command joins that cluster (NAMESPACE) as a node without services
 *     and calls the running ones, so their caches, the lookup and the audit trail hear of
 *     every change;
 *   - otherwise it starts the services that own what it touches, here, on the configured
 *     store (DATA_DIR or MONGO_URI), and stops them when done. Run offline commands while a
 *     one-process registry on the same store is stopped: it would keep answers it cached.
 */
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import { env } from "../../src/config/settings";
import { OPERATOR_TOOL } from "../../src/platform/broker";
import { CliFailure, type CliIO } from "./io";

/** How long a command waits for the cluster (connect, and the services it needs). */
const JOIN_TIMEOUT_MS = 30000;

export function joinsCluster(io: CliIO): boolean {
	return env("TRANSPORTER", io.env) !== "";
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new CliFailure(message)), ms);
	});
	return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface RegistryAccess {
	/** Services the command calls (waited for in a cluster, started here otherwise). */
	needs: string[];
	/** Started here too when offline (e.g. the lookup, so its read model follows participant writes). */
	alsoOffline?: string[];
}

/**
 * Runs `work` with a broker that reaches the services in `access.needs`. Offline, the audit
 * service runs too when this build has it, so the operator's changes reach the audit trail.
 */
export async function withRegistry<T>(
	io: CliIO,
	access: RegistryAccess,
	work: (broker: ServiceBroker) => Promise<T>,
): Promise<T> {
	const join = joinsCluster(io);
	const local = join ? [] : [...new Set([...access.needs, ...(access.alsoOffline ?? []), "audit"])];
	const broker = createRegistryBroker({
		env: io.env,
		services: local,
		overrides: {
			nodeID: `registry-cli-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
			// Services started here answer the command's calls; they start no background work (src/platform/broker.ts).
			metadata: { [OPERATOR_TOOL]: true },
			logger: {
				type: "Console",
				options: { level: io.env.LOG_LEVEL || "warn", formatter: "short", colors: false, moduleColors: false },
			},
		},
	});
	const where = join
		? `the cluster at TRANSPORTER (NAMESPACE ${env("NAMESPACE", io.env) || "(none)"})`
		: "the local store";
	try {
		await withTimeout(broker.start(), JOIN_TIMEOUT_MS, `cannot start against ${where}`);
		await withTimeout(
			broker.waitForServices(access.needs, JOIN_TIMEOUT_MS),
			JOIN_TIMEOUT_MS + 1000,
			`${where} has no running ${access.needs.join(", ")} service(s)`,
		).catch((error) => {
			if (error instanceof CliFailure) throw error;
			throw new CliFailure(`${where} has no running ${access.needs.join(", ")} service(s)`);
		});
		return await work(broker);
	} finally {
		await broker.stop().catch(() => undefined);
	}
}
