/**
 * Nesting limit of request bodies (issue 8). fastest-validator puts a rejected value into
 * its message with String(value), which recurses through nested arrays: a body holding ten
 * thousand nested arrays overflowed the stack and answered 500. No request of the contract
 * nests deeper than four levels, so a body deeper than MAX_JSON_DEPTH is refused as
 * unreadable (400) before anything validates or echoes it.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether arrays and objects nest deeper than `max` levels (iterative: any depth is safe to ask). */
export function jsonDepthExceeds(value: unknown, max = MAX_JSON_DEPTH): boolean {
	const pending: Array<{ node: object; depth: number }> = [];
	if (value !== null && typeof value === "object") pending.push({ node: value, depth: 1 });
	while (pending.length > 0) {
		const { node, depth } = pending.pop() as { node: object; depth: number };
		if (depth > max) return true;
		for (const child of Array.isArray(node) ? node : Object.values(node)) {
			if (child !== null && typeof child === "object") pending.push({ node: child, depth: depth + 1 });
		}
	}
	return false;
}
