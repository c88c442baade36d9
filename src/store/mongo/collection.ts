/**
 * One MongoDB collection (Collection<T> of ../types.ts) over the layout of ./schema.ts:
 * reads (get, getMany, findOne, find, count, iterate) and writes (insert, replace, upsert,
 * delete, deleteWhere) with optimistic concurrency on `version`, plus the two ways
 * `MongoStore.batch` runs an operation: `apply` (inside a session transaction) and
 * `applyUndoable` (standalone server: records how to undo it). Filters come from ./query.ts.
 */
import type mongoose from "mongoose";
import type { ClientSession } from "mongodb";
import { DuplicateKey, StaleVersion } from "../errors";
import { checkDoc, pageBounds, type ResolvedModel } from "../model";
import type { Collection, Filter, ModelSpec, Query, StoredDoc, WriteOp } from "../types";
import { translate } from "./errors";
import { buildFilter, buildSort, type MongoFilter } from "./query";
import { mongooseSchema, parseRaw, PROJECTION, toRaw, type RawDoc } from "./schema";
import type { MongoStore } from "./store";

const RETRIES = 20;

export class MongoCollection<T extends StoredDoc> implements Collection<T> {
	readonly spec: ModelSpec;
	readonly model: ResolvedModel;
	// Read by ./schema.ts too (hence not private).
	/** @internal */
	readonly mongooseModel: mongoose.Model<RawDoc>;
	/** @internal The same MongoDB collection through the driver, typed with string _ids. */
	readonly native: mongoose.mongo.Collection<RawDoc>;

	constructor(
		/** @internal */ readonly store: MongoStore,
		model: ResolvedModel,
	) {
		this.model = model;
		this.spec = model.spec;
		const connection = store.connection;
		const name = model.spec.collection;
		if (connection.models[name]) connection.deleteModel(name);
		this.mongooseModel = connection.model<RawDoc>(name, mongooseSchema(model), name);
		this.native = store.db().collection<RawDoc>(name);
	}

	// -- reads -------------------------------------------------------------------------

	async get(identifier: string): Promise<T | null> {
		this.store.checkOpen();
		if (typeof identifier !== "string") return null;
		const raw = await this.mongooseModel.findOne({ _id: { $eq: identifier } }, PROJECTION).lean<RawDoc>();
		return raw ? parseRaw<T>(raw) : null;
	}

	async getMany(identifiers: string[]): Promise<T[]> {
		this.store.checkOpen();
		const unique = [...new Set((identifiers ?? []).filter((identifier) => typeof identifier === "string"))];
		if (unique.length === 0) return [];
		const raws = await this.mongooseModel.find({ _id: { $in: unique } }, PROJECTION).lean<RawDoc[]>();
		const byId = new Map(raws.map((raw) => [raw._id, raw]));
		return unique.flatMap((identifier) => {
			const raw = byId.get(identifier);
			return raw ? [parseRaw<T>(raw)] : [];
		});
	}

	async findOne(filter: Filter): Promise<T | null> {
		const [first] = await this.find({ filter, limit: 1 });
		return first ?? null;
	}

	async find(query: Query): Promise<T[]> {
		this.store.checkOpen();
		const { offset, limit } = pageBounds(query ?? {});
		const filter = buildFilter(this.model, query?.filter, query?.words);
		if (!filter || limit === 0) return [];
		let cursor = this.mongooseModel.find(filter, PROJECTION).sort(buildSort(this.model, query)).skip(offset);
		if (limit !== undefined) cursor = cursor.limit(limit);
		const raws = await cursor.lean<RawDoc[]>();
		return raws.map((raw) => parseRaw<T>(raw));
	}

	async count(query?: Pick<Query, "filter" | "words">): Promise<number> {
		this.store.checkOpen();
		const filter = buildFilter(this.model, query?.filter, query?.words);
		if (!filter) return 0;
		return this.mongooseModel.countDocuments(filter);
	}

	async *iterate(query: Query): AsyncIterable<T> {
		this.store.checkOpen();
		const { offset, limit } = pageBounds(query ?? {});
		const filter = buildFilter(this.model, query?.filter, query?.words);
		if (!filter || limit === 0) return;
		let cursor = this.mongooseModel
			.find(filter, PROJECTION)
			.sort(buildSort(this.model, query))
			.skip(offset)
			.batchSize(500);
		if (limit !== undefined) cursor = cursor.limit(limit);
		for await (const raw of cursor.lean<RawDoc>().cursor()) yield parseRaw<T>(raw as RawDoc);
	}

	// -- writes ------------------------------------------------------------------------

	private async current(identifier: string, session?: ClientSession): Promise<RawDoc | null> {
		return this.native.findOne({ _id: { $eq: identifier } }, { session }) as Promise<RawDoc | null>;
	}

	private async insertRaw(doc: StoredDoc, session?: ClientSession): Promise<T> {
		const raw = toRaw(this.model, doc, 1);
		try {
			await this.native.insertOne(raw, { session });
		} catch (error) {
			throw translate(this.model, error);
		}
		return { ...doc, version: 1 } as T;
	}

	/** Replaces when the stored version is still `version`; false when it moved on. */
	private async replaceAt(doc: StoredDoc, version: number, session?: ClientSession): Promise<boolean> {
		try {
			const result = await this.native.replaceOne(
				{ _id: { $eq: doc.identifier }, version: { $eq: version } },
				toRaw(this.model, doc, version + 1),
				{ session },
			);
			return result.matchedCount === 1;
		} catch (error) {
			throw translate(this.model, error);
		}
	}

	private async doInsert(doc: StoredDoc, session?: ClientSession): Promise<T> {
		checkDoc(this.model.spec.collection, doc);
		return this.insertRaw(doc, session);
	}

