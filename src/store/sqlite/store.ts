/**
 * The embedded store: SQLite through better-sqlite3 (architecture "Storage"), one database
 * file per owning service. This file holds the connection and what is shared by all its
 * collections: pragmas, the statement cache, transactions, the one read transaction per
 * event-loop turn (`read`), group commit (`write`/`flush`), `batch` and `close`.
 * Collections are ./collection.ts, their tables ./schema.ts, query SQL ./query.ts.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { BACKSTOP_PAGES, walCheckpointer } from "../checkpointer";
import { resolveBatch, resolveModel } from "../model";
import type { Collection, ModelSpec, Store, StoredDoc, StoreUsage, WriteOp } from "../types";
import { SqliteCollection } from "./collection";
import { createMetaTable, ensureSchema } from "./schema";

const STATEMENT_CACHE = 1000;

interface QueuedWrite {
	work: () => unknown;
	resolve: (value: unknown) => void;
	reject: (error: unknown) => void;
}

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
		enableWal(this.db);
		this.db.pragma("synchronous = NORMAL");
		this.db.pragma("busy_timeout = 5000");
		this.db.pragma("foreign_keys = OFF");
		this.db.pragma("temp_store = MEMORY");
		// BEGIN IMMEDIATE: a transaction that read first and then writes would be refused at once (SQLITE_BUSY, no
		// busy wait) if another process sharing the file wrote in between; taking the write lock first waits instead.
		this.transactional = this.db.transaction((work: () => unknown) => work()).immediate;
		this.beginRead = this.db.prepare("BEGIN");
		this.commitRead = this.db.prepare("COMMIT");
		if (this.location !== ":memory:") {
			// Checkpoints run on the checkpointer's thread; this connection's own is only a backstop.
			this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
			walCheckpointer.open(this.location);
		}
		createMetaTable(this.db);
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
	 * of its page reads: most of a unique-key read. A read in a shared transaction sees the
	 * store as of the turn's first read, never older than the last write this process
	 * acknowledged: writes end it first.
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
	 * every page it dirtied to the WAL: an add dirties dozens (the row, its indexes, FTS,
	 * claims, outboxes), many of them the same last pages of append-only indexes. One commit
	 * per turn writes each shared page once and pays the commit's fixed cost once
	 * (docs/performance.md lists it among the decisions made for speed).
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
		ensureSchema(collection);
		this.collections.set(spec.collection, collection);
		return collection as unknown as Collection<T>;
	}

	async batch(ops: WriteOp[]): Promise<void> {
		this.checkOpen();
		const resolved = resolveBatch(ops, this.collections);
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
						throw new Error(
							`store: batch: unknown operation ${JSON.stringify((op as { kind?: unknown }).kind)}`,
						);
				}
			}
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
