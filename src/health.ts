/**
 * Liveness and readiness (decisions §1). Ready means: the transporter is connected, every
 * service the registry needs is reachable somewhere in the cluster, and the stores of the
 * services in this process answer.
 */
import type { ServiceBroker } from "moleculer";
import type { Store } from "./store/types";
import { ALL_SERVICES } from "./settings";

export interface Readiness {
	status: "UP" | "DOWN";
	checks: Record<string, "UP" | "DOWN">;
}

function availableServices(broker: ServiceBroker): Set<string> {
	const list = broker.registry.getServiceList({ onlyAvailable: true, skipInternal: true }) as { name: string }[];
	return new Set(list.map((service) => service.name));
}

export async function readiness(broker: ServiceBroker, required: string[] = ALL_SERVICES): Promise<Readiness> {
	const checks: Record<string, "UP" | "DOWN"> = {};
	const transit = (broker as unknown as { transit?: { connected: boolean } }).transit;
	checks.transporter = !transit || transit.connected ? "UP" : "DOWN";
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
