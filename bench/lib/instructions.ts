/**
 * Instructions per request, counted by valgrind's callgrind (`apt-get install valgrind`): the
 * one figure of the hot reads that does not move with the machine's load. Throughput ratios of
 * one build move by up to 0.15 between runs on a shared machine (docs/performance.md, eighth
 * round); an instruction count of the same build repeats within a few percent, so it tells
 * whether a change made the gateway's work smaller. It counts the process's own work only: not
 * the kernel's (writing the answer), nor what a cache miss costs.
 *
 * The server runs under callgrind with counting off; it is warmed, then counting is switched on
 * (callgrind_control) for each of a few windows of requests, switched off and the counts dumped;
 * the fewest per request are kept.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { installed, runLoad } from "./processes";

export function valgrindMissing(): string | null {
	for (const tool of ["valgrind", "callgrind_control"])
		if (!installed(tool))
			return `${tool} is not installed: the instruction counts need it (apt-get install valgrind)`;
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
			// valgrind's own messages, off the bench's output.
			`--log-file=${path.join(dir, "valgrind.%p.log")}`,
		],
	};
}

export interface InstructionCount {
	/** The fewest instructions per answered request among the windows counted. */
	perRequest: number;
	/** Every window counted (per request each). */
	windows: number[];
	/** The answers' statuses over every window. */
	statusCodes: Record<string, number>;
}

/**
 * Warms the server with `warm` requests over `paths` (in turn), then counts the instructions of
 * `windows` windows of `requests` more each and keeps the fewest. A window can be dearer for
 * work that is not the requests': V8 compiling hot code on its own threads (valgrind runs them
 * slowly, so after a warm-up the first windows still pay for it), a major garbage collection,
 * the process's timers (under callgrind a server answers ~40 times slower, so its timers weigh
 * ~40 times more per request than at full speed). `pid` is the process under callgrind, `dir`
 * its folder.
 */
export async function countInstructions(spec: {
	pid: number;
	dir: string;
	url: string;
	paths: string[];
	headers: Record<string, string>;
	warm: number;
	requests: number;
	windows: number;
}): Promise<InstructionCount> {
	const send = (amount: number) =>
		runLoad({
			url: spec.url,
			connections: 8,
			duration: 3600,
			amount,
			headers: spec.headers,
			plan: { kind: "paths", paths: spec.paths, sequence: true },
		});
	await send(spec.warm);
	const windows: number[] = [];
	const statusCodes: Record<string, number> = {};
	for (let window = 0; window < spec.windows; window++) {
		const { total, value: result } = await counted(spec.pid, spec.dir, () => send(spec.requests));
		windows.push(total / result.total);
		for (const [status, count] of Object.entries(result.statusCodes))
			statusCodes[status] = (statusCodes[status] ?? 0) + count;
	}
	return { perRequest: Math.min(...windows), windows, statusCodes };
}

/** The instructions `pid` executed while `work` ran (counting switched on, then off, and the counts dumped). */
async function counted<T>(pid: number, dir: string, work: () => Promise<T>): Promise<{ total: number; value: T }> {
	const control = (...args: string[]) =>
		execFileSync("callgrind_control", [...args, String(pid)], { stdio: "ignore" });
	const dumps = () => fs.readdirSync(dir).filter((name) => name.startsWith(`callgrind.${pid}.`));
	for (const name of dumps()) fs.rmSync(path.join(dir, name));
	control("--zero");
	control("--instr=on");
	const value = await work();
	control("--instr=off");
	control("--dump");
	let total = 0;
	for (const name of dumps()) {
		const match = /^totals: (\d+)/m.exec(fs.readFileSync(path.join(dir, name), "utf8"));
		if (!match) throw new Error(`callgrind's dump ${name} has no totals`);
		total += Number(match[1]);
	}
	return { total, value };
}
