/**
 * The OpenAPI document (issue 9): valid OpenAPI 3.1, generated from the operations table,
 * with every operation, media type, role, sortable name and error status.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { openApiDocument } from "../../src/contract/openapi";
import { API_BASE, fullPathOf, OPERATIONS } from "../../src/contract/operations";

const document = openApiDocument() as {
	openapi: string;
	paths: Record<
		string,
		Record<
			string,
			{
				"x-media-types": string[];
				"x-roles": string[];
				parameters?: { name: string; description?: string }[];
				responses: Record<string, unknown>;
				security: unknown[];
			}
		>
	>;
};

describe("OpenAPI document", () => {
	test("is a valid OpenAPI 3.1 document", async () => {
		const output = execFileSync(process.execPath, [path.join(__dirname, "..", "support", "validate-openapi.mjs")], {
			input: JSON.stringify(document),
		});
		const result = JSON.parse(output.toString());
		expect(result.errors).toEqual([]);
		expect(result.valid).toBe(true);
		expect(result.version).toBe("3.1");
	});

	test.each(OPERATIONS.map((operation) => [operation.id, operation] as const))(
		"describes %s with its media types and roles",
		(_id, operation) => {
			const path = fullPathOf(operation).replace(/:([A-Za-z]+)/g, "{$1}");
			const entry = document.paths[path]?.[operation.method.toLowerCase()];
			expect(entry).toBeDefined();
			for (const mediaType of operation.mediaTypes) expect(entry["x-media-types"]).toContain(mediaType);
			for (const role of operation.roles) expect(entry["x-roles"]).toContain(role);
			expect(Object.keys(entry.responses)).toContain(String(operation.status));
			expect(Object.keys(entry.responses)).toEqual(expect.arrayContaining(["400", "401", "406"]));
			if (operation.sortable) {
				const sort = entry.parameters?.find((parameter) => parameter.name === "sort");
				for (const name of Object.keys(operation.sortable)) expect(sort?.description).toContain(name);
			}
			if (operation.roles.includes("ANONYMOUS")) expect(entry.security).toContainEqual({});
			else expect(entry.security).toEqual([{ basicAuth: [] }, { bearerAuth: [] }]);
		},
	);

	test("has no API path the operations table does not define", () => {
		// Answered outside the table (services/api/operational.ts).
		const OPERATIONAL_PATHS = new Set([
			"/health/live",
			"/health/ready",
			"/metrics",
			"/docs",
			`${API_BASE}/openapi.json`,
		]);
		const defined = new Set(
			OPERATIONS.map(
				(operation) =>
					`${operation.method.toLowerCase()} ${fullPathOf(operation).replace(/:([A-Za-z]+)/g, "{$1}")}`,
			),
		);
		const documented = Object.entries(document.paths)
			.filter(([path]) => !OPERATIONAL_PATHS.has(path))
			.flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method} ${path}`));
		expect(documented.sort()).toEqual([...defined].sort());
	});
});
