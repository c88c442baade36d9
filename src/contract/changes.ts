/**
 * The change feed's answer and cursors (docs/decisions.md "Change feed"): what GET
 * /rest/api/changes answers, in either form, and how a cursor is read.
 */
import { TypeMismatch } from "./errors";

/** The resources the change feed carries (GET /rest/api/changes). */
export type ChangedResource = "participant" | "process" | "documentType" | "capability";

/** One committed change in the feed (docs/decisions.md "Change feed"). */
export interface Change {
	/** Position in the feed, increasing (a caller sees the changes of its scope, with gaps between them). */
	sequence: number;
	/** ISO instant of the commit. */
	at: string;
	/** The operation id that made it (e.g. updateParticipant, seed). */
	operation: string;
	resource: ChangedResource;
	identifier: string;
	/** The record's version after the change; a follower keeps a record only at a higher version. */
	version: number;
	/** True: the record is gone (deleted, or for a service provider, transferred away). */
	deleted: boolean;
	/** The record in reference form, null when deleted. */
	record: unknown;
}

/** A page of the change feed. */
export interface ChangePage {
	changes: Change[];
	/** Resume after this: the last change's sequence, or the cursor given when there was none. */
	cursor: string;
	/** True when more changes follow already. */
	more: boolean;
}

export const DEFAULT_CHANGES = 100;
export const MAX_CHANGES = 1000;

/** A cursor of the feed: a sequence the registry gave (absent or empty: before the first change). */
export function parseCursor(name: string, value: string | undefined): number {
	if (value === undefined || value.trim() === "") return 0;
	if (!/^\d{1,15}$/.test(value.trim()))
		throw new TypeMismatch(
			`Parameter '${name}' must be a cursor this registry gave (a whole number); value: '${value}'`,
		);
	return Number(value.trim());
}

/** The `limit` of a page of changes. */
export function changesLimit(limit: number | undefined): number {
	if (limit === undefined) return DEFAULT_CHANGES;
	if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CHANGES)
		throw new TypeMismatch(`Query parameter 'limit' must be between 1 and ${MAX_CHANGES}; value: '${limit}'`);
	return limit;
}
