// Build of the web console (issue 22): `npm run build:console` writes dist/console/, which the
// registry serves at /console (services/api/console-assets.ts). Hashed file names under assets/
// may be cached for good; index.html never is.
import path from "node:path";
import { defineConfig } from "vite";

export default defineConfig({
	root: __dirname,
	base: "/console/",
	publicDir: false,
	oxc: { jsx: { runtime: "automatic" } },
	build: {
		outDir: path.resolve(__dirname, "../dist/console"),
		emptyOutDir: true,
		assetsDir: "assets",
		// The CSP allows no inline script or style: nothing is inlined as a data: URL module either.
		assetsInlineLimit: 0,
		modulePreload: { polyfill: false },
		sourcemap: false,
		chunkSizeWarningLimit: 800,
		rolldownOptions: {
			// Mantine marks its modules "use client" (for React Server Components); meaningless in a browser bundle.
			onwarn(warning, warn) {
				if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
			},
		},
	},
});
