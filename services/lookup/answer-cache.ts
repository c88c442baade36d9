/**
 * Finished lookup answers in memory, keyed by organization and visibility: the hot path
 * answers from here without touching the store. Bounded (oldest entries go first), and
 * versioned by an epoch: an answer computed while a change was applied is not stored, so
 * the cache never keeps what a change already replaced.
 */
export type Visibility = "all" | "visible";

/** A cached answer; null records "no participant for this organization" (a 404), so unknown keys are cheap too. */
export type CachedAnswer<T> = T | null;

export class AnswerCache<T> {
	private readonly entries = new Map<string, CachedAnswer<T>>();
	private epochValue = 0;

	constructor(private readonly maxEntries = 50000) {}

	static key(organizationKey: string, visibility: Visibility): string {
		return `${organizationKey}|${visibility}`;
	}

	get epoch(): number {
		return this.epochValue;
	}

	get(key: string): CachedAnswer<T> | undefined {
		return this.entries.get(key);
	}

	/** Stores an answer computed at `epoch`, unless something was invalidated since. */
	set(key: string, answer: CachedAnswer<T>, epoch: number): void {
		if (epoch !== this.epochValue) return;
		if (this.entries.size >= this.maxEntries) {
			const oldest = this.entries.keys().next().value;
			if (oldest !== undefined) this.entries.delete(oldest);
		}
		this.entries.set(key, answer);
	}

	/** Drops one organization's answers (both visibilities), or every answer. */
	invalidate(organizationKey?: string): void {
		this.epochValue += 1;
		if (organizationKey === undefined) {
			this.entries.clear();
			return;
		}
		this.entries.delete(AnswerCache.key(organizationKey, "all"));
		this.entries.delete(AnswerCache.key(organizationKey, "visible"));
	}
}
