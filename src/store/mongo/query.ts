/**
 * The typed query (filter, words, sort) as a MongoDB filter and sort over the layout of
 * ./schema.ts: the path each declared field is filtered, sorted and indexed on (its
 * lowercased `_lc_` shadow when caseInsensitive), and Query.words as an `$all` of anchored,
 * escaped `^word` regexes over the `_words` array.
 *
 * Filters are built only from the typed Query (parsed and normalised by ../model.ts, shared
 * with the SQLite store; values checked to be scalars and always wrapped in `$eq` / `$in` /
 * ...), never from client objects.
 */
import { parseFilter, queryWords, sortKeys, type ResolvedField, type ResolvedModel } from "../model";
import type { Filter, Query } from "../types";

export type MongoFilter = Record<string, unknown>;

function escapeRegex(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** Path a declared field is filtered, sorted and indexed on. */
export function fieldPath(field: ResolvedField): string {
	if (field.name === "identifier") return "_id";
	if (field.name === "version") return "version";
	return field.caseInsensitive ? `_lc_${field.column}` : field.column;
}

/** A mongo filter from the typed filter and words; null when nothing can match. */
export function buildFilter(
	model: ResolvedModel,
	filter: Filter | undefined,
	words: string[] | undefined,
): MongoFilter | null {
	const conditions = parseFilter(model, filter);
	const phrases = queryWords(words);
	if (conditions === null || phrases === null) return null;
	const and: MongoFilter[] = [];
	for (const condition of conditions) {
		const path = fieldPath(condition.field);
		const array = condition.field.kind === "stringArray";
		switch (condition.op) {
			case "eq":
				and.push(
					array && condition.value === null ? { [path]: { $size: 0 } } : { [path]: { $eq: condition.value } },
				);
				break;
			case "in": {
				const any: MongoFilter[] = [];
				if (condition.values.length > 0) any.push({ [path]: { $in: condition.values } });
				if (condition.withNull) any.push(array ? { [path]: { $size: 0 } } : { [path]: { $eq: null } });
				and.push(any.length === 1 ? any[0] : { $or: any });
				break;
			}
			case "ne":
				and.push(
					array && condition.value === null
						? { [`${path}.0`]: { $exists: true } }
						: { [path]: { $ne: condition.value } },
				);
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
		if (!model.textField) throw new Error(`store: ${model.spec.collection} has no textField to search words in`);
		const patterns: RegExp[] = [];
		for (const tokens of phrases) {
			tokens.forEach((token, i) =>
				patterns.push(
					new RegExp(i === tokens.length - 1 ? `^${escapeRegex(token)}` : `^${escapeRegex(token)}$`),
				),
			);
		}
		and.push({ _words: { $all: patterns } });
	}
	return and.length === 0 ? {} : and.length === 1 ? and[0] : { $and: and };
}

export function buildSort(model: ResolvedModel, query: Query | undefined): Record<string, 1 | -1> {
	const sort: Record<string, 1 | -1> = {};
	for (const key of sortKeys(model, query?.sort)) sort[fieldPath(key.field)] = key.descending ? -1 : 1;
	return sort;
}
