/**
 * Body shapes refused before anything validates a body (issue 8). fastest-validator puts a
 * rejected value into its message with String(value), which recurses: ten thousand nested arrays
 * overflowed the stack (500); and it checks every item of an over-long array (a 1 MiB body of
 * 500,000 tiny items kept the event loop busy for two seconds). No request of the contract nests
 * deeper than four levels or needs more than a few hundred items.
 */
import { RegistryError, ValidationFailed } from "../../src/contract/errors";

export const MAX_JSON_DEPTH = 64;
export const MAX_ARRAY_ITEMS = 1000;

/**
 * The refusal of a parsed body nested deeper than MAX_JSON_DEPTH (400) or holding an array of
 * more than MAX_ARRAY_ITEMS (its path, `contact.x[2]`), or null. Iterative: any depth is safe to ask.
 */
export function bodyShapeFault(body: unknown): RegistryError | null {
	const pending: Array<{ node: unknown; depth: number; path: string }> = [{ node: body, depth: 1, path: "" }];
	while (pending.length > 0) {
		const { node, depth, path } = pending.pop() as { node: unknown; depth: number; path: string };
		if (node === null || typeof node !== "object") continue;
		if (depth > MAX_JSON_DEPTH)
			return new RegistryError(
				400,
				"HttpMessageNotReadableException",
				`JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`,
			);
		if (Array.isArray(node)) {
			if (node.length > MAX_ARRAY_ITEMS)
				return ValidationFailed.one(
					path || "body",
					"Size",
					`size must be between 0 and ${MAX_ARRAY_ITEMS}`,
					null,
				);
			for (let index = 0; index < node.length; index++)
				pending.push({ node: node[index], depth: depth + 1, path: `${path}[${index}]` });
		} else
			for (const [key, child] of Object.entries(node))
				pending.push({ node: child, depth: depth + 1, path: path ? `${path}.${key}` : key });
	}
	return null;
}
