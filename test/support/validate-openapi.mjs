// Validates an OpenAPI document read from stdin with @seriousme/openapi-schema-validator
// (an ES module, which Jest's CommonJS runtime cannot load). Prints the result as JSON.
import { Validator } from "@seriousme/openapi-schema-validator";

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", async () => {
	const validator = new Validator();
	const result = await validator.validate(JSON.parse(input));
	process.stdout.write(
		JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? [] }),
	);
});
