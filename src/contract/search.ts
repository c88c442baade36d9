/**
 * The words of a find's `query` (decisions §7): split on `+` and spaces, each one data that
 * must start a word of the searched text (the store's Query.words matches them literally).
 * The participants' and the catalog's finds read their queries with it.
 */
export function searchWords(text: string): string[] {
	return text.split(/[+\s]+/).filter((word) => word.length > 0);
}

/** The catalog `query` is at most as long as the longest qualified identifier it may equal. */
export const MAX_CATALOG_QUERY_LENGTH = 1000;
