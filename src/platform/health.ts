/** Readiness: what this process needs itself (docs/operations.md "Health and metrics"). */
import type { ServiceBroker } from "moleculer";
import type { Store } from "../store/types";

/** Start-up work (the seed) that must finish before the process takes traffic. */
let startupPending = false;

export function markStartup(pending: boolean): void {
	startupPending = pending;
}

export interface Readiness {
	status: "UP" | "DOWN";
	checks: Record<string, "UP" | "DOWN">;
	/** Why a check is DOWN (a service's `readinessProblem()`), or what a service says of itself without failing readiness (`readinessDetails()`: the gateway's OAuth issuer keys, decisions §15). */
	details?: Record<string, string>;
}

export async function readiness(broker: ServiceBroker): Promise<Readiness> {
	const checks: Record<string, "UP" | "DOWN"> = { startup: startupPending ? "DOWN" : "UP" };
	const details: Record<string, string> = {};
	checks.transporter = !broker.transit || broker.transit.connected ? "UP" : "DOWN";
	// A Redis that is away only costs cache misses; one that refuses our credentials is a misconfiguration.
	const cacher = broker.cacher as unknown as { credentialsRefused?: string | null } | null;
	if (cacher && "credentialsRefused" in cacher) checks.cache = cacher.credentialsRefused ? "DOWN" : "UP";
	const list = broker.registry.getServiceList({ onlyAvailable: true, skipInternal: true }) as { name: string }[];
	const available = new Set(list.map((service) => service.name));
	const local = broker.services.map((service) => service.name).filter((name) => !name.startsWith("$"));
	// A gateway authenticates through accounts; other services' operations answer 503 meanwhile.
	const required = local.includes("api") ? [...local, "accounts"] : local;
	for (const name of required) checks[`service:${name}`] = available.has(name) ? "UP" : "DOWN";
	for (const service of broker.services) {
		const store = (service as unknown as { store?: Store }).store;
		if (store) checks[`store:${service.name}`] = (await store.ping().catch(() => false)) ? "UP" : "DOWN";
		// What only the service can see in the cluster (a lookup node: the others share its read model).
		const problem = (service as unknown as { readinessProblem?(): string | null }).readinessProblem?.();
		if (problem !== undefined) checks[`cluster:${service.name}`] = problem ? "DOWN" : "UP";
		if (problem) details[`cluster:${service.name}`] = problem;
	}
	const status = Object.values(checks).every((check) => check === "UP") ? "UP" : "DOWN";
	for (const service of broker.services)
		Object.assign(details, (service as { readinessDetails?: () => Record<string, string> }).readinessDetails?.());
	return Object.keys(details).length ? { status, checks, details } : { status, checks };
}
