/**
 * The gateway's routes, built from the operations table (src/contract/operations.ts): one per
 * method and path, holding the operations that share it (spec rule 1: the Accept chooses among
 * them). Paths match case-insensitively, with or without a trailing slash; a path parameter is
 * one percent-decoded segment.
 */
import { RegistryError } from "../../src/contract/errors";
import { groupOperations, type OperationGroup } from "../../src/contract/negotiation";
import { API_BASE, OPERATIONS } from "../../src/contract/operations";

interface Route {
	group: OperationGroup;
	pattern: RegExp;
	names: string[];
}

export type RouteMatch =
	/** The route of the method and path, with its decoded path values. */
	| { group: OperationGroup; pathValues: Record<string, string> }
	/** The path exists, for other methods (405 with these in Allow). */
	| { allowed: string[] };

function compile(group: OperationGroup): Route {
	const names: string[] = [];
	const source = `${API_BASE}${group.path}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:([A-Za-z]+)/g, (_whole, name: string) => {
		names.push(name);
		return "([^/]+?)";
	});
	return { group, pattern: new RegExp(`^${source}$`, "i"), names };
}

/** Routes by the first segment after the API base (lower-cased): a request is matched against a few, not all. */
const ROUTES = new Map<string, Route[]>();
for (const route of groupOperations(OPERATIONS).map(compile)) {
	const segment = route.group.path.split("/")[1].toLowerCase();
	ROUTES.set(segment, [...(ROUTES.get(segment) ?? []), route]);
}
const BASE = API_BASE.toLowerCase();

function candidates(path: string): Route[] {
	if (path.length <= BASE.length || path[BASE.length] !== "/" || path.slice(0, BASE.length).toLowerCase() !== BASE) return [];
	const end = path.indexOf("/", BASE.length + 1);
	return ROUTES.get(path.slice(BASE.length + 1, end === -1 ? undefined : end).toLowerCase()) ?? [];
}

function decode(value: string): string {
	try {
		return decodeURIComponent(value);
	} catch {
		throw new RegistryError(400, "MethodArgumentTypeMismatchException", "A path parameter is not validly percent-encoded");
	}
}

/** The route of a request's method and path (without its query string), or null when no route has the path. */
export function matchRoute(method: string, rawPath: string): RouteMatch | null {
	const path = rawPath.length > 1 && rawPath.endsWith("/") ? rawPath.slice(0, -1) : rawPath;
	let allowed: string[] | null = null;
	for (const route of candidates(path)) {
		const found = route.pattern.exec(path);
		if (!found) continue;
		if (route.group.method !== method) {
			(allowed ??= []).push(route.group.method);
			continue;
		}
		const pathValues: Record<string, string> = {};
		route.names.forEach((name, index) => (pathValues[name] = decode(found[index + 1])));
		return { group: route.group, pathValues };
	}
	return allowed ? { allowed: [...new Set(allowed)] } : null;
}

/** The methods the operations table defines for a path (for Allow and OPTIONS). */
export function methodsOf(rawPath: string): string[] {
	const match = matchRoute("", rawPath);
	return match && "allowed" in match ? match.allowed : [];
}
