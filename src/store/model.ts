/**
 * Store-independent semantics, shared by both stores (sqlite/ and mongo/) so that they
 * agree: ModelSpec validation and field resolution (with the spec's fingerprint), the
 * value a document holds for a declared field, filter parsing, word tokenizing, sort keys
 * and page bounds.
 */
import type { FieldSpec, Filter, ModelSpec, Query, SortKey, StoredDoc, WriteOp } from "./types";

const COLLECTION_NAME = /^[A-Za-z](?:[A-Za-z0-9]|_(?=[A-Za-z0-9]))*$/;
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*$/;
/** Names a declared field may not take (storage columns / Mongo paths of their own). */
const RESERVED_FIELDS = new Set(["body", "_id", "_rid", "_words"]);

export interface ResolvedField {
	/** The declared name (a dotted path into the document is allowed). */
	name: string;
	kind: FieldSpec["kind"];
	caseInsensitive: boolean;
	/** Storage name: the declared name with `.` replaced by `__` (identifier/version: themselves). */
	column: string;
	/** identifier / version: kept by the store itself, not extracted from the document. */
	builtin: boolean;
}

export interface ResolvedModel {
	spec: ModelSpec;
	fields: Map<string, ResolvedField>;
	/** Declared (non built-in) fields, in declaration order. */
	declared: ResolvedField[];
	textField?: string;
	/** Canonical JSON of the spec: a change triggers a rebuild of derived data. */
	fingerprint: string;
}

/** Validates a ModelSpec and resolves its fields (identifier and version are always there). */
export function resolveModel(spec: ModelSpec): ResolvedModel {
	if (!spec || typeof spec.collection !== "string" || !COLLECTION_NAME.test(spec.collection)) {
		throw new Error(
			`store: invalid collection name ${JSON.stringify(spec?.collection)} (letters, digits, single underscores)`,
		);
	}
	const fields = new Map<string, ResolvedField>();
	const declared: ResolvedField[] = [];
	const columns = new Set<string>();
	for (const [name, field] of Object.entries(spec.fields ?? {})) {
		if (!FIELD_NAME.test(name) || RESERVED_FIELDS.has(name))
			throw new Error(`store: ${spec.collection}: invalid field name ${JSON.stringify(name)}`);
		if (!["string", "number", "boolean", "stringArray"].includes(field?.kind))
			throw new Error(`store: ${spec.collection}.${name}: unknown kind ${JSON.stringify(field?.kind)}`);
		const caseInsensitive =
			field.caseInsensitive === true && (field.kind === "string" || field.kind === "stringArray");
		if (name === "identifier" || name === "version") {
			const expected = name === "identifier" ? "string" : "number";
			if (field.kind !== expected || caseInsensitive)
				throw new Error(`store: ${spec.collection}.${name} is built in (${expected}, case-sensitive)`);
			continue;
		}
		const column = name.split(".").join("__");
		if (columns.has(column)) throw new Error(`store: ${spec.collection}: fields collide on storage name ${column}`);
		columns.add(column);
		const resolved: ResolvedField = { name, kind: field.kind, caseInsensitive, column, builtin: false };
		fields.set(name, resolved);
		declared.push(resolved);
	}
	fields.set("identifier", {
		name: "identifier",
		kind: "string",
		caseInsensitive: false,
		column: "identifier",
		builtin: true,
	});
	fields.set("version", {
		name: "version",
		kind: "number",
		caseInsensitive: false,
		column: "version",
		builtin: true,
	});
	const names = new Set<string>();
	for (const index of spec.indexes ?? []) {
		if (!index || typeof index.name !== "string" || index.name.length === 0)
			throw new Error(`store: ${spec.collection}: an index needs a name`);
		if (names.has(index.name)) throw new Error(`store: ${spec.collection}: duplicate index name ${index.name}`);
		names.add(index.name);
		if (!Array.isArray(index.fields) || index.fields.length === 0)
			throw new Error(`store: ${spec.collection}.${index.name}: no fields`);
		for (const name of index.fields) {
			if (!fields.has(name)) throw new Error(`store: ${spec.collection}.${index.name}: undeclared field ${name}`);
		}
		const arrays = index.fields.filter((name) => fields.get(name)!.kind === "stringArray");
		if (index.unique && arrays.length > 0 && index.fields.length > 1) {
			throw new Error(
				`store: ${spec.collection}.${index.name}: a unique index on a stringArray field must have that field only`,
			);
		}
	}
	if (spec.textField !== undefined) {
		const text = fields.get(spec.textField);
		if (!text || text.builtin || text.kind !== "string")
			throw new Error(`store: ${spec.collection}: textField ${spec.textField} must be a declared string field`);
	}
	const fingerprint = JSON.stringify({
		layout: 1,
		collection: spec.collection,
		fields: declared
			.map((field) => [field.name, field.kind, field.caseInsensitive])
			.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
		indexes: (spec.indexes ?? []).map((index) => [index.name, index.fields, index.unique === true]),
		textField: spec.textField ?? null,
	});
	return { spec, fields, declared, textField: spec.textField, fingerprint };
}

