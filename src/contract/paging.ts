/**
 * Paging and sorting shared by every find (spec "Page envelope", decisions §7).
 * The gateway parses the query into a PageRequest (400 on bad values); the owning
 * service runs it against its store and wraps the hits with pageOf().
 */
import { TypeMismatch } from "./errors";

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 1000;

/** One sort key of a find (the store's query takes the same shape). */
export interface SortKey {
	field: string;
	direction: "asc" | "desc";
}

export interface PageRequest {
	page: number;
	size: number;
	/** Store fields in order; empty when the request had no `sort` parameter. */
	sort: SortKey[];
}

export interface Page<T> {
	content: T[];
	number: number;
	size: number;
	numberOfElements: number;
	totalElements: number;
	totalPages: number;
	first: boolean;
	last: boolean;
	empty: boolean;
	sort: SortFlags;
	pageable: {
		sort: SortFlags;
		pageNumber: number;
		pageSize: number;
		offset: number;
		paged: boolean;
		unpaged: boolean;
	};
}

interface SortFlags {
	sorted: boolean;
	unsorted: boolean;
	empty: boolean;
}

/** Sortable names a client may use → store field, per resource (one source: also in the OpenAPI document). */
export type SortableNames = Record<string, string>;

function parseCount(name: string, raw: unknown, fallback: number, min: number): number {
	if (raw === undefined) return fallback;
	const text = Array.isArray(raw) ? raw[raw.length - 1] : raw;
	if (typeof text !== "string" || !/^\d{1,9}$/.test(text.trim())) {
		throw new TypeMismatch(
			`Failed to convert value of type 'java.lang.String' to required type 'int' for parameter '${name}'; value: '${String(text)}'`,
		);
	}
	const value = Number(text.trim());
	if (value < min) throw new TypeMismatch(`Parameter '${name}' must be at least ${min}; value: '${value}'`);
	return value;
}

/**
 * `sort=prop[,prop...][,ASC|DESC]`, repeatable. A trailing ASC/DESC applies to the
 * properties of that parameter; default ascending. Unknown names are 400.
 */
export function parseSort(raw: unknown, sortable: SortableNames): SortKey[] {
	if (raw === undefined || raw === "") return [];
	const params = (Array.isArray(raw) ? raw : [raw]).map(String);
	const keys: SortKey[] = [];
	for (const param of params) {
		const parts = param
			.split(",")
			.map((part) => part.trim())
			.filter((part) => part.length > 0);
		let direction: SortKey["direction"] = "asc";
		const last = parts[parts.length - 1];
		if (last && /^(asc|desc)$/i.test(last)) {
			direction = last.toLowerCase() as SortKey["direction"];
			parts.pop();
		}
		for (const name of parts) {
			const field = Object.prototype.hasOwnProperty.call(sortable, name) ? sortable[name] : undefined;
			if (!field) {
				throw new TypeMismatch(
					`No property '${name}' found to sort on; sortable: ${Object.keys(sortable).join(", ")}`,
				);
			}
			if (!keys.some((key) => key.field === field)) keys.push({ field, direction });
		}
	}
	return keys;
}

export function parsePageRequest(query: Record<string, unknown>, sortable: SortableNames): PageRequest {
	const page = parseCount("page", query.page, 0, 0);
	const size = Math.min(parseCount("size", query.size, DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
	return { page, size, sort: parseSort(query.sort, sortable) };
}

export function pageOf<T>(content: T[], totalElements: number, request: PageRequest): Page<T> {
	const sorted = request.sort.length > 0;
	const flags: SortFlags = { sorted, unsorted: !sorted, empty: !sorted };
	const totalPages = Math.ceil(totalElements / request.size);
	return {
		content,
		number: request.page,
		size: request.size,
		numberOfElements: content.length,
		totalElements,
		totalPages,
		first: request.page === 0,
		last: request.page >= totalPages - 1,
		empty: content.length === 0,
		sort: flags,
		pageable: {
			sort: { ...flags },
			pageNumber: request.page,
			pageSize: request.size,
			offset: request.page * request.size,
			paged: true,
			unpaged: false,
		},
	};
}
