/**
 * Upsert planning for the services that own seed sections: given what is stored and what a
 * file wants, which records to write and how many were created, updated or left unchanged.
 * A record that would not change is not written, so a second import of the same file
 * changes nothing (and audits nothing).
 */
import type { StoredDoc } from "../store/types";

export interface SeedCounts {
	created: number;
	updated: number;
	unchanged: number;
}

/** Same content, whatever the key order or the store's bookkeeping (`version`, absent vs undefined). */
export function sameRecord(a: StoredDoc, b: StoredDoc): boolean {
	return canonical({ ...a, version: undefined }) === canonical({ ...b, version: undefined });
}

function canonical(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
	if (value !== null && typeof value === "object") {
		const entries = Object.entries(value as Record<string, unknown>)
			.filter(([, field]) => field !== undefined)
			.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
		return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonical(field)}`).join(",")}}`;
	}
	return JSON.stringify(value);
}

export interface UpsertPlan<T extends StoredDoc> {
	/** Records to write: `before` is the stored one (null when new). */
	writes: { before: T | null; after: T }[];
	counts: SeedCounts;
}

export function planUpserts<T extends StoredDoc>(stored: T[], wanted: T[]): UpsertPlan<T> {
	const byIdentifier = new Map(stored.map((record) => [record.identifier, record]));
	const plan: UpsertPlan<T> = { writes: [], counts: { created: 0, updated: 0, unchanged: 0 } };
	for (const after of wanted) {
		const before = byIdentifier.get(after.identifier) ?? null;
		if (before && sameRecord(before, after)) {
			plan.counts.unchanged++;
		} else {
			plan.writes.push({ before, after });
			plan.counts[before ? "updated" : "created"]++;
		}
	}
	return plan;
}
