/**
 * Builds dist/ when the sources are newer: the distributed-mode suites start real OS
 * processes from dist/server.js, exactly as `npm start` does.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.join(__dirname, "..", "..");

function newestSource(dir: string): number {
	let newest = 0;
	for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
		const full = path.join(dir, entry.name);
		if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
		else if (entry.name.endsWith(".ts")) newest = Math.max(newest, fs.statSync(full).mtimeMs);
	}
	return newest;
}

export default async function globalSetup(): Promise<void> {
	const built = path.join(root, "dist", "server.js");
	const sources = Math.max(
		...["src", "services", "mixins", "cli"]
			.filter((dir) => fs.existsSync(path.join(root, dir)))
			.map((dir) => newestSource(path.join(root, dir))),
		fs.statSync(path.join(root, "server.ts")).mtimeMs,
		fs.statSync(path.join(root, "moleculer.config.ts")).mtimeMs,
	);
	if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= sources) return;
	execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
		cwd: root,
		stdio: "inherit",
	});
}
