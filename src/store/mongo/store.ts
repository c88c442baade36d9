/**
 * MongoDB store through mongoose 8 (architecture "Storage"), used when MONGO_URI is set.
 * This file holds the connection and what is shared by all its collections: `collection`
 * (declaring one), `batch`, `ping` and `close`. Collections are ./collection.ts, their
 * layout and indexes ./schema.ts, filters and sorts ./query.ts, error mapping ./errors.ts.
 *
 * batch(): inside a session transaction when the server supports transactions (replica set
 * or mongos). On a standalone server it applies the operations in order and, when one
 * fails, undoes the applied ones in reverse order from before-images (best effort: other
 * clients may observe the intermediate state, and an undo can fail if someone else wrote
 * the same document meanwhile).
 */
import mongoose from "mongoose";
import { resolveBatch, resolveModel } from "../model";
import type { Collection, ModelSpec, Store, StoredDoc, StoreUsage, WriteOp } from "../types";
import { MongoCollection } from "./collection";
import { ensureSchema } from "./schema";

/** Redacts credentials from a connection string for logs. */
export function redactUri(uri: string): string {
	return uri.replace(/\/\/([^@/]*)@/, "//***@");
}

export class MongoStore implements Store {
	readonly kind = "mongodb";
	readonly location: string;
	/** @internal */
	readonly connection: mongoose.Connection;
	private readonly collections = new Map<string, MongoCollection<StoredDoc>>();
	private transactions: Promise<boolean> | undefined;
	private closed = false;

	private constructor(connection: mongoose.Connection, uri: string) {
		this.connection = connection;
		this.location = redactUri(uri);
	}

	/** Connects (the database is the one named in the URI). */
	static async connect(uri: string, options: mongoose.ConnectOptions = {}): Promise<MongoStore> {
		const connection = mongoose.createConnection(uri, { autoIndex: false, autoCreate: false, ...options });
		await connection.asPromise();
		return new MongoStore(connection, uri);
	}

	async collection<T extends StoredDoc>(spec: ModelSpec): Promise<Collection<T>> {
		this.checkOpen();
		const model = resolveModel(spec);
		const existing = this.collections.get(spec.collection);
		if (existing && existing.model.fingerprint === model.fingerprint) return existing as unknown as Collection<T>;
		const collection = new MongoCollection<StoredDoc>(this, model);
		await ensureSchema(collection);
		this.collections.set(spec.collection, collection);
		return collection as unknown as Collection<T>;
	}

	/** Replica set members and mongos accept transactions; a standalone server does not. */
	private supportsTransactions(): Promise<boolean> {
		if (!this.transactions) {
			this.transactions = (async () => {
				try {
					const hello = await this.db().admin().command({ hello: 1 });
					return typeof hello.setName === "string" || hello.msg === "isdbgrid";
				} catch {
					return false;
				}
			})();
		}
		return this.transactions;
	}

	async batch(ops: WriteOp[]): Promise<void> {
		this.checkOpen();
		const resolved = resolveBatch(ops, this.collections);
		if (resolved.length === 0) return;
		if (await this.supportsTransactions()) {
			await this.connection.transaction(async (session) => {
				for (const { op, collection } of resolved) await collection.apply(op, session);
			});
			return;
		}
		const undo: Array<() => Promise<unknown>> = [];
		try {
			for (const { op, collection } of resolved) await collection.applyUndoable(op, undo);
		} catch (error) {
			for (const step of undo.reverse()) {
				try {
					await step();
				} catch {
					// Best effort (documented above); the original error is what the caller needs.
				}
			}
			throw error;
		}
	}

	/** dbStats: the database's storage, and (MongoDB 4.4+) its filesystem's use and size. */
	async usage(): Promise<StoreUsage | null> {
		if (this.closed) return null;
		const stats = await this.db().command({ dbStats: 1 });
		const total = typeof stats.fsTotalSize === "number" ? stats.fsTotalSize : null;
		const used = typeof stats.fsUsedSize === "number" ? stats.fsUsedSize : null;
		return {
			sizeBytes: Number(stats.storageSize ?? 0) + Number(stats.indexSize ?? 0),
			filesystemFreeBytes: total !== null && used !== null ? total - used : null,
			filesystemSizeBytes: total,
		};
	}

	async ping(): Promise<boolean> {
		if (this.closed) return false;
		try {
			const result = await this.db().command({ ping: 1 });
			return result?.ok === 1;
		} catch {
			return false;
		}
	}

	async close(): Promise<void> {
		if (this.closed) return;
		this.closed = true;
		this.collections.clear();
		await this.connection.close();
	}

	/** @internal */
	db(): NonNullable<mongoose.Connection["db"]> {
		const db = this.connection.db;
		if (!db) throw new Error("store: MongoDB connection is not open");
		return db;
	}

	/** @internal */
	checkOpen(): void {
		if (this.closed) throw new Error("store: the MongoDB store is closed");
	}
}
