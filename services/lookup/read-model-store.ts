/**
 * What the lookup keeps about its read-model store in the store itself: an identity, made once by
 * the first lookup node that opens it, and the generation of the Redis answer cache (answer-cache.ts).
 * Lookup nodes must share one store: the durable channel gives each change to one node of the group
 * (decisions §11, §12), so a node on a store of its own would miss the others' changes. Each node
 * shows its store's identity to the others in its service metadata; one that sees another identity
 * is not ready.
 */
import { randomUUID } from "node:crypto";
import type { ServiceBroker } from "moleculer";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";
import type { Collection, ModelSpec, StoredDoc } from "../../src/store/types";

export interface ReadModelStoreDoc extends StoredDoc {
	storeId: string;
	/** Moved on when Redis refused a mark: the Redis hashes of older generations are left. */
	cacheGeneration: number;
}

export const READ_MODEL_STORE_MODEL: ModelSpec = { collection: "lookupReadModelStore", fields: {}, indexes: [] };

/** The service metadata key with the store's identity. */
export const READ_MODEL_STORE_METADATA = "readModelStore";

const IDENTIFIER = "store";
const MAX_ATTEMPTS = 10;

/** The store's identity and cache generation, made on first use (another node may make it at the same time). */
export async function readModelStore(collection: Collection<ReadModelStoreDoc>): Promise<ReadModelStoreDoc> {
	for (let attempt = 1; ; attempt++) {
		const found = await collection.get(IDENTIFIER);
		if (found) return found;
		try {
			return await collection.insert({ identifier: IDENTIFIER, storeId: randomUUID(), cacheGeneration: 0 });
		} catch (error) {
			if (!isDuplicateKey(error) || attempt >= MAX_ATTEMPTS) throw error;
		}
	}
}

/** Moves the cache generation on (Redis refused a mark) and answers the new one. */
export async function nextCacheGeneration(collection: Collection<ReadModelStoreDoc>): Promise<number> {
	for (let attempt = 1; ; attempt++) {
		const current = await readModelStore(collection);
		const cacheGeneration = current.cacheGeneration + 1;
		try {
			await collection.replace({ ...current, cacheGeneration }, current.version);
			return cacheGeneration;
		} catch (error) {
			if (!isStaleVersion(error) || attempt >= MAX_ATTEMPTS) throw error;
		}
	}
}

/** Why this lookup node must not take traffic: other lookup nodes on another read-model store; null when none. */
export function otherStoresProblem(broker: ServiceBroker, service: string, storeId: string): string | null {
	const services = broker.registry.getServiceList({ onlyAvailable: true, skipInternal: true }) as {
		name: string;
		nodeID: string;
		metadata?: Record<string, unknown>;
	}[];
	const others = services
		.filter((other) => other.name === service && other.nodeID !== broker.nodeID)
		.filter((other) => {
			const theirs = other.metadata?.[READ_MODEL_STORE_METADATA];
			return typeof theirs === "string" && theirs !== storeId;
		})
		.map((other) => other.nodeID)
		.sort();
	if (others.length === 0) return null;
	return (
		`lookup node(s) ${others.join(", ")} keep their read model in another read-model store than this node's (${storeId}): ` +
		"the channel gives each change to one lookup node, so each would miss the others' changes. Lookup nodes share one store (MONGO_URI); one on its own SQLite must be the only one"
	);
}
