// ESLint flat config (ESLint 9 + typescript-eslint 8). Run with `npm run lint`.
// Formatting is Prettier's job (.prettierrc.json); eslint-config-prettier, last below,
// turns off every stylistic rule that could disagree with it.
// @ts-check
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import prettier from "eslint-config-prettier";
import globals from "globals";
import tseslint from "typescript-eslint";

// ---- Layering ------------------------------------------------------------------------------
// Each element is a folder (root-relative; `*` stands for any one folder name) and the
// root-relative folders or modules its files may import besides their own folder. Lowest first.
// Anything not listed here is an entry point and may import anything: server.ts,
// moleculer.config.ts, services/index.ts (the composition root), cli/, bench/, test/,
// examples/, client/. External packages ("moleculer", "node:fs", ...) are never restricted.
const LAYERS = [
	{ element: "src", may: ["src"] }, // a new src/<folder> not listed below: src only, never mixins/ or services/
	{ element: "src/config", may: ["package.json"] },
	{ element: "src/store", may: ["src/config"] },
	{ element: "src/contract", may: ["src/config", "src/store"] },
	{ element: "src/metrics", may: [] },
	{ element: "src/platform", may: ["src/config", "src/store", "src/contract", "src/metrics", "moleculer.config"] },
	{ element: "src/exchange", may: ["src/config", "src/store", "src/contract", "src/platform"] },
	{ element: "src/oauth", may: ["src/config", "src/contract", "src/platform"] }, // Bearer tokens (decisions §15), the gateway's
	{ element: "mixins", may: ["src"] },
	{ element: "services/*", may: ["src", "mixins"] }, // and its own services/<name>/, never another service
];

// The project imports its own files only by relative path (tsconfig has no `paths`), so a
// file's import is checked by where its leading `../` steps lead. The rule is ESLint's own
// `no-restricted-imports` (it also covers `import type`, `export ... from` and
// `import x = require()`), generated per folder depth so that subfolders such as
// src/store/sqlite/ are judged correctly. Not covered: `require()` calls (already flagged by
// @typescript-eslint/no-require-imports) and dynamic `import()` of project files.
const MAX_SUBFOLDER_DEPTH = 6;
const SOURCE_FILES = "{ts,mts,cts,js,mjs,cjs}";
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const moduleEnd = "(?:/|\\.[cm]?[jt]sx?$|$)";

function layeringConfigs({ element, may }) {
	const segments = element.split("/");
	const n = segments.length;
	const message = `${element}/ may import only ${may.length ? may.join(", ") + " and " : ""}its own folder (project layering: eslint.config.mjs).`;
	const configs = [];
	for (let depth = 0; depth <= MAX_SUBFOLDER_DEPTH; depth++) {
		const patterns = [];
		// j steps above the element's folder: `depth + j` leading `../` land in that ancestor.
		for (let j = 1; j <= n; j++) {
			const ancestor = segments.slice(0, n - j).join("/");
			const allowed = [...may, element]
				.filter((target) => ancestor === "" || target.startsWith(ancestor + "/"))
				.map((target) => (ancestor === "" ? target : target.slice(ancestor.length + 1)))
				.filter((rest) => !rest.includes("*")) // own services/<name> reached via ../<name>/: write ./ instead
				.map((rest) => escape(rest) + moduleEnd);
			const notAllowed = allowed.length ? `(?!(?:${allowed.join("|")}))` : "";
			patterns.push({ regex: `^(?:\\.\\./){${depth + j}}(?!\\.\\.(?:/|$))${notAllowed}`, message });
		}
		// Out of the repository, or a bare `..`/`../..` that leaves the element.
		patterns.push({ regex: `^(?:\\.\\./){${depth + n + 1}}`, message });
		patterns.push({ regex: `^\\.\\.(?:/\\.\\.){${depth},}/?$`, message });
		configs.push({
			name: `layering/${element}/${"*/".repeat(depth)}`,
			files: [`${element}/${"*/".repeat(depth)}*.${SOURCE_FILES}`],
			rules: { "no-restricted-imports": ["error", { patterns }] },
		});
	}
	return configs;
}

export default defineConfig(
	{
		name: "ignores",
		ignores: ["dist/", "coverage/", "node_modules/", "client/schema.d.ts", "seed/", "docs/"],
	},
	{
		name: "options",
		linterOptions: { reportUnusedDisableDirectives: "error" },
	},
	js.configs.recommended,
	tseslint.configs.recommended,
	{
		name: "project/rules",
		rules: {
			// The code marks its deliberate console output with eslint-disable comments; services log
			// through the broker's logger. bench/ and examples/ are console programs (see below).
			"no-console": "error",
			// negotiation.ts writes `*<zero-width space>/*` inside a block comment on purpose.
			"no-irregular-whitespace": ["error", { skipComments: true }],
			"@typescript-eslint/no-unused-vars": [
				"error",
				{
					args: "after-used",
					argsIgnorePattern: "^_",
					varsIgnorePattern: "^_",
					caughtErrorsIgnorePattern: "^_",
					destructuredArrayIgnorePattern: "^_",
					ignoreRestSiblings: true,
				},
			],
		},
	},
	{
		// The web console (console/): browser code bundled by Vite; its tsconfig adds DOM and JSX.
		name: "project/web-console",
		files: ["console/src/**/*.{ts,tsx}"],
		languageOptions: { globals: globals.browser },
	},
	{
		name: "project/console-programs",
		files: ["bench/**", "examples/**"],
		rules: { "no-console": "off" },
	},
	{
		name: "project/commonjs",
		files: ["**/*.js", "**/*.cjs"],
		languageOptions: { sourceType: "commonjs", globals: globals.node },
		rules: { "@typescript-eslint/no-require-imports": "off" },
	},
	{
		name: "project/esm-js",
		files: ["**/*.mjs"],
		languageOptions: { sourceType: "module", globals: globals.node },
	},
	...LAYERS.flatMap(layeringConfigs),
	prettier,
);
