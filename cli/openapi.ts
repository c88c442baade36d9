/**
 * `node dist/cli/openapi.js [file]`: writes the registry's OpenAPI 3.1 document (the one
 * GET /rest/api/openapi.json serves, generated from the operations table) to the file, or
 * to stdout. `npm run client:generate` uses it to regenerate the typed client (client/).
 */
import fs from "node:fs";
import { REGISTRY_VERSION } from "../src/config/runtime";
import { openApiDocument } from "../src/contract/openapi";

/** The document as the client generator reads it: stable, two-space indented, ending in a newline. */
export function openApiText(): string {
	return `${JSON.stringify(openApiDocument(REGISTRY_VERSION), null, 2)}\n`;
}

if (require.main === module) {
	const file = process.argv[2];
	if (file) fs.writeFileSync(file, openApiText());
	else process.stdout.write(openApiText());
}
