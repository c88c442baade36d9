/**
 * Instructions per request, counted by valgrind's callgrind (`apt-get install valgrind`): the
 * one figure of the hot reads that does not move with the machine's load. Throughput ratios of
 * one build move by up to 0.15 between runs on a shared machine (docs/performance.md, eighth
 * round); an instruction count of the same build repeats within a few percent, so it tells
 * whether a change made the gateway's work smaller. It counts the process's own work only: not
 * the kernel's (writing the answer), nor what a cache miss costs.
 *
 * The server runs under callgrind with counting off; it is warmed, counting is switched on
 * (callgrind_control) for a fixed number of requests, switched off and the counts dumped.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runLoad } from "./processes";

export function valgrindMissing(): string | null {
	for (const tool of ["valgrind", "callgrind_control"]) {
		try {
			execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
		} catch {
			return `${tool} is not installed: the instruction counts need it (apt-get install valgrind)`;
		}
	}
	return null;
}

/** A folder for callgrind's files, and the command a server runs under (its counting off until `countInstructions`). */
export function callgrindWrapper(): { dir: string; wrapper: string[] } {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-bench-callgrind-"));
	return {
		dir,
		wrapper: [
			"valgrind",
			"--tool=callgrind",
			"--instr-atstart=no",
			// Node's JIT writes code it then runs: without this valgrind would run stale translations.
			"--smc-check=all-non-file",
			`--callgrind-out-file=${path.join(dir, "callgrind.%p")}`,
			`--log-file=${path.join(dir, "valgrind.%p.log")}`,
		],
	};
}

export interface InstructionCount {
	/** Instructions the process executed per answered request, in the last counted window. */
	perRequest: number;
	/** The windows counted (per request each), until two in a row agreed. */
	windows: number[];
	requests: number;
	statusCodes: Record<string, number>;
}

/** Two windows in a row within this share of each other: the count has settled. */
const SETTLED = 0.03;
const MAX_WINDOWS = 6;

/**
 * Warms the server with `warm` requests over `paths` (in turn), then counts the instructions of
 * windows of `requests` more until two in a row agree: V8 compiles hot code on threads of its
 * own, which valgrind runs slowly, so the first windows after a warm-up still pay for compiling.
 * `pid` is the process under callgrind, `dir` its folder.
 */
export async function countInstructions(spec: {
	pid: number;
	dir: string;
	url: string;
	paths: string[];
	headers: Record<string, string>;
	warm: number;
	requests: number;
}): Promise<InstructionCount> {
	const control = (...args: string[]) =>
		execFileSync("callgrind_control", [...args, String(spec.pid)], { stdio: "ignore" });
	const send = (amount: number) =>
		runLoad({
			url: spec.url,
			connections: 8,
			duration: 3600,
			amount,
			headers: spec.headers,
			plan: { kind: "paths", paths: spec.paths, sequence: true },
		});
	const dumps = () => fs.readdirSync(spec.dir).filter((name) => name.startsWith(`callgrind.${spec.pid}.`));
	const window = async () => {
		for (const name of dumps()) fs.rmSync(path.join(spec.dir, name));
		control("--zero");
		control("--instr=on");
		const result = await send(spec.requests);
		control("--instr=off");
		control("--dump");
		let total = 0;
		for (const name of dumps()) {
			const match = /^totals: (\d+)/m.exec(fs.readFileSync(path.join(spec.dir, name), "utf8"));
			if (!match) throw new Error(`callgrind's dump ${name} has no totals`);
			total += Number(match[1]);
		}
		return { perRequest: total / result.total, result };
	};
	await send(spec.warm);
	const windows: number[] = [];
	for (;;) {
		const { perRequest, result } = await window();
		windows.push(perRequest);
		const previous = windows.at(-2);
		const settled = previous !== undefined && Math.abs(perRequest - previous) <= SETTLED * previous;
		if (settled || windows.length === MAX_WINDOWS)
			return { perRequest, windows, requests: result.total, statusCodes: result.statusCodes };
	}
}
