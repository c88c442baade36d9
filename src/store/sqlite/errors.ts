/**
 * SQLite constraint errors → the store's DuplicateKey, named by the declared unique index
 * (or "identifier") whose constraint failed. Other errors pass through unchanged.
 */
import { DuplicateKey } from "../errors";
import type { ResolvedModel } from "../model";

/** The error a write or index creation on `model`'s collection should throw for `error`. */
export function translate(model: ResolvedModel, error: unknown): unknown {
	// Not `instanceof`: the native addon keeps the error class of the first copy of
	// better-sqlite3 that loaded it (and that copy's realm's Error), so a second copy (a
	// test runner's fresh module registry) sees foreign classes. The code identifies it.
	const code = (error as { code?: unknown } | null)?.code;
	if (code !== "SQLITE_CONSTRAINT_UNIQUE" && code !== "SQLITE_CONSTRAINT_PRIMARYKEY") return error;
	const message = String((error as { message?: unknown }).message ?? "");
	const collection = model.spec.collection;
	const match = /constraint failed: (.*)$/.exec(message);
	if (!match) return new DuplicateKey(collection, "unknown");
	const failed = match[1].split(",").map((part) => part.trim());
	const named = /^index '(.*)'$/.exec(failed[0]);
	if (named) {
		const prefix = `${collection}___ix_`;
		return new DuplicateKey(collection, named[1].startsWith(prefix) ? named[1].slice(prefix.length) : named[1]);
	}
	const pairs = failed.map((part) => {
		const dot = part.lastIndexOf(".");
		return { table: part.slice(0, dot), column: part.slice(dot + 1) };
	});
	if (pairs.length === 1 && pairs[0].table === collection && pairs[0].column === "identifier")
		return new DuplicateKey(collection, "identifier");
	for (const index of model.spec.indexes ?? []) {
		if (!index.unique) continue;
		const fields = index.fields.map((name) => model.fields.get(name)!);
		const expected = fields.map((field) =>
			field.kind === "stringArray"
				? { table: `${collection}__${field.column}`, column: "value" }
				: { table: collection, column: field.column },
		);
		if (
			expected.length === pairs.length &&
			expected.every((item, i) => item.table === pairs[i].table && item.column === pairs[i].column)
		) {
			return new DuplicateKey(collection, index.name);
		}
	}
	if (pairs.length === 1 && pairs[0].column === "identifier") return new DuplicateKey(collection, "identifier");
	return new DuplicateKey(collection, failed.join(","));
}
