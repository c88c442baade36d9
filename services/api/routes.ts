/**
 * The gateway's aliases, generated from the operations table (src/contract/operations.ts): one
 * per method and path, carrying the operations that share it (spec rule 1: the Accept chooses
 * among them in the `authorization` hook), and a HEAD alias beside every GET (decisions §2).
 * moleculer-web matches them (path-to-regexp: case-insensitive, with or without a trailing
 * slash, a parameter is one percent-decoded segment).
 */
import { groupOperations, type OperationGroup } from "../../src/contract/negotiation";
import { API_BASE, OPERATIONS } from "../../src/contract/operations";
import type { OperationAlias } from "./request-state";

const GROUPS = groupOperations(OPERATIONS);

/**
 * `"GET /processes": { group, handler }`, … for the route at API_BASE; the groups with held
 * answers (the hot reads) first: moleculer-web tries the aliases in order (its `optimizeOrder`
 * is off: no two of the table's paths match the same URL, so the order only decides how soon).
 */
export function operationAliases(handler: OperationAlias["handler"]): Record<string, OperationAlias> {
	const aliases: Record<string, OperationAlias> = {};
	const hotFirst = [...GROUPS].sort(
		(a, b) =>
			Number(b.operations.some((operation) => operation.held)) -
			Number(a.operations.some((operation) => operation.held)),
	);
	for (const group of hotFirst) {
		aliases[`${group.method} ${group.path}`] = { group, handler };
		if (group.method === "GET") aliases[`HEAD ${group.path}`] = { group, handler };
	}
	return aliases;
}

/** Each path of the table once, with its methods (for 405's Allow and OPTIONS). */
const PATHS = new Map<string, { pattern: RegExp; methods: string[] }>();
for (const group of GROUPS as OperationGroup[]) {
	const source = `${API_BASE}${group.path}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z]+/g, "[^/]+");
	const known = PATHS.get(source) ?? { pattern: new RegExp(`^${source}/?$`, "i"), methods: [] };
	known.methods.push(group.method);
	if (group.method === "GET") known.methods.push("HEAD");
	PATHS.set(source, known);
}

/** The methods the operations table defines for a path (HEAD beside GET); empty for an unknown path. */
export function methodsOf(path: string): string[] {
	const found: string[] = [];
	for (const { pattern, methods } of PATHS.values()) if (pattern.test(path)) found.push(...methods);
	return [...new Set(found)];
}