	private async doReplace(doc: StoredDoc, expectedVersion: number | undefined, session?: ClientSession): Promise<T> {
		checkDoc(this.model.spec.collection, doc);
		const collection = this.model.spec.collection;
		for (let attempt = 0; attempt < RETRIES; attempt++) {
			const current = await this.current(doc.identifier, session);
			if (
				!current ||
				(expectedVersion !== undefined && expectedVersion !== null && current.version !== expectedVersion)
			) {
				throw new StaleVersion(collection, doc.identifier);
			}
			if (await this.replaceAt(doc, current.version, session))
				return { ...doc, version: current.version + 1 } as T;
			if (expectedVersion !== undefined && expectedVersion !== null) break;
		}
		throw new StaleVersion(collection, doc.identifier);
	}

	private async doUpsert(doc: StoredDoc, session?: ClientSession): Promise<T> {
		checkDoc(this.model.spec.collection, doc);
		for (let attempt = 0; attempt < RETRIES; attempt++) {
			const current = await this.current(doc.identifier, session);
			if (current) {
				if (await this.replaceAt(doc, current.version, session))
					return { ...doc, version: current.version + 1 } as T;
				continue;
			}
			try {
				return await this.insertRaw(doc, session);
			} catch (error) {
				// Someone inserted the same identifier meanwhile: replace it on the next turn.
				if (!(error instanceof DuplicateKey && error.index === "identifier")) throw error;
			}
		}
		throw new StaleVersion(this.model.spec.collection, doc.identifier);
	}

	private async doDelete(
		identifier: string,
		expectedVersion: number | undefined,
		session?: ClientSession,
	): Promise<boolean> {
		if (typeof identifier !== "string") throw new TypeError("store: identifier must be a string");
		const filter: MongoFilter = { _id: { $eq: identifier } };
		const checked = expectedVersion !== undefined && expectedVersion !== null;
		if (checked) filter.version = { $eq: expectedVersion };
		const result = await this.native.deleteOne(filter, { session });
		if (result.deletedCount === 1) return true;
		if (checked && (await this.current(identifier, session)))
			throw new StaleVersion(this.model.spec.collection, identifier);
		return false;
	}

	private async doDeleteWhere(filter: Filter, session?: ClientSession): Promise<number> {
		const mongoFilter = buildFilter(this.model, filter, undefined);
		if (!mongoFilter) return 0;
		const result = await this.mongooseModel.deleteMany(mongoFilter, { session });
		return result.deletedCount ?? 0;
	}

	/** @internal One batch operation inside a transaction. */
	async apply(op: WriteOp, session: ClientSession): Promise<void> {
		switch (op.kind) {
			case "insert":
				await this.doInsert(op.doc, session);
				return;
			case "replace":
				await this.doReplace(op.doc, op.expectedVersion, session);
				return;
			case "upsert":
				await this.doUpsert(op.doc, session);
				return;
			case "delete":
				await this.doDelete(op.identifier, op.expectedVersion, session);
				return;
			case "deleteWhere":
				await this.doDeleteWhere(op.filter, session);
				return;
			default:
				throw new Error(`store: batch: unknown operation ${JSON.stringify((op as { kind?: unknown }).kind)}`);
		}
	}

	/** @internal One batch operation without a transaction, recording how to undo it. */
	async applyUndoable(op: WriteOp, undo: Array<() => Promise<unknown>>): Promise<void> {
		const native = this.native;
		const restore = (identifier: string, before: RawDoc | null) => async () => {
			if (before) await native.replaceOne({ _id: { $eq: identifier } }, before, { upsert: true });
			else await native.deleteOne({ _id: { $eq: identifier } });
		};
		switch (op.kind) {
			case "insert": {
				const inserted = await this.doInsert(op.doc);
				undo.push(restore(inserted.identifier, null));
				return;
			}
			case "replace":
			case "upsert": {
				checkDoc(this.model.spec.collection, op.doc);
				const before = await this.current(op.doc.identifier);
				if (op.kind === "replace") await this.doReplace(op.doc, op.expectedVersion);
				else await this.doUpsert(op.doc);
				undo.push(restore(op.doc.identifier, before));
				return;
			}
			case "delete": {
				const before = typeof op.identifier === "string" ? await this.current(op.identifier) : null;
				if ((await this.doDelete(op.identifier, op.expectedVersion)) && before)
					undo.push(restore(op.identifier, before));
				return;
			}
			case "deleteWhere": {
				const filter = buildFilter(this.model, op.filter, undefined);
				if (!filter) return;
				const befores = (await this.mongooseModel.find(filter).lean<RawDoc[]>()) as RawDoc[];
				if (befores.length === 0) return;
				await native.deleteMany({ _id: { $in: befores.map((before) => before._id) } });
				undo.push(async () => {
					for (const before of befores)
						await native.replaceOne({ _id: { $eq: before._id } }, before, { upsert: true });
				});
				return;
			}
			default:
				throw new Error(`store: batch: unknown operation ${JSON.stringify((op as { kind?: unknown }).kind)}`);
		}
	}

	async insert(doc: T): Promise<T> {
		this.store.checkOpen();
		return this.doInsert(doc);
	}

	async replace(doc: T, expectedVersion?: number): Promise<T> {
		this.store.checkOpen();
		return this.doReplace(doc, expectedVersion);
	}

	async upsert(doc: T): Promise<T> {
		this.store.checkOpen();
		return this.doUpsert(doc);
	}

	async delete(identifier: string, expectedVersion?: number): Promise<boolean> {
		this.store.checkOpen();
		return this.doDelete(identifier, expectedVersion);
	}

	async deleteWhere(filter: Filter): Promise<number> {
		this.store.checkOpen();
		return this.doDeleteWhere(filter);
	}
}
