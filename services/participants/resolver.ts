/**
 * An in-memory cache of records another service owns (processes from catalog, service
 * providers from accounts), filled on demand, dropped when the owner announces a change (an
 * event), and kept at most `maxAgeMs` (a node that missed the event). A fetch that started
 * before a drop does not refill the cache with what it got, so a renamed, hidden or deleted
 * process shows in the very next answer.
 */
import { LRUCache } from "lru-cache";

export class CachedResolver<T extends { identifier: string }> {
	private readonly entries: LRUCache<string, T>;
	private generation = 0;

	constructor(
		private readonly fetch: (identifiers: string[]) => Promise<T[]>,
		maxAgeMs: number,
		maxEntries = 10000,
	) {
		this.entries = new LRUCache<string, T>({ max: maxEntries, ttl: maxAgeMs || undefined });
	}

	/** The records of `identifiers` when every one is held already, else null (then `resolve`). */
	known(identifiers: Iterable<string>): Map<string, T> | null {
		const found = new Map<string, T>();
		for (const id of identifiers) {
			const entry = this.entries.get(id);
			if (!entry) return null;
			found.set(id, entry);
		}
		return found;
	}

	/** The known records among `identifiers` (unknown ones are absent from the map). */
	async resolve(identifiers: Iterable<string>): Promise<Map<string, T>> {
		const found = new Map<string, T>();
		const missing: string[] = [];
		for (const id of new Set(identifiers)) {
			const entry = this.entries.get(id);
			if (entry) found.set(id, entry);
			else missing.push(id);
		}
		if (missing.length === 0) return found;
		const generation = this.generation;
		const fetched = await this.fetch(missing);
		for (const record of fetched) {
			found.set(record.identifier, record);
			if (generation === this.generation) this.entries.set(record.identifier, record);
		}
		return found;
	}

	clear(): void {
		this.generation += 1;
		this.entries.clear();
	}
}
