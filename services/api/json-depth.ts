/** Body shapes refused before validation (docs/reliability.md "What the fuzzing found"). */
import { RegistryError, ValidationFailed } from "../../src/contract/errors";

const MAX_JSON_DEPTH = 64;
const MAX_ARRAY_ITEMS = 1000;

/** The refusal of a body nested too deep or holding an over-long array (at its path, `contact.x[2]`), or null. */
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
