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
 * the fewest per request are kept. Two figures per window: the whole process's (every thread, its
 * timers too) and the request path's alone: what node's HTTP parser callback ran, inclusive
 * (`Parser::OnStreamRead`: parsing, the handler, writing the answer, the microtasks it queued). The
 * second leaves out the timers and V8's compiler and collector threads, which under callgrind
 * weigh ~40 times more per request than at full speed; it repeats within ~0.3 % (docs/performance.md,
 * tenth round).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { installed, runLoad } from "./processes";

export function valgrindMissing(): string | null {
	for (const tool of ["valgrind", "callgrind_control", "callgrind_annotate"])
		if (!installed(tool))
			return `${tool} is not installed: the instruction counts need it (apt-get install valgrind)`;
	return null;
}

/**
 * A folder for callgrind's files, the command a server runs under (its counting off until
 * `countInstructions`), and node's options for it: `--perf-basic-prof` writes /tmp/perf-<pid>.map,
 * which names the JIT's code in callgrind's dumps (`functionCosts`), and a V8 log (into the folder,
 * not the working directory's isolate-*.log).
 */
export function callgrindWrapper(): { dir: string; wrapper: string[]; nodeArgs: string[] } {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-bench-callgrind-"));
	return {
		dir,
		nodeArgs: ["--perf-basic-prof", `--logfile=${path.join(dir, "v8-%p.log")}`, "--no-logfile-per-isolate"],
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
	/** The fewest per request on the request path alone (node's HTTP parser callback, inclusive). */
	requestPath: number;
	/** Every window's request path (per request each). */
	requestPathWindows: number[];
	/** The answers' statuses over every window. */
	statusCodes: Record<string, number>;
	/** Instructions per request by function, spent in the function itself, in the window of the fewest on the request path. */
	functions: Map<string, number>;
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
	const requestPathWindows: number[] = [];
	const statusCodes: Record<string, number> = {};
	let fewest = { listing: "", requests: 1 };
	for (let window = 0; window < spec.windows; window++) {
		const {
			total,
			requestPath,
			dumps,
			value: result,
		} = await counted(spec.pid, spec.dir, () => send(spec.requests));
		windows.push(total / result.total);
		requestPathWindows.push(requestPath / result.total);
		// Listed by function only while its dumps are there (the next window's counting removes them).
		if (requestPath / result.total <= Math.min(...requestPathWindows))
			fewest = { listing: dumps.map((dump) => annotate(dump, false)).join(""), requests: result.total };
		for (const [status, count] of Object.entries(result.statusCodes))
			statusCodes[status] = (statusCodes[status] ?? 0) + count;
	}
	// Named once every window ran: V8 writes the perf map through a buffer, the latest code last.
	const functions = functionCosts(fewest.listing, spec.pid, fewest.requests);
	return {
		perRequest: Math.min(...windows),
		windows,
		requestPath: Math.min(...requestPathWindows),
		requestPathWindows,
		statusCodes,
		functions,
	};
}

function perfMapOf(pid: number): string {
	return path.join(os.tmpdir(), `perf-${pid}.map`);
}

/** Removes the perf map of a process started with `callgrindWrapper`'s node options (once it has stopped). */
export function removePerfMap(pid: number): void {
	fs.rmSync(perfMapOf(pid), { force: true });
}

/**
 * Instructions per request spent in each function itself, from callgrind_annotate's listing of a
 * dump: the JIT's code (an address to callgrind) named by the process's perf map (V8's tier mark
 * kept: `*` optimised, `^` baseline, `~` interpreted), the rest as callgrind names it. An inlined
 * function's work counts in the function it was inlined into.
 */
function functionCosts(listing: string, pid: number, requests: number): Map<string, number> {
	const code: { start: number; end: number; name: string }[] = [];
	if (fs.existsSync(perfMapOf(pid)))
		for (const entry of fs.readFileSync(perfMapOf(pid), "utf8").split("\n")) {
			const [start, size, ...name] = entry.split(" ");
			if (name.length > 0)
				code.push({
					start: parseInt(start, 16),
					end: parseInt(start, 16) + parseInt(size, 16),
					name: name.join(" "),
				});
		}
	code.sort((a, b) => a.start - b.start);
	const named = (address: number): string => {
		let low = 0;
		let high = code.length - 1;
		while (low <= high) {
			const middle = (low + high) >> 1;
			if (code[middle].start <= address) low = middle + 1;
			else high = middle - 1;
		}
		const entry = code[high];
		return entry && address < entry.end ? entry.name.replace(/^JS:/, "") : "JIT code";
	};
	const costs = new Map<string, number>();
	for (const entry of listing.split("\n")) {
		const match = /^\s*([\d,]+) \([^)]*\)\s+(?:\S*?:)?(.+?)(?: \[[^\]]*\])?$/.exec(entry);
		if (!match || match[2].includes("PROGRAM TOTALS")) continue;
		const address = /^0x([0-9a-f]+)$/.exec(match[2]);
		const name = address ? named(parseInt(address[1], 16)) : match[2].replace(/\(.*$/, "");
		costs.set(name, (costs.get(name) ?? 0) + Number(match[1].replace(/,/g, "")) / requests);
	}
	return costs;
}

/** node's HTTP parser callback, where every request's work starts (its inclusive count is the request path's). */
const REQUEST_PATH_FUNCTION = "Parser::OnStreamRead";

/** callgrind_annotate's listing of a dump: every function, with its own instructions or (`inclusive`) with its callees'. */
function annotate(dump: string, inclusive: boolean): string {
	return execFileSync("callgrind_annotate", [`--inclusive=${inclusive ? "yes" : "no"}`, "--threshold=100", dump], {
		encoding: "utf8",
		maxBuffer: 1 << 28,
	});
}

/** The inclusive instructions of `REQUEST_PATH_FUNCTION` in one dump. */
function requestPathOf(dump: string): number {
	const entry = annotate(dump, true)
		.split("\n")
		.find((text) => text.includes(REQUEST_PATH_FUNCTION));
	const match = entry && /^\s*([\d,]+)/.exec(entry);
	if (!match) throw new Error(`callgrind's dump ${dump} has no ${REQUEST_PATH_FUNCTION}`);
	return Number(match[1].replace(/,/g, ""));
}

/** The instructions `pid` executed while `work` ran (counting switched on, then off, and the counts dumped): all, on the request path, and the dumps (until the next call). */
async function counted<T>(
	pid: number,
	dir: string,
	work: () => Promise<T>,
): Promise<{ total: number; requestPath: number; dumps: string[]; value: T }> {
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
	let requestPath = 0;
	const written = dumps().map((name) => path.join(dir, name));
	for (const dump of written) {
		const match = /^totals: (\d+)/m.exec(fs.readFileSync(dump, "utf8"));
		if (!match) throw new Error(`callgrind's dump ${dump} has no totals`);
		total += Number(match[1]);
		requestPath += requestPathOf(dump);
	}
	return { total, requestPath, dumps: written, value };
}
