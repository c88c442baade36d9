/**
 * Embedded store: SQLite through better-sqlite3 (architecture "Storage").
 *
 * One database file per owning service. Each collection is a table
 *   identifier TEXT PRIMARY KEY, version INTEGER, body TEXT (JSON of the whole document)
 * plus one real column per declared scalar field, extracted in JS on every write
 * (caseInsensitive fields hold the Unicode-lowercased value and use COLLATE NOCASE).
 * A `stringArray` field lives in a side table `<collection>__<field>(identifier, value)`
 * indexed on (value, identifier), so "contains" filters stay indexed. The textField is
 * indexed by a contentless FTS5 table `<collection>___fts` (unicode61, case-folding,
 * diacritics kept) whose rowid is kept in the main table's `_rid` column (stable across
 * VACUUM, unlike the implicit rowid), updated in the same transaction as the row.
 *
 * Declared non-unique indexes get `identifier` appended so that a sort on their fields
 * plus the hidden tie-breaker is served by the index (deep pages in milliseconds).
 *
 * The declared spec is recorded in `__store_meta`; when a collection is declared with a
 * different spec than the one the file was built with, its table, side tables, FTS table
 * and indexes are rebuilt from the stored bodies (in one transaction, versions kept).
 *
 * The helpers at the top (spec validation, value normalisation, filter parsing, word
 * tokenizing) are shared with mongo.ts so that both stores agree on semantics.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { BACKSTOP_PAGES, walCheckpointer } from "./checkpointer";
import { DuplicateKey, StaleVersion } from "./errors";
import type { Collection, FieldSpec, Filter, ModelSpec, Query, SortKey, Store, StoredDoc, WriteOp } from "./types";

// ---------------------------------------------------------------------------------------
// Shared helpers (also imported by mongo.ts)
// ---------------------------------------------------------------------------------------

const COLLECTION_NAME = /^[A-Za-z](?:[A-Za-z0-9]|_(?=[A-Za-z0-9]))*$/;
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*$/;
/** Names a declared field may not take (storage columns / Mongo paths of their own). */
const RESERVED_FIELDS = new Set(["body", "_id", "_rid", "_words"]);

export interface ResolvedField {
	/** The declared name (a dotted path into the document is allowed). */
	name: string;
	kind: FieldSpec["kind"];
	caseInsensitive: boolean;
	/** Storage name: the declared name with `.` replaced by `__` (identifier/version: themselves). */
	column: string;
	/** identifier / version: kept by the store itself, not extracted from the document. */
	builtin: boolean;
}

export interface ResolvedModel {
	spec: ModelSpec;
	fields: Map<string, ResolvedField>;
	/** Declared (non built-in) fields, in declaration order. */
	declared: ResolvedField[];
	textField?: string;
	/** Canonical JSON of the spec: a change triggers a rebuild of derived data. */
	fingerprint: string;
}

