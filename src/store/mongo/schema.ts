/**
 * The MongoDB layout of a collection, created from its ModelSpec, and its migration.
 *
 * Document layout (one mongoose model per collection, built from the ModelSpec):
 *   _id        the identifier
 *   version    incremented by the store on every replace (optimistic concurrency)
 *   body       the whole document as a JSON string, so that client-supplied keys such as
 *              `$where` or `a.b` are data, never operators or paths
 *   <field>    each declared field, top level (dots of a nested field name become `__`)
 *   _lc_<field> the Unicode-lowercased value of a caseInsensitive field: filters, sorts and
 *              indexes use this path (./query.ts)
 *   _words     the lowercased words of the textField (same tokenizer rule as SQLite's FTS5
 *              unicode61), indexed; Query.words → `$all` of anchored, escaped `^word` regexes
 *
 * Unique indexes are partial (only documents where every indexed field has a value), so
 * that, as in SQLite, several documents may lack an optional unique field.
 *
 * The declared spec is recorded in `__store_meta`; when a collection was built with a
 * different spec (its fingerprint, ../model.ts), or holds documents but no record, its
 * indexes are dropped and every derived path is recomputed from the stored bodies.
 */
import mongoose from "mongoose";
import { documentValue, textOf, textTokens, type ResolvedField, type ResolvedModel } from "../model";
import type { StoredDoc } from "../types";
import type { MongoCollection } from "./collection";
import { translate } from "./errors";
import { fieldPath } from "./query";

export interface RawDoc {
	_id: string;
	version: number;
	body: string;
	[path: string]: unknown;
}

const META = "__store_meta";
/** What reads fetch: the identifier, the version and the JSON body. */
export const PROJECTION = { _id: 1, version: 1, body: 1 } as const;

/** The mongoose schema of a collection: its paths and declared indexes. */
export function mongooseSchema(model: ResolvedModel): mongoose.Schema<RawDoc> {
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
	for (const field of model.declared) {
		definition[field.column] = typeOf(field);
		if (field.caseInsensitive) definition[`_lc_${field.column}`] = typeOf(field);
	}
	if (model.textField) definition._words = { type: [String], default: [] };
	const schema = new mongoose.Schema<RawDoc>(definition as mongoose.SchemaDefinition<RawDoc>, {
		collection: model.spec.collection,
		versionKey: false,
		autoIndex: false,
		autoCreate: false,
		minimize: false,
		id: false,
		strict: true,
	});
	for (const index of model.spec.indexes ?? []) {
		const fields = index.fields.map((name) => model.fields.get(name)!);
		if (fields.length === 1 && fields[0].name === "identifier") continue; // _id is unique already
		const keys: Record<string, 1> = {};
		for (const field of fields) keys[fieldPath(field)] = 1;
		if (index.unique) {
			const present: Record<string, unknown> = {};
			for (const field of fields) {
				present[fieldPath(field)] = {
					$type: field.kind === "number" ? "number" : field.kind === "boolean" ? "bool" : "string",
				};
			}
			schema.index(keys, { name: index.name, unique: true, partialFilterExpression: present });
		} else {
			// The tie-breaker joins the index so that sorted pages walk it.
			if (!("_id" in keys)) keys._id = 1;
			schema.index(keys, { name: index.name });
		}
	}
	if (model.textField) schema.index({ _words: 1 }, { name: "_words_" });
	return schema;
}

// -- mapping ---------------------------------------------------------------------------

/** The stored shape of a document (body as JSON, declared fields and shadows at top level). */
export function toRaw(model: ResolvedModel, doc: StoredDoc, version: number): RawDoc {
	const stored = { ...doc, version };
	const raw: RawDoc = { _id: doc.identifier, version, body: JSON.stringify(stored) };
	for (const field of model.declared) {
		const value = documentValue(field, stored);
		if (field.caseInsensitive) {
			// documentValue folds case-insensitive values; keep the original beside the shadow.
			const original = documentValue({ ...field, caseInsensitive: false }, stored);
			raw[field.column] = original;
			raw[`_lc_${field.column}`] = value;
		} else raw[field.column] = value;
	}
	if (model.textField) raw._words = [...new Set(textTokens(textOf(model, stored)))];
	return raw;
}

/** The document a stored shape holds. */
export function parseRaw<T extends StoredDoc>(raw: Pick<RawDoc, "_id" | "version" | "body">): T {
	const doc = JSON.parse(raw.body) as T;
	doc.identifier = raw._id;
	doc.version = raw.version;
	return doc;
}

// -- creation and migration ------------------------------------------------------------

/** Creates the collection and its indexes; recomputes derived paths when the spec changed. */
export async function ensureSchema<T extends StoredDoc>(c: MongoCollection<T>): Promise<void> {
	const name = c.model.spec.collection;
	try {
		await c.mongooseModel.createCollection();
	} catch (error) {
		if ((error as { code?: unknown })?.code !== 48) throw error; // NamespaceExists
	}
	const meta = c.store.db().collection<{ _id: string; fingerprint: string; spec: string }>(META);
	const recorded = await meta.findOne({ _id: { $eq: name } });
	const stale = recorded
		? recorded.fingerprint !== c.model.fingerprint
		: (await c.native.estimatedDocumentCount()) > 0;
	if (stale) {
		// Old indexes may use old paths or rules: drop them, recompute every derived path.
		await c.native.dropIndexes().catch(() => undefined);
		const cursor = c.native.find({}, { projection: PROJECTION, batchSize: 500 });
		let writes: mongoose.mongo.AnyBulkWriteOperation<RawDoc>[] = [];
		for await (const raw of cursor) {
			const doc = parseRaw<T>(raw as unknown as RawDoc);
			writes.push({
				replaceOne: {
					filter: { _id: { $eq: doc.identifier } },
					replacement: toRaw(c.model, doc, doc.version ?? 1),
				},
			});
			if (writes.length >= 500) {
				await c.native.bulkWrite(writes, { ordered: false });
				writes = [];
			}
		}
		if (writes.length > 0) await c.native.bulkWrite(writes, { ordered: false });
	}
	try {
		await c.mongooseModel.syncIndexes();
	} catch (error) {
		throw translate(c.model, error);
	}
	await meta.updateOne(
		{ _id: { $eq: name } },
		{ $set: { fingerprint: c.model.fingerprint, spec: JSON.stringify(c.model.spec) } },
		{ upsert: true },
	);
}
