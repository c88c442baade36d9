/**
 * `npm run lint` and `npm run typecheck` as part of `npm test`: the layering (eslint.config.mjs:
 * shared code never imports a service, a service never another's files), the formatting and the
 * types hold on every commit (ts-jest runs the tests without checking their types, and the build
 * leaves out test/ and bench/).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import packageJson from "../../package.json";

const ROOT = path.resolve(__dirname, "../..");

function run(tool: string, args: string[]): { status: number | null; output: string } {
	const result = spawnSync(path.join(ROOT, "node_modules/.bin", tool), args, {
		cwd: ROOT,
		encoding: "utf8",
		timeout: 120_000,
	});
	return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("npm run lint", () => {
	test("ESLint finds nothing (rules and layering)", () => {
		const { status, output } = run("eslint", ["."]);
		expect({ status, output }).toEqual({ status: 0, output: "" });
	}, 120_000);

	test("every file is formatted as Prettier writes it", () => {
		const { status, output } = run("prettier", ["--list-different", "."]);
		expect({ status, output }).toEqual({ status: 0, output: "" });
	}, 120_000);
});

describe("npm run typecheck", () => {
	test("tsc finds no type error in the sources, tests, bench, CLI and examples", () => {
		// package.json's own command, run without npm's banner.
		const [tool, ...args] = packageJson.scripts.typecheck.split(" ");
		const { status, output } = run(tool, args);
		expect({ status, output }).toEqual({ status: 0, output: "" });
	}, 120_000);
});