/** Validates a ModelSpec and resolves its fields (identifier and version are always there). */
export function resolveModel(spec: ModelSpec): ResolvedModel {
	if (!spec || typeof spec.collection !== "string" || !COLLECTION_NAME.test(spec.collection)) {
		throw new Error(`store: invalid collection name ${JSON.stringify(spec?.collection)} (letters, digits, single underscores)`);
	}
	const fields = new Map<string, ResolvedField>();
	const declared: ResolvedField[] = [];
	const columns = new Set<string>();
	for (const [name, field] of Object.entries(spec.fields ?? {})) {
		if (!FIELD_NAME.test(name) || RESERVED_FIELDS.has(name)) throw new Error(`store: ${spec.collection}: invalid field name ${JSON.stringify(name)}`);
		if (!["string", "number", "boolean", "stringArray"].includes(field?.kind)) throw new Error(`store: ${spec.collection}.${name}: unknown kind ${JSON.stringify(field?.kind)}`);
		const caseInsensitive = field.caseInsensitive === true && (field.kind === "string" || field.kind === "stringArray");
		if (name === "identifier" || name === "version") {
			const expected = name === "identifier" ? "string" : "number";
			if (field.kind !== expected || caseInsensitive) throw new Error(`store: ${spec.collection}.${name} is built in (${expected}, case-sensitive)`);
			continue;
		}
		const column = name.split(".").join("__");
		if (columns.has(column)) throw new Error(`store: ${spec.collection}: fields collide on storage name ${column}`);
		columns.add(column);
		const resolved: ResolvedField = { name, kind: field.kind, caseInsensitive, column, builtin: false };
		fields.set(name, resolved);
		declared.push(resolved);
	}
	fields.set("identifier", { name: "identifier", kind: "string", caseInsensitive: false, column: "identifier", builtin: true });
	fields.set("version", { name: "version", kind: "number", caseInsensitive: false, column: "version", builtin: true });
	const names = new Set<string>();
	for (const index of spec.indexes ?? []) {
		if (!index || typeof index.name !== "string" || index.name.length === 0) throw new Error(`store: ${spec.collection}: an index needs a name`);
		if (names.has(index.name)) throw new Error(`store: ${spec.collection}: duplicate index name ${index.name}`);
		names.add(index.name);
		if (!Array.isArray(index.fields) || index.fields.length === 0) throw new Error(`store: ${spec.collection}.${index.name}: no fields`);
		for (const name of index.fields) {
			if (!fields.has(name)) throw new Error(`store: ${spec.collection}.${index.name}: undeclared field ${name}`);
		}
		const arrays = index.fields.filter((name) => fields.get(name)!.kind === "stringArray");
		if (index.unique && arrays.length > 0 && index.fields.length > 1) {
			throw new Error(`store: ${spec.collection}.${index.name}: a unique index on a stringArray field must have that field only`);
		}
	}
	if (spec.textField !== undefined) {
		const text = fields.get(spec.textField);
		if (!text || text.builtin || text.kind !== "string") throw new Error(`store: ${spec.collection}: textField ${spec.textField} must be a declared string field`);
	}
	const fingerprint = JSON.stringify({
		layout: 1,
		collection: spec.collection,
		fields: declared.map((field) => [field.name, field.kind, field.caseInsensitive]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
		indexes: (spec.indexes ?? []).map((index) => [index.name, index.fields, index.unique === true]),
		textField: spec.textField ?? null,
	});
	return { spec, fields, declared, textField: spec.textField, fingerprint };
}

/** Reads a (possibly dotted) path through own properties only. */
export function getPath(doc: unknown, name: string): unknown {
	let value: unknown = doc;
	for (const part of name.split(".")) {
		if (value === null || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
		value = (value as Record<string, unknown>)[part];
	}
	return value;
}

function fold(text: string): string {
	return text.normalize("NFC").toLowerCase();
}

/** The value a document holds for a declared field, as stored in the column / shadow path. */
export function documentValue(field: ResolvedField, doc: unknown): string | number | boolean | null | string[] {
	const raw = getPath(doc, field.name);
	switch (field.kind) {
		case "string":
			if (typeof raw === "string") return field.caseInsensitive ? fold(raw) : raw;
			if (typeof raw === "number" || typeof raw === "boolean") return String(raw);
			return null;
		case "number":
			return typeof raw === "number" && Number.isFinite(raw) ? raw : null;
		case "boolean":
			return typeof raw === "boolean" ? raw : null;
		case "stringArray": {
			if (!Array.isArray(raw)) return [];
			const values = new Set<string>();
			for (const item of raw) if (typeof item === "string") values.add(field.caseInsensitive ? fold(item) : item);
			return [...values];
		}
	}
}

/** A filter value, checked to be a scalar and normalised to the field's kind. */
export function filterValue(field: ResolvedField, value: unknown): string | number | boolean | null {
	if (value === null) return null;
	if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
		throw new TypeError(`store: filter on ${field.name}: value must be a string, number, boolean or null`);
	}
	switch (field.kind) {
		case "string":
		case "stringArray": {
			const text = String(value);
			return field.caseInsensitive ? fold(text) : text;
		}
		case "number": {
			const number = typeof value === "number" ? value : typeof value === "string" && /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(value) ? Number(value) : NaN;
			if (!Number.isFinite(number)) throw new TypeError(`store: filter on ${field.name}: not a number: ${JSON.stringify(value)}`);
			return number;
		}
		case "boolean":
			if (typeof value !== "boolean") throw new TypeError(`store: filter on ${field.name}: not a boolean: ${JSON.stringify(value)}`);
			return value;
	}
}

export type ConditionOp = "eq" | "in" | "ne" | "lt" | "lte" | "gte";
export interface ParsedCondition {
	field: ResolvedField;
	op: ConditionOp;
	/** eq / ne / ranges: one value; in: the non-null values. */
	value: string | number | boolean | null;
	values: Array<string | number | boolean>;
	/** in: whether null was one of the values. */
	withNull: boolean;
}

const OPERATORS = new Set(["in", "lte", "gte", "lt", "ne"]);

/**
 * Checks and normalises a Filter. Returns null when the filter can match nothing (an empty
 * `in`, or a range against null), so stores can answer without a query.
 */
export function parseFilter(model: ResolvedModel, filter: Filter | undefined): ParsedCondition[] | null {
	const conditions: ParsedCondition[] = [];
	if (filter === undefined || filter === null) return conditions;
	if (typeof filter !== "object" || Array.isArray(filter)) throw new TypeError("store: filter must be an object");
	let never = false;
	for (const name of Object.keys(filter)) {
		const field = model.fields.get(name);
		if (!field) throw new Error(`store: ${model.spec.collection}: cannot filter on undeclared field ${JSON.stringify(name)}`);
		const condition: unknown = (filter as Record<string, unknown>)[name];
		if (condition === undefined) continue;
		if (condition === null || typeof condition !== "object") {
			conditions.push({ field, op: "eq", value: filterValue(field, condition), values: [], withNull: false });
			continue;
		}
		if (Array.isArray(condition)) throw new TypeError(`store: filter on ${name}: use { in: [...] } for several values`);
		const keys = Object.keys(condition);
		if (keys.length === 0) throw new TypeError(`store: filter on ${name}: empty condition`);
		for (const key of keys) {
			if (!OPERATORS.has(key)) throw new TypeError(`store: filter on ${name}: unknown operator ${JSON.stringify(key)}`);
			const operand: unknown = (condition as Record<string, unknown>)[key];
			if (key === "in") {
				if (!Array.isArray(operand)) throw new TypeError(`store: filter on ${name}: in needs an array`);
				const values: Array<string | number | boolean> = [];
				let withNull = false;
				for (const item of operand) {
					const value = filterValue(field, item);
					if (value === null) withNull = true;
					else if (!values.includes(value)) values.push(value);
				}
				if (values.length === 0 && !withNull) never = true;
				conditions.push({ field, op: "in", value: null, values, withNull });
			} else {
				const value = filterValue(field, operand);
				if (value === null && key !== "ne") never = true;
				conditions.push({ field, op: key as ConditionOp, value, values: [], withNull: false });
			}
		}
	}
	return never ? null : conditions;
}

/** Word characters, as FTS5 unicode61 sees them by default (categories L*, N*, Co). */
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;

/** The lowercased words of a text (Mongo `_words`; the FTS5 tokenizer does the same in SQLite). */
export function textTokens(text: string): string[] {
	return fold(text).match(WORD) ?? [];
}

/**
 * Query.words → per word, its tokens (a word like "Smith-Jones" is the phrase smith jones).
 * Blank words are dropped; returns null when a word has no word characters at all (`"`,
 * `%`, `(`, `.*`): such a word cannot start any word, so the query matches nothing.
 */
export function queryWords(words: string[] | undefined): string[][] | null {
	const phrases: string[][] = [];
	for (const word of words ?? []) {
		if (typeof word !== "string") throw new TypeError("store: words must be strings");
		if (word.trim().length === 0) continue;
		const tokens = textTokens(word);
		if (tokens.length === 0) return null;
		phrases.push(tokens);
	}
	return phrases;
}

/** ORDER BY text for sort keys (of the table aliased `t`). */
function orderBy(keys: Array<{ field: ResolvedField; descending: boolean }>): string {
	return keys.map((key) => `t.${q(key.field.column)} ${key.descending ? "DESC" : "ASC"}`).join(", ");
}

/** Sort keys (validated, deduplicated) followed by the `identifier asc` tie-breaker. */
export function sortKeys(model: ResolvedModel, sort: SortKey[] | undefined): Array<{ field: ResolvedField; descending: boolean }> {
	const keys: Array<{ field: ResolvedField; descending: boolean }> = [];
	for (const key of sort ?? []) {
		const field = model.fields.get(key?.field);
		if (!field) throw new Error(`store: ${model.spec.collection}: cannot sort on undeclared field ${JSON.stringify(key?.field)}`);
		if (field.kind === "stringArray") throw new Error(`store: ${model.spec.collection}: cannot sort on stringArray field ${field.name}`);
		if (key.direction !== "asc" && key.direction !== "desc") throw new Error(`store: sort direction must be asc or desc`);
		if (keys.some((existing) => existing.field === field)) continue;
		keys.push({ field, descending: key.direction === "desc" });
		if (field.name === "identifier") return keys;
	}
	keys.push({ field: model.fields.get("identifier")!, descending: false });
	return keys;
}

export function pageBounds(query: Query): { offset: number; limit: number | undefined } {
	const offset = query.offset === undefined ? 0 : Math.floor(Number(query.offset));
	const limit = query.limit === undefined || query.limit === null ? undefined : Math.floor(Number(query.limit));
	if (!Number.isFinite(offset) || offset < 0) throw new RangeError("store: offset must be a non-negative number");
	if (limit !== undefined && (!Number.isFinite(limit) || limit < 0)) throw new RangeError("store: limit must be a non-negative number");
	return { offset, limit };
}

export function checkDoc(collection: string, doc: StoredDoc): void {
	if (!doc || typeof doc !== "object" || typeof doc.identifier !== "string" || doc.identifier.length === 0) {
		throw new TypeError(`store: ${collection}: a document needs a non-empty string identifier`);
	}
}

/** The text indexed for a textField (a string, or strings in an array). */
export function textOf(model: ResolvedModel, doc: unknown): string {
	if (!model.textField) return "";
	const raw = getPath(doc, model.textField);
	if (typeof raw === "string") return raw.normalize("NFC");
	if (Array.isArray(raw)) return raw.filter((item) => typeof item === "string").join(" ").normalize("NFC");
	return "";
}

// ---------------------------------------------------------------------------------------
// SQLite implementation
// ---------------------------------------------------------------------------------------

type Bindable = string | number | bigint | Buffer | null;

function q(name: string): string {
	return `"${name.replace(/"/g, '""')}"`;
}

function bindable(value: string | number | boolean | null): Bindable {
	return typeof value === "boolean" ? (value ? 1 : 0) : value;
}

const PAGE = 500;
const STATEMENT_CACHE = 1000;

interface QueuedWrite {
	work: () => unknown;
	resolve: (value: unknown) => void;
	reject: (error: unknown) => void;
}

interface CurrentRow {
	version: number;
	rid: number | null;
}

export class SqliteStore implements Store {
	readonly kind = "sqlite";
	/** Where the data lives (file path or ":memory:"), for logs. */
	readonly location: string;
	/** @internal */
	readonly db: Database.Database;
	private readonly statements = new Map<string, Database.Statement>();
	/** better-sqlite3 builds four wrappers per `db.transaction(fn)` call: built once, it takes the work as its argument. */
	private readonly transactional: (work: () => unknown) => unknown;
	/** Writes waiting for the next group commit (see `write`). */
	private pending: QueuedWrite[] = [];
	private flushScheduled = false;
	private readonly collections = new Map<string, SqliteCollection<StoredDoc>>();
	private closed = false;
	/** Whether the open transaction is this turn's shared read (SqliteStore.read). */
	private readOpen = false;
	private readonly beginRead: Database.Statement;
	private readonly commitRead: Database.Statement;
	private readonly endReadAtTurnEnd = () => this.endRead();

	constructor(file: string) {
		this.location = file === ":memory:" || file === "" ? ":memory:" : path.resolve(file);
		if (this.location !== ":memory:") fs.mkdirSync(path.dirname(this.location), { recursive: true });
		this.db = new Database(this.location === ":memory:" ? ":memory:" : this.location);
		this.db.pragma("journal_mode = WAL");
		this.db.pragma("synchronous = NORMAL");
		this.db.pragma("busy_timeout = 5000");
		this.db.pragma("foreign_keys = OFF");
		this.db.pragma("temp_store = MEMORY");
		this.transactional = this.db.transaction((work: () => unknown) => work());
		this.beginRead = this.db.prepare("BEGIN");
		this.commitRead = this.db.prepare("COMMIT");
		if (this.location !== ":memory:") {
			// Checkpoints run on the checkpointer's thread; this connection's own is only a backstop.
			this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
			walCheckpointer.open(this.location);
		}
		this.db.exec(`CREATE TABLE IF NOT EXISTS __store_meta (collection TEXT PRIMARY KEY NOT NULL, spec TEXT NOT NULL, fingerprint TEXT NOT NULL)`);
	}

	/** @internal Runs `work` in one transaction (a savepoint when one is open already). */
	transaction<R>(work: () => R): R {
		this.endRead();
		return this.transactional(work) as R;
	}

	/**
	 * @internal Every read of the store runs here: the reads of one event-loop turn share ONE
	 * read transaction, opened by the first and committed when the turn ends (or before any
	 * write, whichever comes first). Inside a transaction already open (a write group's, or
	 * this turn's read), `work` simply runs in it.
	 *
	 * Why: an autocommit read is a transaction of its own, and in WAL mode each one costs
	 * three system calls (two fcntl() locks on the -shm file and a stat() of the WAL) on top
	 * of its page reads. On this machine's kind (a VM with page-table isolation) a system
	 * call costs ~3 µs and cools the caches, so they were most of a unique-key read
	 * inside the server. Under load one turn answers ~30 requests (docs/performance.md
	 * "Third round", item 13). A read in a shared transaction sees the store as of the turn's first read,
	 * never older than the last write this process acknowledged: writes end it first.
	 */
	read<R>(work: () => R): R {
		this.checkOpen();
		if (!this.db.inTransaction) {
			this.beginRead.run();
			this.readOpen = true;
			setImmediate(this.endReadAtTurnEnd);
		}
		return work();
	}

	/** @internal Commits this turn's read transaction, if one is open (before any write or close). */
	endRead(): void {
		if (!this.readOpen) return;
		this.readOpen = false;
		if (this.db.inTransaction) this.commitRead.run();
	}

	/** @internal In a transaction a write may join: a write group's, never a turn's read. */
	get inWriteTransaction(): boolean {
		return this.db.inTransaction && !this.readOpen;
	}

	/**
	 * @internal Group commit. Every write of the store (a batch, or one document) waits for
	 * the end of the current event-loop turn; then all writes queued in that turn run in ONE
	 * transaction, in call order, and the transaction commits once. If one of them fails (a
	 * unique key, a stale version) the group is rolled back and each write runs again alone,
	 * so each succeeds or fails exactly as it would have one after another. Nothing resolves
	 * before its commit, so a write that resolved is durable and visible, as before. The work
	 * of a write must therefore be safe to run twice after a rollback (it only reads and
	 * writes the store).
	 *
	 * Why: concurrent requests each committed their own small transaction, and a commit writes
	 * every page it dirtied to the WAL: an add dirtied ~44 pages (the row, ~12 indexes, FTS,
	 * claims, outboxes), many of them the same last pages of append-only indexes. One commit
	 * per turn writes each shared page once and pays the commit's fixed cost once
	 * (docs/performance.md "Writes").
	 */
	write<R>(work: () => R): Promise<R> {
		this.checkOpen();
		return new Promise<R>((resolve, reject) => {
			this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
			if (!this.flushScheduled) {
				this.flushScheduled = true;
				setImmediate(() => this.flush());
			}
		});
	}

	private flush(): void {
		this.flushScheduled = false;
		const writes = this.pending;
		this.pending = [];
		if (writes.length === 0) return;
		if (this.closed) {
			for (const write of writes) write.reject(new Error("store: the SQLite store is closed"));
			return;
		}
		let values: unknown[] | undefined;
		try {
			values = this.transaction(() => writes.map((write) => write.work()));
		} catch {
			// One of them failed (a unique key, a stale version): the group was rolled back whole.
			// Rare, so no savepoint per write on the common path (FTS5 also flushes its pending
			// terms at every savepoint): each write runs again, alone, in call order.
		}
		if (values) {
			writes.forEach((write, i) => write.resolve(values![i]));
			return;
		}
		for (const write of writes) {
			let value: unknown;
			try {
				value = this.transaction(write.work);
			} catch (error) {
				write.reject(error);
				continue;
			}
			write.resolve(value);
		}
	}

	/** @internal A prepared statement, cached by its SQL text. */
	stmt(sql: string): Database.Statement {
		let statement = this.statements.get(sql);
		if (!statement) {
			if (this.statements.size >= STATEMENT_CACHE) this.statements.clear();
			statement = this.db.prepare(sql);
			this.statements.set(sql, statement);
		}
		return statement;
	}

	async collection<T extends StoredDoc>(spec: ModelSpec): Promise<Collection<T>> {
		this.checkOpen();
		const model = resolveModel(spec);
		const existing = this.collections.get(spec.collection);
		if (existing && existing.model.fingerprint === model.fingerprint) return existing as unknown as Collection<T>;
		const collection = new SqliteCollection<StoredDoc>(this, model);
		collection.ensureSchema();
		this.collections.set(spec.collection, collection);
		return collection as unknown as Collection<T>;
	}

	async batch(ops: WriteOp[]): Promise<void> {
		this.checkOpen();
		if (!Array.isArray(ops)) throw new TypeError("store: batch needs an array of operations");
		const resolved = ops.map((op) => {
			const collection = this.collections.get(op?.collection);
			if (!collection) throw new Error(`store: batch: collection ${JSON.stringify(op?.collection)} was not declared on this store`);
			return { op, collection };
		});
		return this.write(() => {
			for (const { op, collection } of resolved) {
				switch (op.kind) {
					case "insert":
						collection.insertSync(op.doc);
						break;
					case "replace":
						collection.replaceSync(op.doc, op.expectedVersion);
						break;
					case "upsert":
						collection.upsertSync(op.doc);
						break;
					case "delete":
						collection.deleteSync(op.identifier, op.expectedVersion);
						break;
					case "deleteWhere":
						collection.deleteWhereSync(op.filter);
						break;
					default:
						throw new Error(`store: batch: unknown operation ${JSON.stringify((op as { kind?: unknown }).kind)}`);
				}
			}
		});
	}

	async ping(): Promise<boolean> {
		if (this.closed) return false;
		try {
			return this.stmt("SELECT 1 AS ok").get() !== undefined;
		} catch {
			return false;
		}
	}

	async close(): Promise<void> {
		if (this.closed) return;
		this.endRead();
		this.flush(); // writes queued in this turn are committed, not lost
		this.closed = true;
		this.statements.clear();
		this.collections.clear();
		try {
			this.db.pragma("optimize");
		} catch {
			// statistics are an optimisation only
		}
		// The checkpointer lets go of the file first, so this last connection checkpoints and removes the WAL.
		if (this.location !== ":memory:") await walCheckpointer.close(this.location);
		this.db.close();
	}

	/** @internal */
	checkOpen(): void {
		if (this.closed) throw new Error("store: the SQLite store is closed");
	}
}

interface Where {
	sql: string;
	params: Bindable[];
}

class SqliteCollection<T extends StoredDoc> implements Collection<T> {
	readonly spec: ModelSpec;
	readonly model: ResolvedModel;
	private readonly table: string;
	private readonly fts: string | undefined;
	private readonly scalars: ResolvedField[];
	private readonly arrays: ResolvedField[];
	private readonly sql: {
		insert: string;
		update: string;
		current: string;
		get: string;
		delete: string;
		sideInsert: Map<string, string>;
		sideDelete: Map<string, string>;
		ftsInsert?: string;
		ftsInsertAt?: string;
		ftsDelete?: string;
	};

	/** findOne's statements by the field names of a plain-values filter (null: not such a filter). */
	private readonly equalityLookups = new Map<string, { sql: string; fields: ResolvedField[] } | null>();

	constructor(private readonly store: SqliteStore, model: ResolvedModel) {
		this.model = model;
		this.spec = model.spec;
		this.table = q(model.spec.collection);
		this.fts = model.textField ? q(`${model.spec.collection}___fts`) : undefined;
		this.scalars = model.declared.filter((field) => field.kind !== "stringArray");
		this.arrays = model.declared.filter((field) => field.kind === "stringArray");
		const columns = ["identifier", "version", "body", ...(this.fts ? ["_rid"] : []), ...this.scalars.map((field) => q(field.column))];
		this.sql = {
			insert: `INSERT INTO ${this.table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
			update: `UPDATE ${this.table} SET ${["version", "body", ...this.scalars.map((field) => q(field.column))].map((column) => `${column} = ?`).join(", ")} WHERE identifier = ?`,
			current: `SELECT version, ${this.fts ? "_rid" : "NULL"} AS rid FROM ${this.table} WHERE identifier = ?`,
			get: `SELECT version, body FROM ${this.table} WHERE identifier = ?`,
			delete: `DELETE FROM ${this.table} WHERE identifier = ?`,
			sideInsert: new Map(this.arrays.map((field) => [field.name, `INSERT INTO ${this.side(field)} (identifier, value) VALUES (?, ?)`])),
			sideDelete: new Map(this.arrays.map((field) => [field.name, `DELETE FROM ${this.side(field)} WHERE identifier = ?`])),
			ftsInsert: this.fts && `INSERT INTO ${this.fts} (text) VALUES (?)`,
			ftsInsertAt: this.fts && `INSERT INTO ${this.fts} (rowid, text) VALUES (?, ?)`,
			ftsDelete: this.fts && `DELETE FROM ${this.fts} WHERE rowid = ?`,
		};
	}

	private side(field: ResolvedField): string {
		return q(`${this.model.spec.collection}__${field.column}`);
	}

	// -- schema ------------------------------------------------------------------------

	/** Creates the tables and indexes, rebuilding derived data when the spec changed. */
	ensureSchema(): void {
		const db = this.store.db;
		const name = this.model.spec.collection;
		this.store.transaction(() => {
			const meta = db.prepare(`SELECT spec, fingerprint FROM __store_meta WHERE collection = ?`).get(name) as { spec: string; fingerprint: string } | undefined;
			const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
			if (exists && meta?.fingerprint === this.model.fingerprint) {
				this.createTables();
				this.createIndexes();
				return;
			}
			if (exists) this.rebuild(meta ? (JSON.parse(meta.spec) as ModelSpec) : undefined);
			else {
				this.createTables();
				this.createIndexes();
			}
			db.prepare(`INSERT INTO __store_meta (collection, spec, fingerprint) VALUES (?, ?, ?) ON CONFLICT(collection) DO UPDATE SET spec = excluded.spec, fingerprint = excluded.fingerprint`).run(
				name,
				JSON.stringify(this.model.spec),
				this.model.fingerprint,
			);
		});
	}

	private createTables(): void {
		const db = this.store.db;
		const columns = [
			"identifier TEXT PRIMARY KEY NOT NULL",
			"version INTEGER NOT NULL",
			"body TEXT NOT NULL",
			...(this.fts ? ["_rid INTEGER"] : []),
			...this.scalars.map((field) => `${q(field.column)} ${field.kind === "string" ? "TEXT" : field.kind === "number" ? "NUMERIC" : "INTEGER"}${field.caseInsensitive ? " COLLATE NOCASE" : ""}`),
		];
		db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (${columns.join(", ")})`);
		for (const field of this.arrays) {
			const table = `${this.model.spec.collection}__${field.column}`;
			db.exec(
				`CREATE TABLE IF NOT EXISTS ${q(table)} (identifier TEXT NOT NULL, value TEXT${field.caseInsensitive ? " COLLATE NOCASE" : ""} NOT NULL, PRIMARY KEY (identifier, value)) WITHOUT ROWID`,
			);
			db.exec(`CREATE INDEX IF NOT EXISTS ${q(`${table}___by_value`)} ON ${q(table)} (value, identifier)`);
		}
		if (this.fts) {
			db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${this.fts} USING fts5(text, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 0")`);
			// (_rid, identifier): a word query's count and its page's identifiers are read from
			// this index alone, never from the rows (a random table page per match otherwise).
			// Replaces the earlier (_rid) index of files made before it.
			db.exec(`DROP INDEX IF EXISTS ${q(`${this.model.spec.collection}___rid`)}`);
			db.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${q(`${this.model.spec.collection}___rid_identifier`)} ON ${this.table} (_rid, identifier)`);
		}
	}

	private createIndexes(): void {
		const db = this.store.db;
		const collection = this.model.spec.collection;
		for (const index of this.model.spec.indexes ?? []) {
			const fields = index.fields.map((name) => this.model.fields.get(name)!);
			const indexName = q(`${collection}___ix_${index.name}`);
			try {
				const arrays = fields.filter((field) => field.kind === "stringArray");
				if (arrays.length > 0) {
					// A unique index on a stringArray field: no value may belong to two documents.
					// A non-unique one is already served by the side table's (value, identifier) index.
					if (index.unique) db.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${indexName} ON ${this.side(arrays[0])} (value)`);
					const scalars = fields.filter((field) => field.kind !== "stringArray");
					if (!index.unique && scalars.length > 0) {
						db.exec(`CREATE INDEX IF NOT EXISTS ${indexName} ON ${this.table} (${[...scalars.map((field) => q(field.column)), "identifier"].join(", ")})`);
					}
					continue;
				}
				const columns = fields.map((field) => q(field.column));
				if (!index.unique && !fields.some((field) => field.name === "identifier")) columns.push("identifier");
				db.exec(`CREATE ${index.unique ? "UNIQUE " : ""}INDEX IF NOT EXISTS ${indexName} ON ${this.table} (${columns.join(", ")})`);
			} catch (error) {
				throw this.translate(error);
			}
		}
	}

	/** Rebuilds the collection from the stored bodies under the current spec (spec changed). */
	private rebuild(previous: ModelSpec | undefined): void {
		const db = this.store.db;
		const name = this.model.spec.collection;
		if (previous) {
			for (const [field, spec] of Object.entries(previous.fields ?? {})) {
				if (spec?.kind === "stringArray") db.exec(`DROP TABLE IF EXISTS ${q(`${name}__${field.split(".").join("__")}`)}`);
			}
		}
		for (const field of this.arrays) db.exec(`DROP TABLE IF EXISTS ${this.side(field)}`);
		db.exec(`DROP TABLE IF EXISTS ${q(`${name}___fts`)}`);
		const indexes = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).all(name) as Array<{ name: string }>;
		for (const index of indexes) db.exec(`DROP INDEX IF EXISTS ${q(index.name)}`);
		const old = `${name}___old`;
		db.exec(`DROP TABLE IF EXISTS ${q(old)}`);
		db.exec(`ALTER TABLE ${this.table} RENAME TO ${q(old)}`);
		this.createTables();
		const page = db.prepare(`SELECT rowid AS r, identifier, version, body FROM ${q(old)} WHERE rowid > ? ORDER BY rowid LIMIT 1000`);
		let last = -Infinity;
		for (;;) {
			const rows = page.all(last === -Infinity ? -9007199254740991 : last) as Array<{ r: number; identifier: string; version: number; body: string }>;
			if (rows.length === 0) break;
			for (const row of rows) {
				const doc = JSON.parse(row.body) as StoredDoc;
				doc.identifier = row.identifier;
				this.writeNew(doc, row.version);
			}
			last = rows[rows.length - 1].r;
		}
		db.exec(`DROP TABLE ${q(old)}`);
		this.createIndexes();
	}

	// -- errors ------------------------------------------------------------------------

	private translate(error: unknown): unknown {
		// Not `instanceof`: the native addon keeps the error class of the first copy of
		// better-sqlite3 that loaded it (and that copy's realm's Error), so a second copy (a
		// test runner's fresh module registry) sees foreign classes. The code identifies it.
		const code = (error as { code?: unknown } | null)?.code;
		if (code !== "SQLITE_CONSTRAINT_UNIQUE" && code !== "SQLITE_CONSTRAINT_PRIMARYKEY") return error;
		const message = String((error as { message?: unknown }).message ?? "");
		const collection = this.model.spec.collection;
		const match = /constraint failed: (.*)$/.exec(message);
		if (!match) return new DuplicateKey(collection, "unknown");
		const failed = match[1].split(",").map((part) => part.trim());
		const named = /^index '(.*)'$/.exec(failed[0]);
		if (named) {
			const prefix = `${collection}___ix_`;
			return new DuplicateKey(collection, named[1].startsWith(prefix) ? named[1].slice(prefix.length) : named[1]);
		}
		const pairs = failed.map((part) => {
			const dot = part.lastIndexOf(".");
			return { table: part.slice(0, dot), column: part.slice(dot + 1) };
		});
		if (pairs.length === 1 && pairs[0].table === collection && pairs[0].column === "identifier") return new DuplicateKey(collection, "identifier");
		for (const index of this.model.spec.indexes ?? []) {
			if (!index.unique) continue;
			const fields = index.fields.map((name) => this.model.fields.get(name)!);
			const expected = fields.map((field) => (field.kind === "stringArray" ? { table: `${collection}__${field.column}`, column: "value" } : { table: collection, column: field.column }));
			if (expected.length === pairs.length && expected.every((item, i) => item.table === pairs[i].table && item.column === pairs[i].column)) {
				return new DuplicateKey(collection, index.name);
			}
		}
		if (pairs.length === 1 && pairs[0].column === "identifier") return new DuplicateKey(collection, "identifier");
		return new DuplicateKey(collection, failed.join(","));
	}

	// -- synchronous writes (each in a transaction; nested ones become savepoints) -----

	private writeNew(doc: StoredDoc, version: number): T {
		const stored = { ...doc, version } as T;
		const rid = this.sql.ftsInsert ? Number(this.store.stmt(this.sql.ftsInsert).run(textOf(this.model, stored)).lastInsertRowid) : undefined;
		const params: Bindable[] = [doc.identifier, version, JSON.stringify(stored)];
		if (rid !== undefined) params.push(rid);
		for (const field of this.scalars) params.push(bindable(documentValue(field, stored) as string | number | boolean | null));
		this.store.stmt(this.sql.insert).run(params);
		this.writeSide(stored, false);
		return stored;
	}

	private writeSide(doc: StoredDoc, clear: boolean): void {
		for (const field of this.arrays) {
			if (clear) this.store.stmt(this.sql.sideDelete.get(field.name)!).run(doc.identifier);
			const insert = this.store.stmt(this.sql.sideInsert.get(field.name)!);
			for (const value of documentValue(field, doc) as string[]) insert.run(doc.identifier, value);
		}
	}

	private writeOver(doc: StoredDoc, current: CurrentRow): T {
		const version = current.version + 1;
		const stored = { ...doc, version } as T;
		const params: Bindable[] = [version, JSON.stringify(stored)];
		for (const field of this.scalars) params.push(bindable(documentValue(field, stored) as string | number | boolean | null));
		params.push(doc.identifier);
		this.store.stmt(this.sql.update).run(params);
		this.writeSide(stored, true);
		if (this.sql.ftsDelete && this.sql.ftsInsertAt) {
			if (current.rid !== null) {
				this.store.stmt(this.sql.ftsDelete).run(current.rid);
				this.store.stmt(this.sql.ftsInsertAt!).run(current.rid, textOf(this.model, stored));
			} else {
				const rid = Number(this.store.stmt(this.sql.ftsInsert!).run(textOf(this.model, stored)).lastInsertRowid);
				this.store.stmt(`UPDATE ${this.table} SET _rid = ? WHERE identifier = ?`).run(rid, doc.identifier);
			}
		}
		return stored;
	}

	private current(identifier: string): CurrentRow | undefined {
		return this.store.stmt(this.sql.current).get(identifier) as CurrentRow | undefined;
	}

	private removeRow(identifier: string, current: CurrentRow): void {
		this.store.stmt(this.sql.delete).run(identifier);
		for (const field of this.arrays) this.store.stmt(this.sql.sideDelete.get(field.name)!).run(identifier);
		if (this.sql.ftsDelete && current.rid !== null) this.store.stmt(this.sql.ftsDelete).run(current.rid);
	}

	/**
	 * Runs one write in its own transaction, or directly inside the caller's (batch): a
	 * nested savepoint per row would cost a statement journal write each, and the batch
	 * rolls back as a whole anyway.
	 */
	private atomically<R>(fn: () => R): R {
		this.store.checkOpen();
		try {
			return this.store.inWriteTransaction ? fn() : this.store.transaction(fn);
		} catch (error) {
			throw this.translate(error);
		}
	}

	insertSync(doc: T | StoredDoc): T {
		checkDoc(this.model.spec.collection, doc);
		return this.atomically(() => this.writeNew(doc, 1));
	}

	replaceSync(doc: T | StoredDoc, expectedVersion?: number): T {
		checkDoc(this.model.spec.collection, doc);
		return this.atomically(() => {
			const current = this.current(doc.identifier);
			if (!current || (expectedVersion !== undefined && expectedVersion !== null && current.version !== expectedVersion)) {
				throw new StaleVersion(this.model.spec.collection, doc.identifier);
			}
			return this.writeOver(doc, current);
		});
	}

	upsertSync(doc: T | StoredDoc): T {
		checkDoc(this.model.spec.collection, doc);
		return this.atomically(() => {
			const current = this.current(doc.identifier);
			return current ? this.writeOver(doc, current) : this.writeNew(doc, 1);
		});
	}

	deleteSync(identifier: string, expectedVersion?: number): boolean {
		if (typeof identifier !== "string") throw new TypeError("store: identifier must be a string");
		return this.atomically(() => {
			const current = this.current(identifier);
			if (!current) return false;
			if (expectedVersion !== undefined && expectedVersion !== null && current.version !== expectedVersion) {
				throw new StaleVersion(this.model.spec.collection, identifier);
			}
			this.removeRow(identifier, current);
			return true;
		});
	}

	deleteWhereSync(filter: Filter): number {
		const where = this.where(filter, undefined);
		if (!where) return 0;
		return this.atomically(() => {
			const rows = this.store.stmt(`SELECT t.identifier AS identifier, t.version AS version, ${this.fts ? "t._rid" : "NULL"} AS rid FROM ${this.table} t${where.sql}`).all(where.params) as Array<
				CurrentRow & { identifier: string }
			>;
			for (const row of rows) this.removeRow(row.identifier, row);
			return rows.length;
		});
	}

	// -- queries ------------------------------------------------------------------------

	/** WHERE clause (with its leading " WHERE ", or "") for a filter and words; null: matches nothing. */
	private where(filter: Filter | undefined, words: string[] | undefined): Where | null {
		const conditions = parseFilter(this.model, filter);
		const phrases = queryWords(words);
		if (conditions === null || phrases === null) return null;
		const parts: string[] = [];
		const params: Bindable[] = [];
		for (const condition of conditions) {
			const { field } = condition;
			if (field.kind === "stringArray") {
				const side = this.side(field);
				const has = (test: string) => `t.identifier IN (SELECT identifier FROM ${side} WHERE ${test})`;
				switch (condition.op) {
					case "eq":
						if (condition.value === null) parts.push(`NOT EXISTS (SELECT 1 FROM ${side} s WHERE s.identifier = t.identifier)`);
						else {
							parts.push(has("value = ?"));
							params.push(bindable(condition.value));
						}
						break;
					case "in": {
						const any: string[] = [];
						if (condition.values.length > 0) {
							any.push(has("value IN (SELECT value FROM json_each(?))"));
							params.push(JSON.stringify(condition.values));
						}
						if (condition.withNull) any.push(`NOT EXISTS (SELECT 1 FROM ${side} s WHERE s.identifier = t.identifier)`);
						parts.push(any.length === 1 ? any[0] : `(${any.join(" OR ")})`);
						break;
					}
					case "ne":
						if (condition.value === null) parts.push(`EXISTS (SELECT 1 FROM ${side} s WHERE s.identifier = t.identifier)`);
						else {
							parts.push(`t.identifier NOT IN (SELECT identifier FROM ${side} WHERE value = ?)`);
							params.push(bindable(condition.value));
						}
						break;
					default:
						parts.push(has(`value ${condition.op === "lt" ? "<" : condition.op === "lte" ? "<=" : ">="} ?`));
						params.push(bindable(condition.value));
				}
				continue;
			}
			const column = `t.${q(field.column)}`;
			switch (condition.op) {
				case "eq":
					if (condition.value === null) parts.push(`${column} IS NULL`);
					else {
						parts.push(`${column} = ?`);
						params.push(bindable(condition.value));
					}
					break;
				case "in": {
					const any: string[] = [];
					if (condition.values.length === 1) {
						any.push(`${column} = ?`);
						params.push(bindable(condition.values[0]));
					} else if (condition.values.length > 1) {
						any.push(`${column} IN (SELECT value FROM json_each(?))`);
						params.push(JSON.stringify(condition.values));
					}
					if (condition.withNull) any.push(`${column} IS NULL`);
					parts.push(any.length === 1 ? any[0] : `(${any.join(" OR ")})`);
					break;
				}
				case "ne":
					parts.push(`${column} IS NOT ?`);
					params.push(bindable(condition.value));
					break;
				default:
					parts.push(`${column} ${condition.op === "lt" ? "<" : condition.op === "lte" ? "<=" : ">="} ?`);
					params.push(bindable(condition.value));
			}
		}
		if (phrases.length > 0) {
			if (!this.fts) throw new Error(`store: ${this.model.spec.collection} has no textField to search words in`);
			// Every word is one quoted FTS5 string (data, never syntax) with a prefix star.
			const match = phrases.map((tokens) => `"${tokens.join(" ").replace(/"/g, '""')}"*`).join(" AND ");
			parts.push(`t._rid IN (SELECT rowid FROM ${this.fts} WHERE ${this.fts} MATCH ?)`);
			params.push(match);
		}
		return { sql: parts.length > 0 ? ` WHERE ${parts.join(" AND ")}` : "", params };
	}

	private read(identifiers: string[]): T[] {
		const statement = this.store.stmt(this.sql.get);
		const docs: T[] = [];
		for (const identifier of identifiers) {
			const row = statement.get(identifier) as { version: number; body: string } | undefined;
			if (row) docs.push(this.parse(identifier, row));
		}
		return docs;
	}

	private parse(identifier: string, row: { version: number; body: string }): T {
		const doc = JSON.parse(row.body) as T;
		doc.identifier = identifier;
		doc.version = row.version;
		return doc;
	}

	async get(identifier: string): Promise<T | null> {
		this.store.checkOpen();
		if (typeof identifier !== "string") return null;
		const row = this.store.read(() => this.store.stmt(this.sql.get).get(identifier)) as { version: number; body: string } | undefined;
		return row ? this.parse(identifier, row) : null;
	}

	async getMany(identifiers: string[]): Promise<T[]> {
		this.store.checkOpen();
		const unique = [...new Set((identifiers ?? []).filter((identifier) => typeof identifier === "string"))];
		return this.store.read(() => this.read(unique));
	}

	async findOne(filter: Filter): Promise<T | null> {
		const lookup = this.equalityLookup(filter);
		if (!lookup) {
			const [first] = await this.find({ filter, limit: 1 });
			return first ?? null;
		}
		this.store.checkOpen();
		const params = lookup.fields.map((field) => bindable(filterValue(field, (filter as Record<string, string | number | boolean>)[field.name])));
		params.push(1);
		const row = this.store.read(() => this.store.stmt(lookup.sql).get(params)) as { identifier: string; version: number; body: string } | undefined;
		return row ? this.parse(row.identifier, row) : null;
	}

	/**
	 * findOne by plain values of scalar fields (a unique key: the authenticated read, most reads
	 * before a write): the statement find() would build, made once per set of field names
	 * instead of parsing the filter and writing its SQL on every call. Anything else (null, an
	 * operator, an array field, an undeclared field) is find()'s, errors included.
	 */
	private equalityLookup(filter: Filter): { sql: string; fields: ResolvedField[] } | null {
		if (filter === null || typeof filter !== "object" || Array.isArray(filter)) return null;
		const names = Object.keys(filter);
		for (const name of names) {
			const value = (filter as Record<string, unknown>)[name];
			if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") return null;
		}
		const shape = names.join("\u0000");
		let lookup = this.equalityLookups.get(shape);
		if (lookup === undefined) {
			const fields = names.map((name) => this.model.fields.get(name));
			lookup =
				names.length > 0 && fields.every((field) => field !== undefined && field.kind !== "stringArray")
					? {
							fields: fields as ResolvedField[],
							sql: this.firstMatchesSql(` WHERE ${(fields as ResolvedField[]).map((field) => `t.${q(field.column)} = ?`).join(" AND ")}`, orderBy(sortKeys(this.model, undefined))),
						}
					: null;
			// Filter shapes are written in the services' code, a handful per collection.
			if (this.equalityLookups.size < 64) this.equalityLookups.set(shape, lookup);
		}
		return lookup;
	}

	/** The first matches of a WHERE clause (with its leading " WHERE ", or ""), bodies included, in one statement; binds the limit last. */
	private firstMatchesSql(whereSql: string, order: string): string {
		return `SELECT t.identifier AS identifier, t.version AS version, t.body AS body FROM ${this.table} t${whereSql} ORDER BY ${order} LIMIT +?`;
	}

	async find(query: Query): Promise<T[]> {
		this.store.checkOpen();
		const { offset, limit } = pageBounds(query ?? {});
		const where = this.where(query?.filter, query?.words);
		if (!where || limit === 0) return [];
		const keys = sortKeys(this.model, query?.sort);
		const order = orderBy(keys);
		// `LIMIT +? OFFSET +?`, never a bare `LIMIT ?`: SQLite takes a bare bound LIMIT as a
		// planning hint and then re-prepares the statement on every run (half its cost).
		if (offset === 0 && limit === 1) {
			// findOne (a unique key, a first match): one statement, a snapshot by itself. Not for
			// pages: where SQLite must sort the matches (a word query, a filter sorted by another
			// column) one statement carries every match's body through the sort, not just the page's.
			const rows = this.store.read(() => this.store.stmt(this.firstMatchesSql(where.sql, order)).all([...where.params, limit ?? -1])) as Array<{ identifier: string; version: number; body: string }>;
			return rows.map((row) => this.parse(row.identifier, row));
		}
		// Deeper pages: phase 1 walks the (covering) sort index for identifiers only, so the rows
		// skipped by OFFSET are never read; phase 2 reads the page's bodies, in the same snapshot.
		const sql = `SELECT t.identifier AS identifier FROM ${this.table} t${where.sql} ORDER BY ${order} LIMIT +? OFFSET +?`;
		return this.store.read(() => {
			const rows = this.store.stmt(sql).all([...where.params, limit ?? -1, offset]) as Array<{ identifier: string }>;
			return this.read(rows.map((row) => row.identifier));
		});
	}

	async count(query?: Pick<Query, "filter" | "words">): Promise<number> {
		this.store.checkOpen();
		const where = this.where(query?.filter, query?.words);
		if (!where) return 0;
		if (this.fts && query?.words?.length && parseFilter(this.model, query.filter)?.length === 0) {
			// Words alone: every FTS row is one stored row (written and removed in the same
			// transaction), so the FTS index counts them without visiting a row per match.
			const match = where.params[where.params.length - 1];
			return (this.store.read(() => this.store.stmt(`SELECT count(*) AS n FROM ${this.fts} WHERE ${this.fts} MATCH ?`).get(match)) as { n: number }).n;
		}
		const row = this.store.read(() => this.store.stmt(`SELECT count(*) AS n FROM ${this.table} t${where.sql}`).get(where.params)) as { n: number };
		return row.n;
	}

	/**
	 * Pages of PAGE rows, each read synchronously in its own read transaction; the next page
	 * starts strictly after the last (sort values, identifier) seen, so concurrent writes
	 * between pages never make the walk repeat or skip rows that stayed in place.
	 */
	async *iterate(query: Query): AsyncIterable<T> {
		this.store.checkOpen();
		const { offset, limit } = pageBounds(query ?? {});
		const where = this.where(query?.filter, query?.words);
		if (!where || limit === 0) return;
		const keys = sortKeys(this.model, query?.sort);
		const order = orderBy(keys);
		const select = `SELECT ${keys.map((key, i) => `t.${q(key.field.column)} AS k${i}`).join(", ")} FROM ${this.table} t`;
		let remaining = limit ?? Infinity;
		let last: Bindable[] | undefined;
		let first = true;
		while (remaining > 0) {
			const size = Math.min(PAGE, remaining);
			const page = this.store.read(() => {
				let sql: string;
				let params: Bindable[];
				if (last === undefined) {
					sql = `${select}${where.sql} ORDER BY ${order} LIMIT +? OFFSET +?`;
					params = [...where.params, size, first ? offset : 0];
				} else {
					const after = this.after(keys, last);
					sql = `${select}${where.sql ? `${where.sql} AND ` : " WHERE "}(${after.sql}) ORDER BY ${order} LIMIT +?`;
					params = [...where.params, ...after.params, size];
				}
				const rows = this.store.stmt(sql).all(params) as Array<Record<string, Bindable>>;
				const identifierKey = `k${keys.length - 1}`;
				return { rows, docs: this.read(rows.map((row) => row[identifierKey] as string)) };
			});
			first = false;
			if (page.rows.length === 0) return;
			const tail = page.rows[page.rows.length - 1];
			last = keys.map((_, i) => tail[`k${i}`]);
			for (const doc of page.docs) yield doc;
			remaining -= page.rows.length;
			if (page.rows.length < size) return;
		}
	}

	/** Rows strictly after `last` in the sort order (SQLite: NULL is smallest). */
	private after(keys: Array<{ field: ResolvedField; descending: boolean }>, last: Bindable[]): Where {
		const alternatives: string[] = [];
		const params: Bindable[] = [];
		for (let i = 0; i < keys.length; i++) {
			const parts: string[] = [];
			const local: Bindable[] = [];
			for (let j = 0; j < i; j++) {
				parts.push(`t.${q(keys[j].field.column)} IS ?`);
				local.push(last[j]);
			}
			const column = `t.${q(keys[i].field.column)}`;
			const value = last[i];
			if (!keys[i].descending) {
				if (value === null) parts.push(`${column} IS NOT NULL`);
				else {
					parts.push(`${column} > ?`);
					local.push(value);
				}
			} else {
				if (value === null) continue; // nothing sorts after NULL in descending order
				parts.push(`(${column} < ? OR ${column} IS NULL)`);
				local.push(value);
			}
			alternatives.push(`(${parts.join(" AND ")})`);
			params.push(...local);
		}
		return { sql: alternatives.length > 0 ? alternatives.join(" OR ") : "0", params };
	}

	// Single-document writes join the store's group commit, like batches (SqliteStore.write).
	async insert(doc: T): Promise<T> {
		return this.store.write(() => this.insertSync(doc));
	}

	async replace(doc: T, expectedVersion?: number): Promise<T> {
		return this.store.write(() => this.replaceSync(doc, expectedVersion));
	}

	async upsert(doc: T): Promise<T> {
		return this.store.write(() => this.upsertSync(doc));
	}

	async delete(identifier: string, expectedVersion?: number): Promise<boolean> {
		return this.store.write(() => this.deleteSync(identifier, expectedVersion));
	}

	async deleteWhere(filter: Filter): Promise<number> {
		return this.store.write(() => this.deleteWhereSync(filter));
	}
}
