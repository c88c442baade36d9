/**
 * WAL checkpoints off the event loop, for every SQLite store file of the process.
 *
 * In WAL mode a commit appends pages to the -wal file; a checkpoint copies them back into
 * the database file and fsyncs it. SQLite runs that checkpoint inside the commit that
 * crossed 1,000 WAL pages, on the connection that committed: here, on the event loop, so
 * every few dozen writes one request paid a copy of thousands of pages and an fsync (about
 * half the cost of a participant add).
 *
 * One worker thread (one V8 isolate for the whole process, not one per store) holds a
 * second connection to each open store file and runs a PASSIVE checkpoint on each every
 * `intervalMs`: it never blocks the event loop's reads or writes, and SQLite restarts the
 * WAL from its beginning at the next commit after a complete one. The stores' own
 * connections keep an automatic checkpoint as a backstop at a much larger WAL
 * (BACKSTOP_PAGES), so if this worker stops or falls behind the WAL still cannot grow
 * without bound. Durability and crash safety are SQLite's own: a checkpoint from another
 * connection is an ordinary checkpoint.
 */
import { Worker } from "node:worker_threads";

/** WAL pages after which a store's own connection checkpoints anyway (~40 MB at 4 KiB pages). */
export const BACKSTOP_PAGES = 10_000;
const INTERVAL_MS = 200;

// Plain JavaScript evaluated in the worker (no build step, the same under ts-jest and dist/).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const open = new Map();
function checkpointAll() {
	for (const [file, db] of open) {
		try {
			db.pragma("wal_checkpoint(PASSIVE)");
		} catch (error) {
			parentPort.postMessage({ kind: "error", file, message: String(error && error.message || error) });
		}
	}
}
const timer = setInterval(checkpointAll, workerData.intervalMs);
parentPort.on("message", (message) => {
	if (message.kind === "open") {
		if (!open.has(message.file)) {
			try {
				const db = new Database(message.file, { fileMustExist: true });
				db.pragma("busy_timeout = 1000");
				open.set(message.file, db);
			} catch (error) {
				parentPort.postMessage({ kind: "error", file: message.file, message: String(error && error.message || error) });
			}
		}
	} else if (message.kind === "close") {
		const db = open.get(message.file);
		open.delete(message.file);
		try { if (db) db.close(); } catch {}
		parentPort.postMessage({ kind: "closed", id: message.id });
	} else if (message.kind === "stop") {
		clearInterval(timer);
		for (const db of open.values()) { try { db.close(); } catch {} }
		open.clear();
		parentPort.close();
	}
});
`;

type WorkerMessage = { kind: "error"; file: string; message: string } | { kind: "closed"; id: number };

class Checkpointer {
	private worker: Worker | null = null;
	private readonly files = new Set<string>();
	private readonly closing = new Map<number, () => void>();
	private nextId = 1;
	/** The last error per file, for diagnostics (a failed checkpoint is retried next interval). */
	readonly errors = new Map<string, string>();

	/** Starts checkpointing `file` (an absolute path, in WAL mode). */
	open(file: string): void {
		if (this.files.has(file)) return;
		this.files.add(file);
		if (this.worker) this.worker.postMessage({ kind: "open", file });
		else this.start();
	}

	/** Stops checkpointing `file` and closes the worker's connection to it. */
	async close(file: string): Promise<void> {
		if (!this.files.delete(file) || !this.worker) return;
		const worker = this.worker;
		const id = this.nextId++;
		await new Promise<void>((resolve) => {
			this.closing.set(id, resolve);
			worker.postMessage({ kind: "close", file, id });
		});
		if (this.files.size === 0 && this.worker === worker) {
			this.worker = null;
			worker.postMessage({ kind: "stop" });
		}
	}

	private start(): Worker {
		if (this.worker) return this.worker;
		const worker = new Worker(WORKER_SOURCE, {
			eval: true,
			workerData: { driver: require.resolve("better-sqlite3"), intervalMs: INTERVAL_MS },
		});
		// Never what keeps a process alive; a store's close() still waits for its own file.
		worker.unref();
		worker.on("message", (message: WorkerMessage) => {
			if (message.kind === "error") this.errors.set(message.file, message.message);
			else this.closing.get(message.id)?.();
		});
		const gone = () => {
			if (this.worker === worker) this.worker = null;
			for (const resolve of this.closing.values()) resolve();
			this.closing.clear();
		};
		worker.on("error", gone);
		worker.on("exit", gone);
		this.worker = worker;
		for (const file of this.files) worker.postMessage({ kind: "open", file });
		return worker;
	}
}

/** The process's one checkpointer. */
export const walCheckpointer = new Checkpointer();