/** Reads a (possibly dotted) path through own properties only. */
export function getPath(doc: unknown, name: string): unknown {
	let value: unknown = doc;
	for (const part of name.split(".")) {
		if (value === null || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, part))
			return undefined;
		value = (value as Record<string, unknown>)[part];
	}
	return value;
}

function fold(text: string): string {
	return text.normalize("NFC").toLowerCase();
}

/** The value a document holds for a declared field, as stored in the column / shadow path. */
export function documentValue(field: ResolvedField, doc: unknown): string | number | boolean | null | string[] {
	const raw = getPath(doc, field.name);
	switch (field.kind) {
		case "string":
			if (typeof raw === "string") return field.caseInsensitive ? fold(raw) : raw;
			if (typeof raw === "number" || typeof raw === "boolean") return String(raw);
			return null;
		case "number":
			return typeof raw === "number" && Number.isFinite(raw) ? raw : null;
		case "boolean":
			return typeof raw === "boolean" ? raw : null;
		case "stringArray": {
			if (!Array.isArray(raw)) return [];
			const values = new Set<string>();
			for (const item of raw) if (typeof item === "string") values.add(field.caseInsensitive ? fold(item) : item);
			return [...values];
		}
	}
}

/** A filter value, checked to be a scalar and normalised to the field's kind. */
export function filterValue(field: ResolvedField, value: unknown): string | number | boolean | null {
	if (value === null) return null;
	if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
		throw new TypeError(`store: filter on ${field.name}: value must be a string, number, boolean or null`);
	}
	switch (field.kind) {
		case "string":
		case "stringArray": {
			const text = String(value);
			return field.caseInsensitive ? fold(text) : text;
		}
		case "number": {
			const number =
				typeof value === "number"
					? value
					: typeof value === "string" && /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(value)
						? Number(value)
						: NaN;
			if (!Number.isFinite(number))
				throw new TypeError(`store: filter on ${field.name}: not a number: ${JSON.stringify(value)}`);
			return number;
		}
		case "boolean":
			if (typeof value !== "boolean")
				throw new TypeError(`store: filter on ${field.name}: not a boolean: ${JSON.stringify(value)}`);
			return value;
	}
}

export type ConditionOp = "eq" | "in" | "ne" | "lt" | "lte" | "gte";
export interface ParsedCondition {
	field: ResolvedField;
	op: ConditionOp;
	/** eq / ne / ranges: one value; in: the non-null values. */
	value: string | number | boolean | null;
	values: Array<string | number | boolean>;
	/** in: whether null was one of the values. */
	withNull: boolean;
}

const OPERATORS = new Set(["in", "lte", "gte", "lt", "ne"]);

/**
 * Checks and normalises a Filter. Returns null when the filter can match nothing (an empty
 * `in`, or a range against null), so stores can answer without a query.
 */
export function parseFilter(model: ResolvedModel, filter: Filter | undefined): ParsedCondition[] | null {
	const conditions: ParsedCondition[] = [];
	if (filter === undefined || filter === null) return conditions;
	if (typeof filter !== "object" || Array.isArray(filter)) throw new TypeError("store: filter must be an object");
	let never = false;
	for (const name of Object.keys(filter)) {
		const field = model.fields.get(name);
		if (!field)
			throw new Error(
				`store: ${model.spec.collection}: cannot filter on undeclared field ${JSON.stringify(name)}`,
			);
		const condition: unknown = (filter as Record<string, unknown>)[name];
		if (condition === undefined) continue;
		if (condition === null || typeof condition !== "object") {
			conditions.push({ field, op: "eq", value: filterValue(field, condition), values: [], withNull: false });
			continue;
		}
		if (Array.isArray(condition))
			throw new TypeError(`store: filter on ${name}: use { in: [...] } for several values`);
		const keys = Object.keys(condition);
		if (keys.length === 0) throw new TypeError(`store: filter on ${name}: empty condition`);
		for (const key of keys) {
			if (!OPERATORS.has(key))
				throw new TypeError(`store: filter on ${name}: unknown operator ${JSON.stringify(key)}`);
			const operand: unknown = (condition as Record<string, unknown>)[key];
			if (key === "in") {
				if (!Array.isArray(operand)) throw new TypeError(`store: filter on ${name}: in needs an array`);
				const values: Array<string | number | boolean> = [];
				let withNull = false;
				for (const item of operand) {
					const value = filterValue(field, item);
					if (value === null) withNull = true;
					else if (!values.includes(value)) values.push(value);
				}
				if (values.length === 0 && !withNull) never = true;
				conditions.push({ field, op: "in", value: null, values, withNull });
			} else {
				const value = filterValue(field, operand);
				if (value === null && key !== "ne") never = true;
				conditions.push({ field, op: key as ConditionOp, value, values: [], withNull: false });
			}
		}
	}
	return never ? null : conditions;
}

