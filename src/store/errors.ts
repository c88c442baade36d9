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
