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

/**
 * Longest array a request body may hold (issue 8). fastest-validator checks every item of an
 * array even when it has too many, so a 1 MiB body of 500 000 tiny items kept the event loop
 * busy for two seconds; no request of the contract needs more than a few hundred (processes,
 * links, ICDs).
 */
export const MAX_ARRAY_ITEMS = 1000;

/** The path (`processes`, `contact.x[2]`) of the first array longer than `max` items, or null. */
export function longArrayPath(value: unknown, max = MAX_ARRAY_ITEMS): string | null {
	const pending: Array<{ node: object; path: string }> = [];
	const visit = (node: unknown, path: string) => {
		if (node !== null && typeof node === "object") pending.push({ node, path });
	};
	visit(value, "");
	while (pending.length > 0) {
		const { node, path } = pending.pop() as { node: object; path: string };
		if (Array.isArray(node)) {
			if (node.length > max) return path;
			node.forEach((item, index) => visit(item, `${path}[${index}]`));
		} else {
			for (const [key, child] of Object.entries(node)) visit(child, path ? `${path}.${key}` : key);
		}
	}
	return null;
}
