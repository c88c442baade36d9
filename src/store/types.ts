/**
 * The one store interface every service uses (architecture "Storage"). Two
 * implementations: SQLite through better-sqlite3 (embedded, default) and MongoDB through
 * mongoose (when MONGO_URI is set). Repository code speaks this small typed query, which
 * each implementation translates natively; it never passes raw Mongo filters or SQL.
 */

/** Scalar kinds a declared field may hold. Arrays of strings are `stringArray`. */
export type FieldKind = "string" | "number" | "boolean" | "stringArray";

export interface FieldSpec {
	kind: FieldKind;
	/** Compare and sort case-insensitively (SQLite COLLATE NOCASE; Mongo stores a lowercased shadow). */
	caseInsensitive?: boolean;
}

export interface IndexSpec {
	/** Stable name; DuplicateKey.index carries it so services know which rule was hit. */
	name: string;
	fields: string[];
	unique?: boolean;
}

/**
 * A collection's declaration, written once next to the service that owns it. Only declared
 * fields can be filtered or sorted on; everything else is stored opaquely in the document.
 * Every document has a string `identifier` (primary key) and a numeric `version`
 * (incremented by the store on every replace; used for optimistic concurrency).
 */
export interface ModelSpec {
	collection: string;
	fields: Record<string, FieldSpec>;
	indexes: IndexSpec[];
	/**
	 * A string field whose words can be prefix-searched (Query.words). SQLite: FTS5;
	 * MongoDB: an indexed array of lowercased words.
	 */
	textField?: string;
}

export type Scalar = string | number | boolean | null;

/**
 * Filter on declared fields, all conditions ANDed.
 * - `value`: equality (case-insensitive when the field is declared so; for stringArray: contains)
 * - `{ in: [...] }`: equality with any of the values (for stringArray: contains any)
 * - `{ lte: v }` / `{ gte: v }` / `{ lt: v }`: range, for strings (ISO dates) and numbers
 * - `{ ne: v }`: not equal
 */
export type Condition = Scalar | { in: Scalar[] } | { lte: Scalar } | { gte: Scalar } | { lt: Scalar } | { ne: Scalar };
export type Filter = Record<string, Condition>;

export interface SortKey {
	field: string;
	direction: "asc" | "desc";
}

export interface Query {
	filter?: Filter;
	/** Each word must start a word of the model's textField, case-insensitively, matched literally. */
	words?: string[];
	/** The store always appends `identifier asc` as the final tie-breaker. */
	sort?: SortKey[];
	offset?: number;
	limit?: number;
}

export interface StoredDoc {
	identifier: string;
	version?: number;
}

/** One write in an atomic batch (Store.batch). */
export type WriteOp =
	| { kind: "insert"; collection: string; doc: StoredDoc }
	/** Replace the whole document. With expectedVersion, fails with StaleVersion unless it matches. */
	| { kind: "replace"; collection: string; doc: StoredDoc; expectedVersion?: number }
	| { kind: "upsert"; collection: string; doc: StoredDoc }
	| { kind: "delete"; collection: string; identifier: string; expectedVersion?: number }
	| { kind: "deleteWhere"; collection: string; filter: Filter };

export interface Collection<T extends StoredDoc> {
	readonly spec: ModelSpec;
	get(identifier: string): Promise<T | null>;
	getMany(identifiers: string[]): Promise<T[]>;
	findOne(filter: Filter): Promise<T | null>;
	find(query: Query): Promise<T[]>;
	count(query?: Pick<Query, "filter" | "words">): Promise<number>;
	/** Streams every match in order, in constant memory (exports, rebuilds). */
	iterate(query: Query): AsyncIterable<T>;
	/** Throws DuplicateKey when a unique index refuses it. Sets version = 1. */
	insert(doc: T): Promise<T>;
	/** Throws StaleVersion on a version mismatch, DuplicateKey on a unique index. Increments version. */
	replace(doc: T, expectedVersion?: number): Promise<T>;
	/** Insert or replace by identifier (seed import; idempotent). */
	upsert(doc: T): Promise<T>;
	/** True when a document was removed. */
	delete(identifier: string, expectedVersion?: number): Promise<boolean>;
	deleteWhere(filter: Filter): Promise<number>;
}

export interface StoreUsage {
	sizeBytes: number;
	/** The filesystem the data lives on (null: not on a filesystem, e.g. ":memory:"). */
	filesystemFreeBytes: number | null;
	filesystemSizeBytes: number | null;
}

export interface Store {
	/** Declares (and creates, with its indexes) a collection. Idempotent. */
	collection<T extends StoredDoc>(spec: ModelSpec): Promise<Collection<T>>;
	/**
	 * Applies every write or none (SQLite transaction; MongoDB transaction when the server
	 * supports it). Throws DuplicateKey / StaleVersion like the single-document calls.
	 * Versions: insert sets 1, replace/upsert increment, as in the single calls. Resolves once
	 * committed (to what the store's own single calls need: SQLite answers each write's result).
	 */
	batch(ops: WriteOp[]): Promise<unknown>;
	/** Is the store reachable (readiness)? */
	ping(): Promise<boolean>;
	/** How big it is and how much room is left where it lives (the store metrics); null when unknown. */
	usage(): Promise<StoreUsage | null>;
	close(): Promise<void>;
	/** "sqlite" | "mongodb" for logs and health. */
	readonly kind: string;
}
