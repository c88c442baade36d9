/** A gateway's aliases: one per method and path, carrying the operations that share it, and HEAD beside every GET. */
import { groupOperations } from "../../src/contract/negotiation";
import { fullPathOf, type Operation } from "../../src/contract/operations";
import type { OperationAlias } from "./request-state";

export interface GatewayRoutes {
	/** `"GET /processes": { group, handler }`, … for the route at API_BASE, or (`root`) for the route at the port's root. */
	aliases(handler: OperationAlias["handler"], root: boolean): Record<string, OperationAlias>;
	/** The methods served on a path (HEAD beside GET), for 405's Allow and OPTIONS; empty for a path not served. */
	methodsOf(path: string): string[];
}

export function gatewayRoutes(operations: Operation[]): GatewayRoutes {
	const groups = groupOperations(operations);
	const isRoot = (group: (typeof groups)[number]) => group.operations[0].root === true;
	const paths = new Map<string, { pattern: RegExp; methods: string[] }>();
	for (const group of groups) {
		const { pathParams } = group.operations[0];
		// An SMP identifier holds `::` (maybe percent-encoded): other root paths are not the SMP's (404, not 405).
		const source = fullPathOf(group.operations[0])
			.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
			.replace(/:([A-Za-z]+)/g, (_all, name: string) =>
				pathParams[name] === "smpIdentifier" ? "[^/]*(?:::|%3A%3A)[^/]*" : "[^/]+",
			);
		const known = paths.get(source) ?? { pattern: new RegExp(`^${source}/?$`, "i"), methods: [] };
		known.methods.push(group.method);
		if (group.method === "GET") known.methods.push("HEAD");
		paths.set(source, known);
	}
	return {
		aliases(handler, root) {
			const aliases: Record<string, OperationAlias> = {};
			for (const group of groups) {
				if (isRoot(group) !== root) continue;
				aliases[`${group.method} ${group.path}`] = { group, handler };
				if (group.method === "GET") aliases[`HEAD ${group.path}`] = { group, handler };
			}
			return aliases;
		},
		methodsOf(path) {
			const found: string[] = [];
			for (const { pattern, methods } of paths.values()) if (pattern.test(path)) found.push(...methods);
			return [...new Set(found)];
		},
	};
}
