/**
 * One SQLite collection (Collection<T> of ../types.ts) over the layout of ./schema.ts:
 * reads (get, getMany, findOne, find, count, iterate), run in the store's read transaction
 * of the turn, and writes (insert, replace, upsert, delete, deleteWhere), which join the
 * store's group commit and run as the *Sync methods (also what `SqliteStore.batch` runs).
 */
import { StaleVersion } from "../errors";
import {
	checkDoc,
	documentValue,
	filterValue,
	pageBounds,
	parseFilter,
	sortKeys,
	textOf,
	type ResolvedField,
	type ResolvedModel,
} from "../model";
import type { Collection, Filter, ModelSpec, Query, StoredDoc } from "../types";
import { translate } from "./errors";
import { afterClause, firstMatchesSql, orderBy, whereClause } from "./query";
import { sideTable } from "./schema";
import { bindable, q, type Bindable } from "./sql";
import type { SqliteStore } from "./store";

/** Rows per page of `iterate`. */
const PAGE = 500;

interface CurrentRow {
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
			update: `UPDATE ${this.table} SET ${["version", "body", ...this.scalars.map((field) => q(field.column))].map((column) => `${column} = ?`).join(", ")} WHERE identifier = ?`,
			current: `SELECT version, ${this.fts ? "_rid" : "NULL"} AS rid FROM ${this.table} WHERE identifier = ?`,
			get: `SELECT version, body FROM ${this.table} WHERE identifier = ?`,
			delete: `DELETE FROM ${this.table} WHERE identifier = ?`,
			sideInsert: new Map(
				this.arrays.map((field) => [
					field.name,
					`INSERT INTO ${this.side(field)} (identifier, value) VALUES (?, ?)`,
				]),
			),
			sideDelete: new Map(
				this.arrays.map((field) => [field.name, `DELETE FROM ${this.side(field)} WHERE identifier = ?`]),
			),
			ftsInsert: this.fts && `INSERT INTO ${this.fts} (text) VALUES (?)`,
			ftsInsertAt: this.fts && `INSERT INTO ${this.fts} (rowid, text) VALUES (?, ?)`,
			ftsDelete: this.fts && `DELETE FROM ${this.fts} WHERE rowid = ?`,
		};
	}

	private side(field: ResolvedField): string {
		return sideTable(this.model, field);
	}

	// -- synchronous writes (each in a transaction; nested ones become savepoints) -----

	/** @internal Inserts a new row (also how ./schema.ts rebuilds a collection). */
	writeNew(doc: StoredDoc, version: number): T {
		const stored = { ...doc, version } as T;
		const rid = this.sql.ftsInsert
			? Number(this.store.stmt(this.sql.ftsInsert).run(textOf(this.model, stored)).lastInsertRowid)
			: undefined;
		const params: Bindable[] = [doc.identifier, version, JSON.stringify(stored)];
		if (rid !== undefined) params.push(rid);
		for (const field of this.scalars)
			params.push(bindable(documentValue(field, stored) as string | number | boolean | null));
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
		for (const field of this.scalars)
			params.push(bindable(documentValue(field, stored) as string | number | boolean | null));
		params.push(doc.identifier);
		this.store.stmt(this.sql.update).run(params);
		this.writeSide(stored, true);
		if (this.sql.ftsDelete && this.sql.ftsInsertAt) {
			if (current.rid !== null) {
				this.store.stmt(this.sql.ftsDelete).run(current.rid);
				this.store.stmt(this.sql.ftsInsertAt!).run(current.rid, textOf(this.model, stored));
			} else {
				const rid = Number(
					this.store.stmt(this.sql.ftsInsert!).run(textOf(this.model, stored)).lastInsertRowid,
				);
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
			throw translate(this.model, error);
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
			if (
				!current ||
				(expectedVersion !== undefined && expectedVersion !== null && current.version !== expectedVersion)
			) {
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
		const where = whereClause(this.model, this.fts, filter, undefined);
		if (!where) return 0;
		return this.atomically(() => {
			const rows = this.store
				.stmt(
					`SELECT t.identifier AS identifier, t.version AS version, ${this.fts ? "t._rid" : "NULL"} AS rid FROM ${this.table} t${where.sql}`,
				)
				.all(where.params) as Array<CurrentRow & { identifier: string }>;
			for (const row of rows) this.removeRow(row.identifier, row);
			return rows.length;
		});
	}

	// -- reads ------------------------------------------------------------------------

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
		const row = this.store.read(() => this.store.stmt(this.sql.get).get(identifier)) as
			{ version: number; body: string } | undefined;
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
		const params = lookup.fields.map((field) =>
			bindable(filterValue(field, (filter as Record<string, string | number | boolean>)[field.name])),
		);
		params.push(1);
		const row = this.store.read(() => this.store.stmt(lookup.sql).get(params)) as
			{ identifier: string; version: number; body: string } | undefined;
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
							sql: firstMatchesSql(
								this.table,
								` WHERE ${(fields as ResolvedField[]).map((field) => `t.${q(field.column)} = ?`).join(" AND ")}`,
								orderBy(sortKeys(this.model, undefined)),
							),
						}
					: null;
			// Filter shapes are written in the services' code, a handful per collection.
			if (this.equalityLookups.size < 64) this.equalityLookups.set(shape, lookup);
		}
		return lookup;
	}

	async find(query: Query): Promise<T[]> {
		this.store.checkOpen();
		const { offset, limit } = pageBounds(query ?? {});
		const where = whereClause(this.model, this.fts, query?.filter, query?.words);
		if (!where || limit === 0) return [];
		const keys = sortKeys(this.model, query?.sort);
		const order = orderBy(keys);
		// `LIMIT +? OFFSET +?`, never a bare `LIMIT ?`: SQLite takes a bare bound LIMIT as a
		// planning hint and then re-prepares the statement on every run (half its cost).
		if (offset === 0 && limit === 1) {
			// findOne (a unique key, a first match): one statement, a snapshot by itself. Not for
			// pages: where SQLite must sort the matches (a word query, a filter sorted by another
			// column) one statement carries every match's body through the sort, not just the page's.
			const rows = this.store.read(() =>
				this.store.stmt(firstMatchesSql(this.table, where.sql, order)).all([...where.params, limit ?? -1]),
			) as Array<{
				identifier: string;
				version: number;
				body: string;
			}>;
			return rows.map((row) => this.parse(row.identifier, row));
		}
		// Deeper pages: phase 1 walks the (covering) sort index for identifiers only, so the rows
		// skipped by OFFSET are never read; phase 2 reads the page's bodies, in the same snapshot.
		const sql = `SELECT t.identifier AS identifier FROM ${this.table} t${where.sql} ORDER BY ${order} LIMIT +? OFFSET +?`;
		return this.store.read(() => {
			const rows = this.store.stmt(sql).all([...where.params, limit ?? -1, offset]) as Array<{
				identifier: string;
			}>;
			return this.read(rows.map((row) => row.identifier));
		});
	}

	async count(query?: Pick<Query, "filter" | "words">): Promise<number> {
		this.store.checkOpen();
		const where = whereClause(this.model, this.fts, query?.filter, query?.words);
		if (!where) return 0;
		if (this.fts && query?.words?.length && parseFilter(this.model, query.filter)?.length === 0) {
			// Words alone: every FTS row is one stored row (written and removed in the same
			// transaction), so the FTS index counts them without visiting a row per match.
			const match = where.params[where.params.length - 1];
			return (
				this.store.read(() =>
					this.store.stmt(`SELECT count(*) AS n FROM ${this.fts} WHERE ${this.fts} MATCH ?`).get(match),
				) as { n: number }
			).n;
		}
		const row = this.store.read(() =>
			this.store.stmt(`SELECT count(*) AS n FROM ${this.table} t${where.sql}`).get(where.params),
		) as { n: number };
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
		const where = whereClause(this.model, this.fts, query?.filter, query?.words);
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
					const after = afterClause(keys, last);
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
