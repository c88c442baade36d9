/**
 * MongoDB store through mongoose 8 (architecture "Storage"), used when MONGO_URI is set.
 *
 * Document layout (one mongoose model per collection, built from the ModelSpec):
 *   _id        the identifier
 *   version    incremented by the store on every replace (optimistic concurrency)
 *   body       the whole document as a JSON string, so that client-supplied keys such as
 *              `$where` or `a.b` are data, never operators or paths
 *   <field>    each declared field, top level (dots of a nested field name become `__`)
 *   _lc_<field> the Unicode-lowercased value of a caseInsensitive field: filters, sorts and
 *              indexes use this path
 *   _words     the lowercased words of the textField (same tokenizer rule as SQLite's FTS5
 *              unicode61), indexed; Query.words → `$all` of anchored, escaped `^word` regexes
 *
 * Filters are built only from the typed Query (values checked to be scalars and always
 * wrapped in `$eq` / `$in` / ...), never from client objects.
 *
 * Unique indexes are partial (only documents where every indexed field has a value), so
 * that, as in SQLite, several documents may lack an optional unique field.
 *
 * batch(): inside a session transaction when the server supports transactions (replica set
 * or mongos). On a standalone server it applies the operations in order and, when one
 * fails, undoes the applied ones in reverse order from before-images (best effort: other
 * clients may observe the intermediate state, and an undo can fail if someone else wrote
 * the same document meanwhile).
 */
import mongoose from "mongoose";
import type { ClientSession } from "mongodb";
import { DuplicateKey, StaleVersion } from "./errors";
import type { Collection, Filter, ModelSpec, Query, Store, StoredDoc, WriteOp } from "./types";
import { checkDoc, documentValue, pageBounds, parseFilter, queryWords, resolveModel, sortKeys, textOf, textTokens, type ResolvedField, type ResolvedModel } from "./model";

interface RawDoc {
	_id: string;
	version: number;
	body: string;
	[path: string]: unknown;
}

type MongoFilter = Record<string, unknown>;

const META = "__store_meta";
const PROJECTION = { _id: 1, version: 1, body: 1 } as const;
const RETRIES = 20;

