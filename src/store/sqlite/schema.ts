/**
 * The SQLite layout of a collection, created from its ModelSpec, and its migration.
 *
 * Each collection is a table
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
 * different spec than the one the file was built with (its fingerprint, ../model.ts), its
 * table, side tables, FTS table and indexes are rebuilt from the stored bodies (in one
 * transaction, versions kept).
 */
import type Database from "better-sqlite3";
import type { ResolvedField, ResolvedModel } from "../model";
import type { ModelSpec, StoredDoc } from "../types";
import type { SqliteCollection } from "./collection";
import { translate } from "./errors";
import { q } from "./sql";

/** Creates the table recording each collection's declared spec and its fingerprint. */
export function createMetaTable(db: Database.Database): void {
	db.exec(
		`CREATE TABLE IF NOT EXISTS __store_meta (collection TEXT PRIMARY KEY NOT NULL, spec TEXT NOT NULL, fingerprint TEXT NOT NULL)`,
	);
}

/** The (quoted) side table of a stringArray field. */
export function sideTable(model: ResolvedModel, field: ResolvedField): string {
	return q(`${model.spec.collection}__${field.column}`);
}

// Below, `c` is the collection whose layout is made (its table names and fields, its store).

/** Creates the tables and indexes, rebuilding derived data when the spec changed. */
export function ensureSchema<T extends StoredDoc>(c: SqliteCollection<T>): void {
	const db = c.store.db;
	const name = c.model.spec.collection;
	c.store.transaction(() => {
		const meta = db.prepare(`SELECT spec, fingerprint FROM __store_meta WHERE collection = ?`).get(name) as
			{ spec: string; fingerprint: string } | undefined;
		const exists =
			db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
		if (exists && meta?.fingerprint === c.model.fingerprint) {
			createTables(c);
			createIndexes(c);
			return;
		}
		if (exists) rebuild(c, meta ? (JSON.parse(meta.spec) as ModelSpec) : undefined);
		else {
			createTables(c);
			createIndexes(c);
		}
		db.prepare(
			`INSERT INTO __store_meta (collection, spec, fingerprint) VALUES (?, ?, ?) ON CONFLICT(collection) DO UPDATE SET spec = excluded.spec, fingerprint = excluded.fingerprint`,
		).run(name, JSON.stringify(c.model.spec), c.model.fingerprint);
	});
}

function createTables<T extends StoredDoc>(c: SqliteCollection<T>): void {
	const db = c.store.db;
	const columns = [
		"identifier TEXT PRIMARY KEY NOT NULL",
		"version INTEGER NOT NULL",
		"body TEXT NOT NULL",
		...(c.fts ? ["_rid INTEGER"] : []),
		...c.scalars.map(
			(field) =>
				`${q(field.column)} ${field.kind === "string" ? "TEXT" : field.kind === "number" ? "NUMERIC" : "INTEGER"}${field.caseInsensitive ? " COLLATE NOCASE" : ""}`,
		),
	];
	db.exec(`CREATE TABLE IF NOT EXISTS ${c.table} (${columns.join(", ")})`);
	for (const field of c.arrays) {
		const table = `${c.model.spec.collection}__${field.column}`;
		db.exec(
			`CREATE TABLE IF NOT EXISTS ${q(table)} (identifier TEXT NOT NULL, value TEXT${field.caseInsensitive ? " COLLATE NOCASE" : ""} NOT NULL, PRIMARY KEY (identifier, value)) WITHOUT ROWID`,
		);
		db.exec(`CREATE INDEX IF NOT EXISTS ${q(`${table}___by_value`)} ON ${q(table)} (value, identifier)`);
	}
	if (c.fts) {
		db.exec(
			`CREATE VIRTUAL TABLE IF NOT EXISTS ${c.fts} USING fts5(text, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 0")`,
		);
		// (_rid, identifier): a word query's count and its page's identifiers are read from
		// this index alone, never from the rows (a random table page per match otherwise).
		// Replaces the earlier (_rid) index of files made before it.
		db.exec(`DROP INDEX IF EXISTS ${q(`${c.model.spec.collection}___rid`)}`);
		db.exec(
			`CREATE UNIQUE INDEX IF NOT EXISTS ${q(`${c.model.spec.collection}___rid_identifier`)} ON ${c.table} (_rid, identifier)`,
		);
	}
}

