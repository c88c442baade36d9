/**
 * The registry's services by name (SERVICES chooses among them) and the broker that runs
 * them: the one composition root that server.ts, the CLI, the tests and the bench start the
 * registry from, so every one of them starts it the same way. A process that runs `lookup`
 * without `api` is a lookup node: it gets the gateway too, serving the lookup's operations
 * (decisions §12).
 */
import type { ServiceBroker, ServiceSchema } from "moleculer";
import { createBroker, type BrokerBuildOptions } from "../src/platform/broker";
import { selectedServices } from "../src/config/settings";
import AccessPointsService from "./access-points/access-points.service";
import AccountsService from "./accounts/accounts.service";
import { gatewayService } from "./api/api.service";
import AuditService from "./audit/audit.service";
import CatalogService from "./catalog/catalog.service";
import LookupService from "./lookup/lookup.service";
import NetworkService from "./network/network.service";
import ParticipantsService from "./participants/participants.service";

export const SERVICE_SCHEMAS: Record<string, ServiceSchema> = {
	api: gatewayService("api") as unknown as ServiceSchema,
	catalog: CatalogService as ServiceSchema,
	participants: ParticipantsService as unknown as ServiceSchema,
	accessPoints: AccessPointsService as ServiceSchema,
	lookup: LookupService as unknown as ServiceSchema,
	accounts: AccountsService as ServiceSchema,
	audit: AuditService as unknown as ServiceSchema,
	network: NetworkService as unknown as ServiceSchema,
};

export function loadServiceSchema(name: string): ServiceSchema {
	const schema = SERVICE_SCHEMAS[name];
	if (!schema) throw new Error(`unknown service ${name}`);
	return schema;
}

export interface RegistryBrokerOptions extends BrokerBuildOptions {
	/** Defaults to SERVICES from the environment (all services). */
	services?: string[];
	/** Started as a node of the registry (server.ts): a lookup node gets its gateway. The CLI and tests start services only. */
	node?: boolean;
}

/** Is a process running these services a lookup node (the lookup without the full gateway)? */
export function isLookupNode(services: string[]): boolean {
	return services.includes("lookup") && !services.includes("api");
}

export function createRegistryBroker(options: RegistryBrokerOptions = {}): ServiceBroker {
	const broker = createBroker(options);
	const services = options.services ?? selectedServices(options.env ?? process.env);
	for (const name of services) broker.createService(loadServiceSchema(name));
	if (options.node && isLookupNode(services))
		broker.createService(gatewayService("lookup") as unknown as ServiceSchema);
	return broker;
}
