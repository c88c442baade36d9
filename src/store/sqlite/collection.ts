/**
 * One SQLite collection (Collection<T> of ../types.ts) over the layout of ./schema.ts.
 * Reads are plain statements. Every write, alone or in a batch, is `apply` inside the
 * store's transaction (SqliteStore.batch): a row with its array values and words is written
 * by `writeRow` and removed by `removeRow`, and a replace is the one, then the other.
 */
import { StaleVersion } from "../errors";
import {
	checkDoc,
	documentValue,
	pageBounds,
	parseFilter,
	sortKeys,
	textOf,
	type ResolvedField,
	type ResolvedModel,
} from "../model";
import type { Collection, Filter, ModelSpec, Query, Scalar, StoredDoc, WriteOp } from "../types";
import { translate } from "./errors";
import { afterClause, orderBy, whereClause } from "./query";
import { sideTable } from "./schema";
import { bindable, q, type Bindable } from "./sql";
import type { SqliteStore } from "./store";

/** Rows per page of `iterate`. */
const PAGE = 500;

/** A stored row as reads select it. */
interface BodyRow {
	identifier: string;
	version: number;
	body: string;
}

/** A stored row as a write finds it: its version, and its words' rowid in the FTS table. */
interface CurrentRow {
	identifier: string;
	version: number;
	rid: number | null;
}

export class SqliteCollection<T extends StoredDoc> implements Collection<T> {
	readonly spec: ModelSpec;
	readonly model: ResolvedModel;
	// Read by ./schema.ts too (hence not private).
	/** @internal The quoted table name. */
	readonly table: string;
	/** @internal The quoted FTS5 table name, when the model has a textField. */
	readonly fts: string | undefined;
	/** @internal Declared fields stored as columns / in side tables. */
	readonly scalars: ResolvedField[];
	/** @internal */
	readonly arrays: ResolvedField[];
	private readonly sql: {
		insert: string;
		current: string;
		get: string;
		delete: string;
		sides: Array<{ field: ResolvedField; insert: string; delete: string }>;
		ftsInsert: string;
		ftsDelete: string;
	};