/** Word characters, as FTS5 unicode61 sees them by default (categories L*, N*, Co). */
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;

/** The lowercased words of a text (Mongo `_words`; the FTS5 tokenizer does the same in SQLite). */
export function textTokens(text: string): string[] {
	return fold(text).match(WORD) ?? [];
}

/**
 * Query.words → per word, its tokens (a word like "Smith-Jones" is the phrase smith jones).
 * Blank words are dropped; returns null when a word has no word characters at all (`"`,
 * `%`, `(`, `.*`): such a word cannot start any word, so the query matches nothing.
 */
export function queryWords(words: string[] | undefined): string[][] | null {
	const phrases: string[][] = [];
	for (const word of words ?? []) {
		if (typeof word !== "string") throw new TypeError("store: words must be strings");
		if (word.trim().length === 0) continue;
		const tokens = textTokens(word);
		if (tokens.length === 0) return null;
		phrases.push(tokens);
	}
	return phrases;
}

/** Sort keys (validated, deduplicated) followed by the `identifier asc` tie-breaker. */
export function sortKeys(
	model: ResolvedModel,
	sort: SortKey[] | undefined,
): Array<{ field: ResolvedField; descending: boolean }> {
	const keys: Array<{ field: ResolvedField; descending: boolean }> = [];
	for (const key of sort ?? []) {
		const field = model.fields.get(key?.field);
		if (!field)
			throw new Error(
				`store: ${model.spec.collection}: cannot sort on undeclared field ${JSON.stringify(key?.field)}`,
			);
		if (field.kind === "stringArray")
			throw new Error(`store: ${model.spec.collection}: cannot sort on stringArray field ${field.name}`);
		if (key.direction !== "asc" && key.direction !== "desc")
			throw new Error(`store: sort direction must be asc or desc`);
		if (keys.some((existing) => existing.field === field)) continue;
		keys.push({ field, descending: key.direction === "desc" });
		if (field.name === "identifier") return keys;
	}
	keys.push({ field: model.fields.get("identifier")!, descending: false });
	return keys;
}

export function pageBounds(query: Query): { offset: number; limit: number | undefined } {
	const offset = query.offset === undefined ? 0 : Math.floor(Number(query.offset));
	const limit = query.limit === undefined || query.limit === null ? undefined : Math.floor(Number(query.limit));
	if (!Number.isFinite(offset) || offset < 0) throw new RangeError("store: offset must be a non-negative number");
	if (limit !== undefined && (!Number.isFinite(limit) || limit < 0))
		throw new RangeError("store: limit must be a non-negative number");
	return { offset, limit };
}

export function checkDoc(collection: string, doc: StoredDoc): void {
	if (!doc || typeof doc !== "object" || typeof doc.identifier !== "string" || doc.identifier.length === 0) {
		throw new TypeError(`store: ${collection}: a document needs a non-empty string identifier`);
	}
}

/** The text indexed for a textField (a string, or strings in an array). */
export function textOf(model: ResolvedModel, doc: unknown): string {
	if (!model.textField) return "";
	const raw = getPath(doc, model.textField);
	if (typeof raw === "string") return raw.normalize("NFC");
	if (Array.isArray(raw))
		return raw
			.filter((item) => typeof item === "string")
			.join(" ")
			.normalize("NFC");
	return "";
}

/** A batch's operations with the collection each one writes; a collection this store never declared is refused before anything is written. */
export function resolveBatch<C>(ops: WriteOp[], collections: ReadonlyMap<string, C>): { op: WriteOp; collection: C }[] {
	if (!Array.isArray(ops)) throw new TypeError("store: batch needs an array of operations");
	return ops.map((op) => {
		const collection = collections.get(op?.collection);
		if (!collection)
			throw new Error(
				`store: batch: collection ${JSON.stringify(op?.collection)} was not declared on this store`,
			);
		return { op, collection };
	});
}