function escapeRegex(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

function isDuplicate(error: unknown): error is { code: number; message: string; keyPattern?: Record<string, unknown> } {
	if (!error || typeof error !== "object") return false;
	const candidate = error as { code?: unknown; writeErrors?: Array<{ code?: unknown }> };
	return candidate.code === 11000 || candidate.code === 11001 || (Array.isArray(candidate.writeErrors) && candidate.writeErrors.some((item) => item?.code === 11000));
}

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
		await collection.ensureSchema();
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
		if (!Array.isArray(ops)) throw new TypeError("store: batch needs an array of operations");
		const resolved = ops.map((op) => {
			const collection = this.collections.get(op?.collection);
			if (!collection) throw new Error(`store: batch: collection ${JSON.stringify(op?.collection)} was not declared on this store`);
			return { op, collection };
		});
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

class MongoCollection<T extends StoredDoc> implements Collection<T> {
	readonly spec: ModelSpec;
	readonly model: ResolvedModel;
	private readonly mongooseModel: mongoose.Model<RawDoc>;
	/** The same MongoDB collection through the driver, typed with string _ids. */
	private readonly native: mongoose.mongo.Collection<RawDoc>;

	constructor(private readonly store: MongoStore, model: ResolvedModel) {
		this.model = model;
		this.spec = model.spec;
		const connection = store.connection;
		const name = model.spec.collection;
		if (connection.models[name]) connection.deleteModel(name);
		this.mongooseModel = connection.model<RawDoc>(name, this.schema(), name);
		this.native = store.db().collection<RawDoc>(name);
	}

	/** Path a declared field is filtered, sorted and indexed on. */
	private path(field: ResolvedField): string {
		if (field.name === "identifier") return "_id";
		if (field.name === "version") return "version";
		return field.caseInsensitive ? `_lc_${field.column}` : field.column;
	}

	private schema(): mongoose.Schema<RawDoc> {
		const typeOf = (field: ResolvedField): unknown => {
			switch (field.kind) {
				case "string":
					return { type: String, default: null };
				case "number":
					return { type: Number, default: null };
				case "boolean":
					return { type: Boolean, default: null };
				case "stringArray":
					return { type: [String], default: [] };
			}
		};
		const definition: Record<string, unknown> = {
			_id: { type: String, required: true },
			version: { type: Number, required: true },
			body: { type: String, required: true },
		};
		for (const field of this.model.declared) {
			definition[field.column] = typeOf(field);
			if (field.caseInsensitive) definition[`_lc_${field.column}`] = typeOf(field);
		}
		if (this.model.textField) definition._words = { type: [String], default: [] };
		const schema = new mongoose.Schema<RawDoc>(definition as mongoose.SchemaDefinition<RawDoc>, {
			collection: this.model.spec.collection,
			versionKey: false,
			autoIndex: false,
			autoCreate: false,
			minimize: false,
			id: false,
			strict: true,
		});
		for (const index of this.model.spec.indexes ?? []) {
			const fields = index.fields.map((name) => this.model.fields.get(name)!);
			if (fields.length === 1 && fields[0].name === "identifier") continue; // _id is unique already
			const keys: Record<string, 1> = {};
			for (const field of fields) keys[this.path(field)] = 1;
			if (index.unique) {
				const present: Record<string, unknown> = {};
				for (const field of fields) {
					present[this.path(field)] = { $type: field.kind === "number" ? "number" : field.kind === "boolean" ? "bool" : "string" };
				}
				schema.index(keys, { name: index.name, unique: true, partialFilterExpression: present });
			} else {
				// The tie-breaker joins the index so that sorted pages walk it.
				if (!("_id" in keys)) keys._id = 1;
				schema.index(keys, { name: index.name });
			}
		}
		if (this.model.textField) schema.index({ _words: 1 }, { name: "_words_" });
		return schema;
	}

	/** Creates the collection and its indexes; recomputes derived paths when the spec changed. */
	async ensureSchema(): Promise<void> {
		const name = this.model.spec.collection;
		try {
			await this.mongooseModel.createCollection();
		} catch (error) {
			if ((error as { code?: unknown })?.code !== 48) throw error; // NamespaceExists
		}
		const meta = this.store.db().collection<{ _id: string; fingerprint: string; spec: string }>(META);
		const recorded = await meta.findOne({ _id: { $eq: name } });
		const stale = recorded ? recorded.fingerprint !== this.model.fingerprint : (await this.native.estimatedDocumentCount()) > 0;
		if (stale) {
			// Old indexes may use old paths or rules: drop them, recompute every derived path.
			await this.native.dropIndexes().catch(() => undefined);
			const cursor = this.native.find({}, { projection: PROJECTION, batchSize: 500 });
			let writes: mongoose.mongo.AnyBulkWriteOperation<RawDoc>[] = [];
			for await (const raw of cursor) {
				const doc = this.parse(raw as unknown as RawDoc);
				writes.push({ replaceOne: { filter: { _id: { $eq: doc.identifier } }, replacement: this.raw(doc, doc.version ?? 1) } });
				if (writes.length >= 500) {
					await this.native.bulkWrite(writes, { ordered: false });
					writes = [];
				}
			}
			if (writes.length > 0) await this.native.bulkWrite(writes, { ordered: false });
		}
		try {
			await this.mongooseModel.syncIndexes();
		} catch (error) {
			throw this.translate(error);
		}
		await meta.updateOne(
			{ _id: { $eq: name } },
			{ $set: { fingerprint: this.model.fingerprint, spec: JSON.stringify(this.model.spec) } },
			{ upsert: true },
		);
	}

	// -- mapping -----------------------------------------------------------------------

	/** The stored shape of a document (body as JSON, declared fields and shadows at top level). */
	private raw(doc: StoredDoc, version: number): RawDoc {
		const stored = { ...doc, version };
		const raw: RawDoc = { _id: doc.identifier, version, body: JSON.stringify(stored) };
		for (const field of this.model.declared) {
			const value = documentValue(field, stored);
			if (field.caseInsensitive) {
				// documentValue folds case-insensitive values; keep the original beside the shadow.
				const original = documentValue({ ...field, caseInsensitive: false }, stored);
				raw[field.column] = original;
				raw[`_lc_${field.column}`] = value;
			} else raw[field.column] = value;
		}
		if (this.model.textField) raw._words = [...new Set(textTokens(textOf(this.model, stored)))];
		return raw;
	}

	private parse(raw: Pick<RawDoc, "_id" | "version" | "body">): T {
		const doc = JSON.parse(raw.body) as T;
		doc.identifier = raw._id;
		doc.version = raw.version;
		return doc;
	}

	private translate(error: unknown): unknown {
		if (!isDuplicate(error)) return error;
		const collection = this.model.spec.collection;
		const message = String((error as { message?: unknown }).message ?? "");
		const named = /index: (\S+) dup key/.exec(message);
		if (named) {
			if (named[1] === "_id_") return new DuplicateKey(collection, "identifier");
			return new DuplicateKey(collection, named[1]);
		}
		const pattern = (error as { keyPattern?: Record<string, unknown> }).keyPattern;
		if (pattern) {
			const paths = Object.keys(pattern);
			if (paths.length === 1 && paths[0] === "_id") return new DuplicateKey(collection, "identifier");
			for (const index of this.model.spec.indexes ?? []) {
				const expected = index.fields.map((name) => this.path(this.model.fields.get(name)!));
				if (index.unique && expected.length === paths.length && expected.every((path, i) => path === paths[i])) return new DuplicateKey(collection, index.name);
			}
		}
		return new DuplicateKey(collection, "unknown");
	}

	/** A mongo filter from the typed filter and words; null when nothing can match. */
	private filter(filter: Filter | undefined, words: string[] | undefined): MongoFilter | null {
		const conditions = parseFilter(this.model, filter);
		const phrases = queryWords(words);
		if (conditions === null || phrases === null) return null;
		const and: MongoFilter[] = [];
		for (const condition of conditions) {
			const path = this.path(condition.field);
			const array = condition.field.kind === "stringArray";
			switch (condition.op) {
				case "eq":
					and.push(array && condition.value === null ? { [path]: { $size: 0 } } : { [path]: { $eq: condition.value } });
					break;
				case "in": {
					const any: MongoFilter[] = [];
					if (condition.values.length > 0) any.push({ [path]: { $in: condition.values } });
					if (condition.withNull) any.push(array ? { [path]: { $size: 0 } } : { [path]: { $eq: null } });
					and.push(any.length === 1 ? any[0] : { $or: any });
					break;
				}
				case "ne":
					and.push(array && condition.value === null ? { [`${path}.0`]: { $exists: true } } : { [path]: { $ne: condition.value } });
					break;
				case "lt":
					and.push({ [path]: { $lt: condition.value } });
					break;
				case "lte":
					and.push({ [path]: { $lte: condition.value } });
					break;
				case "gte":
					and.push({ [path]: { $gte: condition.value } });
					break;
			}
		}
		if (phrases.length > 0) {
			if (!this.model.textField) throw new Error(`store: ${this.model.spec.collection} has no textField to search words in`);
			const patterns: RegExp[] = [];
			for (const tokens of phrases) {
				tokens.forEach((token, i) => patterns.push(new RegExp(i === tokens.length - 1 ? `^${escapeRegex(token)}` : `^${escapeRegex(token)}$`)));
			}
			and.push({ _words: { $all: patterns } });
		}
		return and.length === 0 ? {} : and.length === 1 ? and[0] : { $and: and };
	}

	private sort(query: Query | undefined): Record<string, 1 | -1> {
		const sort: Record<string, 1 | -1> = {};
		for (const key of sortKeys(this.model, query?.sort)) sort[this.path(key.field)] = key.descending ? -1 : 1;
		return sort;
	}

	// -- reads -------------------------------------------------------------------------

	async get(identifier: string): Promise<T | null> {
		this.store.checkOpen();
		if (typeof identifier !== "string") return null;
		const raw = await this.mongooseModel.findOne({ _id: { $eq: identifier } }, PROJECTION).lean<RawDoc>();
		return raw ? this.parse(raw) : null;
	}

	async getMany(identifiers: string[]): Promise<T[]> {
		this.store.checkOpen();
		const unique = [...new Set((identifiers ?? []).filter((identifier) => typeof identifier === "string"))];
		if (unique.length === 0) return [];
		const raws = await this.mongooseModel.find({ _id: { $in: unique } }, PROJECTION).lean<RawDoc[]>();
		const byId = new Map(raws.map((raw) => [raw._id, raw]));
		return unique.flatMap((identifier) => {
			const raw = byId.get(identifier);
			return raw ? [this.parse(raw)] : [];
		});
	}

	async findOne(filter: Filter): Promise<T | null> {
		const [first] = await this.find({ filter, limit: 1 });
		return first ?? null;
	}

	async find(query: Query): Promise<T[]> {
		this.store.checkOpen();
		const { offset, limit } = pageBounds(query ?? {});
		const filter = this.filter(query?.filter, query?.words);
		if (!filter || limit === 0) return [];
		let cursor = this.mongooseModel.find(filter, PROJECTION).sort(this.sort(query)).skip(offset);
		if (limit !== undefined) cursor = cursor.limit(limit);
		const raws = await cursor.lean<RawDoc[]>();
		return raws.map((raw) => this.parse(raw));
	}

	async count(query?: Pick<Query, "filter" | "words">): Promise<number> {
		this.store.checkOpen();
		const filter = this.filter(query?.filter, query?.words);
		if (!filter) return 0;
		return this.mongooseModel.countDocuments(filter);
	}

	async *iterate(query: Query): AsyncIterable<T> {
		this.store.checkOpen();
		const { offset, limit } = pageBounds(query ?? {});
		const filter = this.filter(query?.filter, query?.words);
		if (!filter || limit === 0) return;
		let cursor = this.mongooseModel.find(filter, PROJECTION).sort(this.sort(query)).skip(offset).batchSize(500);
		if (limit !== undefined) cursor = cursor.limit(limit);
		for await (const raw of cursor.lean<RawDoc>().cursor()) yield this.parse(raw as RawDoc);
	}

	// -- writes ------------------------------------------------------------------------

	private async current(identifier: string, session?: ClientSession): Promise<RawDoc | null> {
		return this.native.findOne({ _id: { $eq: identifier } }, { session }) as Promise<RawDoc | null>;
	}

	private async insertRaw(doc: StoredDoc, session?: ClientSession): Promise<T> {
		const raw = this.raw(doc, 1);
		try {
			await this.native.insertOne(raw, { session });
		} catch (error) {
			throw this.translate(error);
		}
		return { ...doc, version: 1 } as T;
	}

	/** Replaces when the stored version is still `version`; false when it moved on. */
	private async replaceAt(doc: StoredDoc, version: number, session?: ClientSession): Promise<boolean> {
		try {
			const result = await this.native.replaceOne({ _id: { $eq: doc.identifier }, version: { $eq: version } }, this.raw(doc, version + 1), { session });
			return result.matchedCount === 1;
		} catch (error) {
			throw this.translate(error);
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
			if (!current || (expectedVersion !== undefined && expectedVersion !== null && current.version !== expectedVersion)) {
				throw new StaleVersion(collection, doc.identifier);
			}
			if (await this.replaceAt(doc, current.version, session)) return { ...doc, version: current.version + 1 } as T;
			if (expectedVersion !== undefined && expectedVersion !== null) break;
		}
		throw new StaleVersion(collection, doc.identifier);
	}

	private async doUpsert(doc: StoredDoc, session?: ClientSession): Promise<T> {
		checkDoc(this.model.spec.collection, doc);
		for (let attempt = 0; attempt < RETRIES; attempt++) {
			const current = await this.current(doc.identifier, session);
			if (current) {
				if (await this.replaceAt(doc, current.version, session)) return { ...doc, version: current.version + 1 } as T;
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

	private async doDelete(identifier: string, expectedVersion: number | undefined, session?: ClientSession): Promise<boolean> {
		if (typeof identifier !== "string") throw new TypeError("store: identifier must be a string");
		const filter: MongoFilter = { _id: { $eq: identifier } };
		const checked = expectedVersion !== undefined && expectedVersion !== null;
		if (checked) filter.version = { $eq: expectedVersion };
		const result = await this.native.deleteOne(filter, { session });
		if (result.deletedCount === 1) return true;
		if (checked && (await this.current(identifier, session))) throw new StaleVersion(this.model.spec.collection, identifier);
		return false;
	}

	private async doDeleteWhere(filter: Filter, session?: ClientSession): Promise<number> {
		const mongoFilter = this.filter(filter, undefined);
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
				if ((await this.doDelete(op.identifier, op.expectedVersion)) && before) undo.push(restore(op.identifier, before));
				return;
			}
			case "deleteWhere": {
				const filter = this.filter(op.filter, undefined);
				if (!filter) return;
				const befores = (await this.mongooseModel.find(filter).lean<RawDoc[]>()) as RawDoc[];
				if (befores.length === 0) return;
				await native.deleteMany({ _id: { $in: befores.map((before) => before._id) } });
				undo.push(async () => {
					for (const before of befores) await native.replaceOne({ _id: { $eq: before._id } }, before, { upsert: true });
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
