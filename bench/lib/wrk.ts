/**
 * Throughput with wrk (Debian's `wrk`, written in C): one thread on one core, the server on the
 * other, so the figure is the server's and not the load client's (a Node load client saturates
 * at about a bare node:http server's rate). Install it with `apt-get install wrk`.
 */
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { installed } from "./processes";

/** The core wrk runs on; every server measured is pinned to SERVER_CORE. */
export const CLIENT_CORE = 0;
export const SERVER_CORE = 1;

export interface WrkResult {
	requestsPerSecond: number;
	/** Responses wrk received. */
	total: number;
	non2xx: number;
	socketErrors: number;
	latency: { p50: number; p99: number };
}

export function wrkMissing(): string | null {
	for (const tool of ["wrk", "taskset"])
		if (!installed(tool))
			return `${tool} is not installed: the hot-read throughputs need it (apt-get install ${tool === "wrk" ? "wrk" : "util-linux"})`;
	if (os.cpus().length < 2) return "wrk and the server need a core each: this machine has one";
	return null;
}

/** Pins every thread of a process to the server core. */
export function pinToServerCore(pid: number): void {
	execFileSync("taskset", ["-a", "-cp", String(SERVER_CORE), String(pid)], { stdio: "ignore" });
}

const SCRIPT = `
local paths = {}
local index = 0
function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
end
function request()
  index = index % #paths + 1
  return wrk.format(nil, paths[index])
end
`;

let scriptDir: string | null = null;

function scriptFiles(paths: string[]): { script: string; pathsFile: string } {
	scriptDir ??= fs.mkdtempSync(path.join(os.tmpdir(), "registry-bench-wrk-"));
	const script = path.join(scriptDir, "paths.lua");
	if (!fs.existsSync(script)) fs.writeFileSync(script, SCRIPT);
	// Named by its content and never rewritten: a wrk started a moment ago may still be reading it.
	const text = `${paths.join("\n")}\n`;
	const pathsFile = path.join(scriptDir, `paths-${createHash("sha256").update(text).digest("hex").slice(0, 16)}.txt`);
	if (!fs.existsSync(pathsFile)) fs.writeFileSync(pathsFile, text);
	return { script, pathsFile };
}

export function removeWrkFiles(): void {
	if (scriptDir) fs.rmSync(scriptDir, { recursive: true, force: true });
	scriptDir = null;
}

function milliseconds(text: string): number {
	const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
	if (!match) return NaN;
	const value = Number(match[1]);
	return match[2] === "us"
		? value / 1000
		: match[2] === "ms"
			? value
			: match[2] === "s"
				? value * 1000
				: value * 60_000;
}

export function parseWrk(output: string): WrkResult {
	const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? NaN);
	const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
	return {
		requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
		total: number(/(\d+) requests in/),
		non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
		socketErrors: socket ? socket.slice(1).reduce((sum, value) => sum + Number(value), 0) : 0,
		latency: {
			p50: milliseconds(/\s50%\s+(\S+)/.exec(output)?.[1] ?? ""),
			p99: milliseconds(/\s99%\s+(\S+)/.exec(output)?.[1] ?? ""),
		},
	};
}

/**
 * One wrk run: one thread pinned to the client core, `connections` keep-alive connections, the
 * paths in turn (one path: no script, wrk at its fastest).
 */
export function runWrk(spec: {
	url: string;
	paths: string[];
	headers: Record<string, string>;
	connections: number;
	duration: number;
}): Promise<WrkResult> {
	const headerArgs = Object.entries(spec.headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]);
	const common = [
		"-c",
		String(CLIENT_CORE),
		"wrk",
		"-t1",
		`-c${spec.connections}`,
		`-d${spec.duration}s`,
		"--latency",
	];
	let args: string[];
	if (spec.paths.length === 1) args = [...common, ...headerArgs, `${spec.url}${spec.paths[0]}`];
	else {
		const { script, pathsFile } = scriptFiles(spec.paths);
		args = [...common, ...headerArgs, "-s", script, spec.url, "--", pathsFile];
	}
	return new Promise((resolve, reject) => {
		execFile("taskset", args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
			if (error) return reject(new Error(`wrk failed: ${error.message}\n${stderr}`));
			const result = parseWrk(stdout);
			if (!Number.isFinite(result.requestsPerSecond))
				return reject(new Error(`wrk's output not understood:\n${stdout}`));
			resolve(result);
		});
	});
}
