/** What the store refuses; services translate these into the contract's errors (409, a retry). */

/** Store-level: a unique index refused a write. Services translate it into Conflict. */
export class DuplicateKey extends Error {
	constructor(
		public readonly collection: string,
		public readonly index: string,
	) {
		super(`duplicate key in ${collection} on ${index}`);
		this.name = "DuplicateKey";
	}
}

/** A DuplicateKey, also one that lost its class on the way (compared by name). */
export function isDuplicateKey(error: unknown): error is DuplicateKey {
	return error instanceof DuplicateKey || (error as { name?: string } | null)?.name === "DuplicateKey";
}

/** Store-level: an optimistic version check failed (someone changed the record first). */
export class StaleVersion extends Error {
	constructor(
		public readonly collection: string,
		public readonly identifier: string,
	) {
		super(`${collection} ${identifier} was changed concurrently`);
		this.name = "StaleVersion";
	}
}

/** A StaleVersion, also one that lost its class on the way (compared by name). */
export function isStaleVersion(error: unknown): error is StaleVersion {
	return error instanceof StaleVersion || (error as { name?: string } | null)?.name === "StaleVersion";
}
