/**
 * The embedded store: SQLite through better-sqlite3 (architecture "Storage"), one database
 * file per owning service. This file holds the connection and what all its collections
 * share: pragmas, prepared statements, transactions, `batch` (every write runs there) and
 * `close`. Collections are ./collection.ts, their tables ./schema.ts, query SQL ./query.ts.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { BACKSTOP_PAGES, walCheckpointer } from "../checkpointer";
import { resolveModel } from "../model";
import type { Collection, ModelSpec, Store, StoredDoc, StoreUsage, WriteOp } from "../types";
import { SqliteCollection } from "./collection";
import { createMetaTable, ensureSchema } from "./schema";

const STATEMENT_CACHE = 1000;
const CLOSED = "store: the SQLite store is closed";

/**
 * Processes that open one new file at once (every process started together on one DATA_DIR)
 * race to switch it to WAL; SQLite answers that race SQLITE_BUSY without waiting on its busy
 * timeout, so the switch is tried again for a few seconds.
 */
function enableWal(db: Database.Database): void {
	const deadline = Date.now() + 5000;
	for (;;) {
		try {
			db.pragma("journal_mode = WAL");
			return;
		} catch (error) {
			if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw error;
			Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
		}
	}
}

export class SqliteStore implements Store {
	readonly kind = "sqlite";
	/** Where the data lives (file path or ":memory:"), for logs. */
	readonly location: string;
	/** @internal */
	readonly db: Database.Database;
	private readonly statements = new Map<string, Database.Statement>();
	private readonly collections = new Map<string, SqliteCollection<StoredDoc>>();
	private closed = false;

	constructor(file: string) {
		this.location = file === ":memory:" || file === "" ? ":memory:" : path.resolve(file);
		if (this.location !== ":memory:") fs.mkdirSync(path.dirname(this.location), { recursive: true });
		this.db = new Database(this.location === ":memory:" ? ":memory:" : this.location);
		enableWal(this.db);
		this.db.pragma("synchronous = NORMAL");
		this.db.pragma("busy_timeout = 5000");
		this.db.pragma("foreign_keys = OFF");
		this.db.pragma("temp_store = MEMORY");
		if (this.location !== ":memory:") {
			// Checkpoints run on the checkpointer's thread; this connection's own is only a backstop.
			this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
			walCheckpointer.open(this.location);
		}
		createMetaTable(this.db);
	}

	/**
	 * @internal Runs `work` in one transaction (a savepoint when one is open already), begun
	 * IMMEDIATE: a transaction that read first and then writes would be refused at once
	 * (SQLITE_BUSY, no busy wait) if another process sharing the file wrote in between; taking
	 * the write lock first waits instead.
	 */
	transaction<R>(work: () => R): R {
		if (this.closed) throw new Error(CLOSED);
		return this.db.transaction(work).immediate();
	}

	/** @internal A prepared statement, kept by its SQL text; refused once the store is closed. */
	stmt(sql: string): Database.Statement {
		if (this.closed) throw new Error(CLOSED);
		let statement = this.statements.get(sql);
		if (!statement) {
			if (this.statements.size >= STATEMENT_CACHE) this.statements.clear();
			statement = this.db.prepare(sql);
			this.statements.set(sql, statement);
		}
		return statement;
	}

	async collection<T extends StoredDoc>(spec: ModelSpec): Promise<Collection<T>> {
		if (this.closed) throw new Error(CLOSED);
		const model = resolveModel(spec);
		const existing = this.collections.get(spec.collection);
		if (existing && existing.model.fingerprint === model.fingerprint) return existing as unknown as Collection<T>;
		const collection = new SqliteCollection<StoredDoc>(this, model);
		ensureSchema(collection);
		this.collections.set(spec.collection, collection);
		return collection as unknown as Collection<T>;
	}

	/**
	 * Every write of the store runs here (a single-document write is a batch of one): all of `ops`
	 * in one transaction, committed before it resolves, so a write that was answered survives the
	 * process being killed, and one that failed left nothing. Resolves to what each write
	 * answered (SqliteCollection.apply).
	 */
	async batch(ops: WriteOp[]): Promise<unknown[]> {
		return this.transaction(() => {
			const answers: unknown[] = [];
			for (const op of ops) {
				// An undeclared collection fails the whole batch: the transaction undoes the writes before it.
				const collection = this.collections.get(op?.collection);
				if (!collection)
					throw new Error(
						`store: batch: collection ${JSON.stringify(op?.collection)} was not declared on this store`,
					);
				answers.push(collection.apply(op));
			}
			return answers;
		});
	}

	async usage(): Promise<StoreUsage | null> {
		if (this.closed) return null;
		const pages =
			Number(this.db.pragma("page_count", { simple: true })) *
			Number(this.db.pragma("page_size", { simple: true }));
		if (this.location === ":memory:")
			return { sizeBytes: pages, filesystemFreeBytes: null, filesystemSizeBytes: null };
		const wal = await fs.promises.stat(`${this.location}-wal`).then(
			(stat) => stat.size,
			() => 0,
		);
		const disk = await fs.promises.statfs(path.dirname(this.location));
		return {
			sizeBytes: pages + wal,
			filesystemFreeBytes: disk.bavail * disk.bsize,
			filesystemSizeBytes: disk.blocks * disk.bsize,
		};
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
}
