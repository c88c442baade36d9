/**
 * An in-memory cache of records another service owns (processes from catalog, service
 * providers from accounts), filled on demand and dropped when the owner announces a
 * change. A fetch that started before a drop does not refill the cache with what it got,
 * so a renamed, hidden or deleted process shows in the very next answer.
 */
export class CachedResolver<T extends { identifier: string }> {
	private readonly entries = new Map<string, T>();
	private generation = 0;

	constructor(
		private readonly fetch: (identifiers: string[]) => Promise<T[]>,
		private readonly maxEntries = 10000,
	) {}

	/**
	 * The records of `identifiers` when every one is held already, else null (then `resolve`):
	 * a read's answer is assembled without a promise in the common case.
	 */
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
		const wanted = [...new Set(identifiers)];
		const found = new Map<string, T>();
		const missing: string[] = [];
		for (const id of wanted) {
			const entry = this.entries.get(id);
			if (entry) found.set(id, entry);
			else missing.push(id);
		}
		if (missing.length === 0) return found;
		const generation = this.generation;
		const fetched = await this.fetch(missing);
		const keep = generation === this.generation;
		for (const record of fetched) {
			found.set(record.identifier, record);
			if (keep) this.remember(record);
		}
		return found;
	}

	clear(): void {
		this.generation += 1;
		this.entries.clear();
	}

	private remember(record: T): void {
		// Bounded: a registry has hundreds of processes and providers, never more than the cap.
		if (this.entries.size >= this.maxEntries) this.entries.clear();
		this.entries.set(record.identifier, record);
	}
}
