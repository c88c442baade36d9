/**
 * Liveness and readiness (decisions §1). Ready means: the transporter is connected, the
 * services this process depends on are reachable, and the stores of the services in this
 * process answer. A process depends on the services it runs, and a gateway also on
 * `accounts` (every authenticated request needs it). Other services are not required: a
 * gateway whose catalog is briefly away still answers participants and lookups, and answers
 * 503 for the catalog operations, rather than leaving the load balancer altogether.
 */
import type { ServiceBroker } from "moleculer";
import type { Store } from "../store/types";

/**
 * Start-up work that must finish before the process takes traffic (server.ts imports the
 * seed after the broker starts): readiness stays DOWN while it runs.
 */
let startupPending = false;

export function markStartup(pending: boolean): void {
	startupPending = pending;
}

export interface Readiness {
	status: "UP" | "DOWN";
	checks: Record<string, "UP" | "DOWN">;
}

function availableServices(broker: ServiceBroker): Set<string> {
	const list = broker.registry.getServiceList({ onlyAvailable: true, skipInternal: true }) as { name: string }[];
	return new Set(list.map((service) => service.name));
}

export function requiredServices(broker: ServiceBroker): string[] {
	const local = broker.services.map((service) => service.name).filter((name) => !name.startsWith("$"));
	return local.includes("api") ? [...new Set([...local, "accounts"])] : local;
}

export async function readiness(
	broker: ServiceBroker,
	required: string[] = requiredServices(broker),
): Promise<Readiness> {
	const checks: Record<string, "UP" | "DOWN"> = { startup: startupPending ? "DOWN" : "UP" };
	const transit = (broker as unknown as { transit?: { connected: boolean } }).transit;
	checks.transporter = !transit || transit.connected ? "UP" : "DOWN";
	// A Redis that is away only costs cache misses; one that refuses our credentials is a misconfiguration.
	const cacher = broker.cacher as unknown as { credentialsRefused?: string | null } | null;
	if (cacher && "credentialsRefused" in cacher) checks.cache = cacher.credentialsRefused ? "DOWN" : "UP";
	const available = availableServices(broker);
	for (const name of required) checks[`service:${name}`] = available.has(name) ? "UP" : "DOWN";
	for (const service of broker.services) {
		const store = (service as unknown as { store?: Store }).store;
		if (!store) continue;
		let up = false;
		try {
			up = await store.ping();
		} catch {
			up = false;
		}
		checks[`store:${service.name}`] = up ? "UP" : "DOWN";
	}
	const status = Object.values(checks).every((check) => check === "UP") ? "UP" : "DOWN";
	return { status, checks };
}