	constructor(
		/** @internal */ readonly store: SqliteStore,
		model: ResolvedModel,
	) {
		this.model = model;
		this.spec = model.spec;
		this.table = q(model.spec.collection);
		this.fts = model.textField ? q(`${model.spec.collection}___fts`) : undefined;
		this.scalars = model.declared.filter((field) => field.kind !== "stringArray");
		this.arrays = model.declared.filter((field) => field.kind === "stringArray");
		const columns = [
			"identifier",
			"version",
			"body",
			...(this.fts ? ["_rid"] : []),
			...this.scalars.map((field) => q(field.column)),
		];
		this.sql = {
			insert: `INSERT INTO ${this.table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
			current: `SELECT identifier, version, ${this.fts ? "_rid" : "NULL"} AS rid FROM ${this.table} WHERE identifier = ?`,
			get: `SELECT identifier, version, body FROM ${this.table} WHERE identifier = ?`,
			delete: `DELETE FROM ${this.table} WHERE identifier = ?`,
			sides: this.arrays.map((field) => ({
				field,
				insert: `INSERT INTO ${sideTable(model, field)} (identifier, value) VALUES (?, ?)`,
				delete: `DELETE FROM ${sideTable(model, field)} WHERE identifier = ?`,
			})),
			ftsInsert: `INSERT INTO ${this.fts} (text) VALUES (?)`,
			ftsDelete: `DELETE FROM ${this.fts} WHERE rowid = ?`,
		};
	}

	// -- writes (inside the store's transaction) ----------------------------------------

	/** @internal One write of a batch: the new document, whether one was deleted, or how many. */
	apply(op: WriteOp): StoredDoc | boolean | number {
		const collection = this.model.spec.collection;
		try {
			switch (op.kind) {
				case "insert":
					checkDoc(collection, op.doc);
					return this.writeRow(op.doc, 1);
				case "replace": {
					checkDoc(collection, op.doc);
					const current = this.store.stmt(this.sql.current).get(op.doc.identifier) as CurrentRow | undefined;
					const expected = op.expectedVersion ?? current?.version;
					if (!current || current.version !== expected) throw new StaleVersion(collection, op.doc.identifier);
					this.removeRow(current);
					return this.writeRow(op.doc, current.version + 1);
				}
				case "upsert": {
					checkDoc(collection, op.doc);
					const current = this.store.stmt(this.sql.current).get(op.doc.identifier) as CurrentRow | undefined;
					if (current) this.removeRow(current);
					return this.writeRow(op.doc, (current?.version ?? 0) + 1);
				}
				case "delete": {
					if (typeof op.identifier !== "string") throw new TypeError("store: identifier must be a string");
					const current = this.store.stmt(this.sql.current).get(op.identifier) as CurrentRow | undefined;
					if (!current) return false;
					const expected = op.expectedVersion ?? current.version;
					if (current.version !== expected) throw new StaleVersion(collection, op.identifier);
					this.removeRow(current);
					return true;
				}
				case "deleteWhere": {
					const where = whereClause(this.model, this.fts, op.filter, undefined);
					if (!where) return 0;
					const select = `SELECT t.identifier AS identifier, t.version AS version, ${this.fts ? "t._rid" : "NULL"} AS rid FROM ${this.table} t${where.sql}`;
					const rows = this.store.stmt(select).all(where.params) as CurrentRow[];
					for (const row of rows) this.removeRow(row);
					return rows.length;
				}
				default:
					throw new Error(
						`store: batch: unknown operation ${JSON.stringify((op as { kind?: unknown }).kind)}`,
					);
			}
		} catch (error) {
			throw translate(this.model, error);
		}
	}

	/** @internal Writes `doc` as a new row at `version`, with its array values and words (also how ./schema.ts rebuilds). */
	writeRow(doc: StoredDoc, version: number): StoredDoc {
		const stored = { ...doc, version };
		const params: Bindable[] = [doc.identifier, version, JSON.stringify(stored)];
		if (this.fts)
			params.push(Number(this.store.stmt(this.sql.ftsInsert).run(textOf(this.model, stored)).lastInsertRowid));
		for (const field of this.scalars) params.push(bindable(documentValue(field, stored) as Scalar));
		this.store.stmt(this.sql.insert).run(params);
		for (const side of this.sql.sides) {
			const insert = this.store.stmt(side.insert);
			for (const value of documentValue(side.field, stored) as string[]) insert.run(doc.identifier, value);
		}
		return stored;
	}

	private removeRow(row: CurrentRow): void {
		this.store.stmt(this.sql.delete).run(row.identifier);
		for (const side of this.sql.sides) this.store.stmt(side.delete).run(row.identifier);
		if (this.fts && row.rid !== null) this.store.stmt(this.sql.ftsDelete).run(row.rid);
	}

	async insert(doc: T): Promise<T> {
		const [stored] = await this.store.batch([{ kind: "insert", collection: this.spec.collection, doc }]);
		return stored as T;
	}

	async replace(doc: T, expectedVersion?: number): Promise<T> {
		const [stored] = await this.store.batch([
			{ kind: "replace", collection: this.spec.collection, doc, expectedVersion },
		]);
		return stored as T;
	}

	async upsert(doc: T): Promise<T> {
		const [stored] = await this.store.batch([{ kind: "upsert", collection: this.spec.collection, doc }]);
		return stored as T;
	}

	async delete(identifier: string, expectedVersion?: number): Promise<boolean> {
		const [deleted] = await this.store.batch([
			{ kind: "delete", collection: this.spec.collection, identifier, expectedVersion },
		]);
		return deleted as boolean;
	}

	async deleteWhere(filter: Filter): Promise<number> {
		const [count] = await this.store.batch([{ kind: "deleteWhere", collection: this.spec.collection, filter }]);
		return count as number;
	}

	// -- reads ------------------------------------------------------------------------

	/** Stored rows as documents: the body, with the identifier and version of the row. */
	private docsOf(rows: BodyRow[]): T[] {
		const docs: T[] = [];
		for (const row of rows) {
			const doc = JSON.parse(row.body) as T;
			doc.identifier = row.identifier;
			doc.version = row.version;
			docs.push(doc);
		}
		return docs;
	}

	async get(identifier: string): Promise<T | null> {
		const [doc] = await this.getMany([identifier]);
		return doc ?? null;
	}

	/** The documents of these identifiers, each once, in their order; unknown ones left out. */
	async getMany(identifiers: string[]): Promise<T[]> {
		const statement = this.store.stmt(this.sql.get);
		const rows: BodyRow[] = [];
		for (const identifier of new Set(identifiers ?? [])) {
			const row = typeof identifier === "string" ? (statement.get(identifier) as BodyRow | undefined) : undefined;
			if (row) rows.push(row);
		}
		return this.docsOf(rows);
	}

	async findOne(filter: Filter): Promise<T | null> {
		const [first] = await this.find({ filter, limit: 1 });
		return first ?? null;
	}

	async find(query: Query): Promise<T[]> {
		const { offset, limit } = pageBounds(query ?? {});
		const where = whereClause(this.model, this.fts, query?.filter, query?.words);
		if (!where || limit === 0) return [];
		const order = orderBy(sortKeys(this.model, query?.sort));
		// One statement (a snapshot by itself) in two steps: the page's identifiers, found through
		// the indexes alone, so rows skipped by OFFSET and matches sorted out are never read; then
		// those rows. `LIMIT +?`, never a bare `LIMIT ?`: SQLite takes a bare bound LIMIT as a
		// planning hint and prepares the statement again on every run.
		const sql = `SELECT t.identifier AS identifier, t.version AS version, t.body AS body FROM ${this.table} t WHERE t.identifier IN (SELECT t.identifier FROM ${this.table} t${where.sql} ORDER BY ${order} LIMIT +? OFFSET +?) ORDER BY ${order}`;
		return this.docsOf(this.store.stmt(sql).all([...where.params, limit ?? -1, offset]) as BodyRow[]);
	}

	async count(query?: Pick<Query, "filter" | "words">): Promise<number> {
		const where = whereClause(this.model, this.fts, query?.filter, query?.words);
		if (!where) return 0;
		if (this.fts && query?.words?.length && parseFilter(this.model, query.filter)?.length === 0) {
			// Words alone: every FTS row is one stored row (written and removed in the same
			// transaction), so the FTS index counts them without visiting a row per match.
			const match = where.params[where.params.length - 1];
			return (
				this.store.stmt(`SELECT count(*) AS n FROM ${this.fts} WHERE ${this.fts} MATCH ?`).get(match) as {
					n: number;
				}
			).n;
		}
		return (
			this.store.stmt(`SELECT count(*) AS n FROM ${this.table} t${where.sql}`).get(where.params) as { n: number }
		).n;
	}

	/**
	 * Pages of PAGE rows: the page's sort values and identifiers, then its documents. The next
	 * page starts strictly after the last (sort values, identifier) seen, so concurrent writes
	 * between pages never make the walk repeat or skip rows that stayed in place.
	 */
	async *iterate(query: Query): AsyncIterable<T> {
		const { offset, limit } = pageBounds(query ?? {});
		const where = whereClause(this.model, this.fts, query?.filter, query?.words);
		if (!where || limit === 0) return;
		const keys = sortKeys(this.model, query?.sort);
		const order = orderBy(keys);
		const select = `SELECT ${keys.map((key, i) => `t.${q(key.field.column)} AS k${i}`).join(", ")} FROM ${this.table} t`;
		let remaining = limit ?? Infinity;
		let last: Bindable[] | undefined;
		while (remaining > 0) {
			const size = Math.min(PAGE, remaining);
			let rows: Array<Record<string, Bindable>>;
			if (last === undefined) {
				rows = this.store
					.stmt(`${select}${where.sql} ORDER BY ${order} LIMIT +? OFFSET +?`)
					.all([...where.params, size, offset]) as typeof rows;
			} else {
				const after = afterClause(keys, last);
				rows = this.store
					.stmt(
						`${select}${where.sql ? `${where.sql} AND ` : " WHERE "}(${after.sql}) ORDER BY ${order} LIMIT +?`,
					)
					.all([...where.params, ...after.params, size]) as typeof rows;
			}
			if (rows.length === 0) return;
			const tail = rows[rows.length - 1];
			last = keys.map((_, i) => tail[`k${i}`]);
			for (const doc of await this.getMany(rows.map((row) => row[`k${keys.length - 1}`] as string))) yield doc;
			remaining -= rows.length;
			if (rows.length < size) return;
		}
	}
}