function createIndexes<T extends StoredDoc>(c: SqliteCollection<T>): void {
	const db = c.store.db;
	const collection = c.model.spec.collection;
	for (const index of c.model.spec.indexes ?? []) {
		const fields = index.fields.map((name) => c.model.fields.get(name)!);
		const indexName = q(`${collection}___ix_${index.name}`);
		try {
			const arrays = fields.filter((field) => field.kind === "stringArray");
			if (arrays.length > 0) {
				// A unique index on a stringArray field: no value may belong to two documents.
				// A non-unique one is already served by the side table's (value, identifier) index.
				if (index.unique)
					db.exec(
						`CREATE UNIQUE INDEX IF NOT EXISTS ${indexName} ON ${sideTable(c.model, arrays[0])} (value)`,
					);
				const scalars = fields.filter((field) => field.kind !== "stringArray");
				if (!index.unique && scalars.length > 0) {
					db.exec(
						`CREATE INDEX IF NOT EXISTS ${indexName} ON ${c.table} (${[...scalars.map((field) => q(field.column)), "identifier"].join(", ")})`,
					);
				}
				continue;
			}
			const columns = fields.map((field) => q(field.column));
			if (!index.unique && !fields.some((field) => field.name === "identifier")) columns.push("identifier");
			db.exec(
				`CREATE ${index.unique ? "UNIQUE " : ""}INDEX IF NOT EXISTS ${indexName} ON ${c.table} (${columns.join(", ")})`,
			);
		} catch (error) {
			throw translate(c.model, error);
		}
	}
}

/** Rebuilds the collection from the stored bodies under the current spec (spec changed). */
function rebuild<T extends StoredDoc>(c: SqliteCollection<T>, previous: ModelSpec | undefined): void {
	const db = c.store.db;
	const name = c.model.spec.collection;
	if (previous) {
		for (const [field, spec] of Object.entries(previous.fields ?? {})) {
			if (spec?.kind === "stringArray")
				db.exec(`DROP TABLE IF EXISTS ${q(`${name}__${field.split(".").join("__")}`)}`);
		}
	}
	for (const field of c.arrays) db.exec(`DROP TABLE IF EXISTS ${sideTable(c.model, field)}`);
	db.exec(`DROP TABLE IF EXISTS ${q(`${name}___fts`)}`);
	const indexes = db
		.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`)
		.all(name) as Array<{ name: string }>;
	for (const index of indexes) db.exec(`DROP INDEX IF EXISTS ${q(index.name)}`);
	const old = `${name}___old`;
	db.exec(`DROP TABLE IF EXISTS ${q(old)}`);
	db.exec(`ALTER TABLE ${c.table} RENAME TO ${q(old)}`);
	createTables(c);
	const page = db.prepare(
		`SELECT rowid AS r, identifier, version, body FROM ${q(old)} WHERE rowid > ? ORDER BY rowid LIMIT 1000`,
	);
	let last = -Infinity;
	for (;;) {
		const rows = page.all(last === -Infinity ? -9007199254740991 : last) as Array<{
			r: number;
			identifier: string;
			version: number;
			body: string;
		}>;
		if (rows.length === 0) break;
		for (const row of rows) {
			const doc = JSON.parse(row.body) as StoredDoc;
			doc.identifier = row.identifier;
			c.writeRow(doc, row.version);
		}
		last = rows[rows.length - 1].r;
	}
	db.exec(`DROP TABLE ${q(old)}`);
	createIndexes(c);
}
