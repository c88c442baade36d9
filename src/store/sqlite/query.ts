/**
 * The typed query (filter, words, sort, paging) as SQL text over a collection's table
 * (aliased `t`): WHERE clauses with their bound parameters, ORDER BY, the keyset condition
 * that continues an iteration after its last row.
 * Filters are parsed and normalised by ../model.ts (shared with the MongoDB store).
 */
import { parseFilter, queryWords, type ResolvedField, type ResolvedModel } from "../model";
import type { Filter } from "../types";
import { sideTable } from "./schema";
import { bindable, q, type Bindable } from "./sql";

/** SQL text (a WHERE clause or a condition) and the values it binds, in order. */
export interface Where {
	sql: string;
	params: Bindable[];
}

/** ORDER BY text for sort keys (of the table aliased `t`). */
export function orderBy(keys: Array<{ field: ResolvedField; descending: boolean }>): string {
	const terms: string[] = [];
	for (const key of keys) terms.push(`t.${q(key.field.column)} ${key.descending ? "DESC" : "ASC"}`);
	return terms.join(", ");
}

/** WHERE clause (with its leading " WHERE ", or "") for a filter and words; null: matches nothing. */
export function whereClause(
	model: ResolvedModel,
	fts: string | undefined,
	filter: Filter | undefined,
	words: string[] | undefined,
): Where | null {
	const conditions = parseFilter(model, filter);
	const phrases = queryWords(words);
	if (conditions === null || phrases === null) return null;
	const parts: string[] = [];
	const params: Bindable[] = [];
	for (const condition of conditions) {
		const { field } = condition;
		if (field.kind === "stringArray") {
			const side = sideTable(model, field);
			const has = (test: string) => `t.identifier IN (SELECT identifier FROM ${side} WHERE ${test})`;
			switch (condition.op) {
				case "eq":
					if (condition.value === null)
						parts.push(`NOT EXISTS (SELECT 1 FROM ${side} s WHERE s.identifier = t.identifier)`);
					else {
						parts.push(has("value = ?"));
						params.push(bindable(condition.value));
					}
					break;
				case "in": {
					const any: string[] = [];
					if (condition.values.length > 0) {
						any.push(has("value IN (SELECT value FROM json_each(?))"));
						params.push(JSON.stringify(condition.values));
					}
					if (condition.withNull)
						any.push(`NOT EXISTS (SELECT 1 FROM ${side} s WHERE s.identifier = t.identifier)`);
					parts.push(any.length === 1 ? any[0] : `(${any.join(" OR ")})`);
					break;
				}
				case "ne":
					if (condition.value === null)
						parts.push(`EXISTS (SELECT 1 FROM ${side} s WHERE s.identifier = t.identifier)`);
					else {
						parts.push(`t.identifier NOT IN (SELECT identifier FROM ${side} WHERE value = ?)`);
						params.push(bindable(condition.value));
					}
					break;
				default:
					parts.push(has(`value ${condition.op === "lt" ? "<" : condition.op === "lte" ? "<=" : ">="} ?`));
					params.push(bindable(condition.value));
			}
			continue;
		}
		const column = `t.${q(field.column)}`;
		switch (condition.op) {
			case "eq":
				if (condition.value === null) parts.push(`${column} IS NULL`);
				else {
					parts.push(`${column} = ?`);
					params.push(bindable(condition.value));
				}
				break;
			case "in": {
				const any: string[] = [];
				if (condition.values.length === 1) {
					any.push(`${column} = ?`);
					params.push(bindable(condition.values[0]));
				} else if (condition.values.length > 1) {
					any.push(`${column} IN (SELECT value FROM json_each(?))`);
					params.push(JSON.stringify(condition.values));
				}
				if (condition.withNull) any.push(`${column} IS NULL`);
				parts.push(any.length === 1 ? any[0] : `(${any.join(" OR ")})`);
				break;
			}
			case "ne":
				parts.push(`${column} IS NOT ?`);
				params.push(bindable(condition.value));
				break;
			default:
				parts.push(`${column} ${condition.op === "lt" ? "<" : condition.op === "lte" ? "<=" : ">="} ?`);
				params.push(bindable(condition.value));
		}
	}
	if (phrases.length > 0) {
		if (!fts) throw new Error(`store: ${model.spec.collection} has no textField to search words in`);
		// Every word is one quoted FTS5 string (data, never syntax) with a prefix star.
		const match = phrases.map((tokens) => `"${tokens.join(" ").replace(/"/g, '""')}"*`).join(" AND ");
		parts.push(`t._rid IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?)`);
		params.push(match);
	}
	return { sql: parts.length > 0 ? ` WHERE ${parts.join(" AND ")}` : "", params };
}

/** Rows strictly after `last` in the sort order (SQLite: NULL is smallest). */
export function afterClause(keys: Array<{ field: ResolvedField; descending: boolean }>, last: Bindable[]): Where {
	const alternatives: string[] = [];
	const params: Bindable[] = [];
	for (let i = 0; i < keys.length; i++) {
		const parts: string[] = [];
		const local: Bindable[] = [];
		for (let j = 0; j < i; j++) {
			parts.push(`t.${q(keys[j].field.column)} IS ?`);
			local.push(last[j]);
		}
		const column = `t.${q(keys[i].field.column)}`;
		const value = last[i];
		if (!keys[i].descending) {
			if (value === null) parts.push(`${column} IS NOT NULL`);
			else {
				parts.push(`${column} > ?`);
				local.push(value);
			}
		} else {
			if (value === null) continue; // nothing sorts after NULL in descending order
			parts.push(`(${column} < ? OR ${column} IS NULL)`);
			local.push(value);
		}
		alternatives.push(`(${parts.join(" AND ")})`);
		params.push(...local);
	}
	return { sql: alternatives.length > 0 ? alternatives.join(" OR ") : "0", params };
}
