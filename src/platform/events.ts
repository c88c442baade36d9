/**
 * Events every node hears after a commit, for whoever keeps a copy the change makes stale; in a cluster a
 * node may miss one, so those copies also expire (docs/internals.md "Caches, and how fresh each answer is").
 */
import type { ServiceBroker } from "moleculer";

export const EVENTS = {
	/** `{ resource, identifier, operation }` after a catalog record changed. */
	catalogChanged: "catalog.changed",
	/** `{ username }` or `{ serviceProvider }` after an account or a service provider (its access points too) changed. */
	accountsChanged: "accounts.changed",
	/** `{ accessPoint }` or `{ accessPointProvider }` after an access point (its endpoints) or its provider changed. */
	accessPointsChanged: "accessPoints.changed",
	/** `{ organizationKey, version }`: the lookup's read model of an organization changed; `{}`: all of it (a rebuild). */
	lookupInvalidated: "lookup.invalidated",
	/** `{ sequence }`: the change feed grew to this sequence (services/audit/feed.ts). */
	changesRecorded: "changes.recorded",
	/** `{ key, seconds }`: a gateway locked a username or address out (services/api/login-throttle.ts). */
	loginLocked: "auth.locked",
} as const;

/** How long a copy fed by events is used: in a cluster `clusterMs` (a node may miss an event), in one process for as long as it is not dropped (0). */
export function copyMaxAgeMs(broker: ServiceBroker, clusterMs: number): number {
	return (broker as unknown as { transit?: unknown }).transit ? clusterMs : 0;
}

export interface RegistryEvent {
	name: string;
	payload: object;
}

/** Broadcasts events after their change committed; a node that cannot send them only logs it (the copies expire). */
export async function broadcastEvents(broker: ServiceBroker, events: RegistryEvent[]): Promise<void> {
	for (const { name, payload } of events) {
		try {
			await broker.broadcast(name, payload);
		} catch (error) {
			broker.logger.warn(`event ${name} not sent (copies elsewhere expire instead):`, String(error));
		}
	}
}
