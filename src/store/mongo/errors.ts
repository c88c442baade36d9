/**
 * MongoDB duplicate key errors (codes 11000 / 11001, also inside a bulk write's writeErrors)
 * → the store's DuplicateKey, named by the declared unique index (or "identifier") whose
 * constraint failed. Other errors pass through unchanged. Stale versions are raised by
 * ./collection.ts directly (StaleVersion of ../errors.ts).
 */
import { DuplicateKey } from "../errors";
import type { ResolvedModel } from "../model";
import { fieldPath } from "./query";

export function isDuplicate(
	error: unknown,
): error is { code: number; message: string; keyPattern?: Record<string, unknown> } {
	if (!error || typeof error !== "object") return false;
	const candidate = error as { code?: unknown; writeErrors?: Array<{ code?: unknown }> };
	return (
		candidate.code === 11000 ||
		candidate.code === 11001 ||
		(Array.isArray(candidate.writeErrors) && candidate.writeErrors.some((item) => item?.code === 11000))
	);
}

/** The error a write or index creation on `model`'s collection should throw for `error`. */
export function translate(model: ResolvedModel, error: unknown): unknown {
	if (!isDuplicate(error)) return error;
	const collection = model.spec.collection;
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
		for (const index of model.spec.indexes ?? []) {
			const expected = index.fields.map((name) => fieldPath(model.fields.get(name)!));
			if (index.unique && expected.length === paths.length && expected.every((path, i) => path === paths[i]))
				return new DuplicateKey(collection, index.name);
		}
	}
	return new DuplicateKey(collection, "unknown");
}
