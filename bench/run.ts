/**
 * `npm run bench`: how close the registry comes to this machine's limit, side by side in one
 * run (docs/performance.md). Every figure prints one summary line
 *
 *   name: value unit (ratio x of baseline)   [target …] ok|MISSED
 *
 * and the run exits non-zero when a target is missed. Not a test: nothing here runs in CI.
 *
 * What it runs, each server in its own process and every load from a separate process
 * (wrk for the hot reads, autocannon for the rest, or a one-connection client for latencies in
 * microseconds):
 *   - the baseline: a bare node:http server answering a captured lookup answer (bytes and
 *     headers) from memory; beside it for the hot reads, the "moleculer-web limit": a bare
 *     moleculer-web gateway whose alias writes the same bytes (bench/moleculer-web-limit.ts),
 *     for reading also with moleculer's metrics on and (beside the one-process lookup) with the
 *     design's two hooks, empty;
 *   - the registry as `node dist/server.js` on generated data (npm run bench:data's
 *     generator; 10,000 and 100,000 participants, cached under bench/results/data);
 *   - the hot reads (lookup, authenticated read) with wrk (`apt-get install wrk`): one thread
 *     pinned to one core, every server pinned to the other, with k8s/configmap.yaml's settings
 *     (RATE_LIMIT set high enough not to refuse the bench, METRICS on), in one process and in the
 *     topology of k8s/ (one process per Deployment, SERVICES as k8s/ sets them) over the local
 *     NATS and Redis with a namespace of their own, removed afterwards; /metrics must count
 *     every request sent (`api.rest`). autocannon, one Node process, saturates at about the
 *     bare server's rate: its ratios near 1.0 measured the client;
 *   - `--only hooks`: what each of the gateway's hooks costs per request (bench/hook-costs.ts);
 *   - `--only instructions`: instructions per hot read under valgrind's callgrind, the registry
 *     against the moleculer-web limit (bench/lib/instructions.ts): unlike a throughput, it
 *     repeats on a machine whose speed drifts.
 * Throughputs are measured in rounds that alternate the baseline and the registry, so both
 * see the same machine; a ratio is the median of the rounds' ratios, each round against the
 * baseline round just before it (this machine's speed drifts within minutes). Options: --rounds N, --duration S, --only a,b (lookup, auth,
 * hot (the hot reads only), hooks (what each hook costs), instructions (callgrind's counts), distributed, finds, writes, memory), --million (the 1,000,000-participant run of
 * docs/performance.md: finds and lookup only).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { SingleBar, Presets } from "cli-progress";
import { parseAllDocuments } from "yaml";
import { createGenerator, GENERATOR_VERSION, nameWords, qualifiedIdentifier, type Generator } from "./lib/generate";
import type { LatencyResult, LoadResult } from "./lib/load-client";
import {
	callgrindWrapper,
	countInstructions,
	removePerfMap,
	valgrindMissing,
	type InstructionCount,
} from "./lib/instructions";
import { loadParticipants, readDemoSeed, ROOT } from "./lib/load";
import { reachable } from "../src/platform/local-network";
import {
	NATS_URL,
	REDIS_URL,
	rssOf,
	runLoad,
	startBaseline,
	startCluster,
	startMoleculerWebLimit,
	startRegistry,
	type BaselineServer,
	type RegistryProcess,
} from "./lib/processes";
import {
	CLIENT_CORE,
	pinToServerCore,
	removeWrkFiles,
	runWrk,
	SERVER_CORE,
	wrkMissing,
	type WrkResult,
} from "./lib/wrk";

// ---- options -----------------------------------------------------------------------------

interface Options {
	rounds: number;
	duration: number;
	latencySeconds: number;
	small: number;
	large: number;
	only: Set<string> | null;
	million: boolean;
	dataRoot: string;
}

function parseOptions(argv: string[]): Options {
	const options: Options = {
		rounds: 3,
		duration: 6,
		latencySeconds: 5,
		small: 10_000,
		large: 100_000,
		only: null,
		million: false,
		dataRoot: path.join(ROOT, "bench", "results", "data"),
	};
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].split("=", 2);
		const value = () => inline ?? argv[++i];
		if (flag === "--rounds") options.rounds = Math.max(1, Number(value()));
		else if (flag === "--duration") options.duration = Math.max(1, Number(value()));
		else if (flag === "--latency-seconds") options.latencySeconds = Math.max(1, Number(value()));
		else if (flag === "--small") options.small = Number(value());
		else if (flag === "--large") options.large = Number(value());
		else if (flag === "--only") options.only = new Set(value().split(","));
		else if (flag === "--million") options.million = true;
		else if (flag === "--data-root") options.dataRoot = path.resolve(value());
		else throw new Error(`unknown option ${flag}`);
	}
	return options;
}

// ---- figures -----------------------------------------------------------------------------

interface Figure {
	name: string;
	value: number;
	unit: string;
	/** Against the baseline's figure of the same kind. */
	ratio?: number;
	/** What `ratio` is of, when not the bare node:http baseline. */
	ratioOf?: string;
	target?: string;
	pass?: boolean;
	detail?: string;
}

const figures: Figure[] = [];

function format(value: number, unit: string): string {
	if (unit === "req/s" || unit === "/s" || unit === "instructions/request")
		return Math.round(value).toLocaleString("en-US");
	if (unit === "MB") return value.toFixed(0);
	if (unit === "ms") return value < 10 ? value.toFixed(2) : value.toFixed(1);
	return value.toFixed(2);
}

function line(figure: Figure): string {
	const ratio = figure.ratio === undefined ? "" : ` (${figure.ratio.toFixed(2)}x of ${figure.ratioOf ?? "baseline"})`;
	const target = figure.target ? `   [target ${figure.target}] ${figure.pass === false ? "MISSED" : "ok"}` : "";
	return `${figure.name}: ${format(figure.value, figure.unit)} ${figure.unit}${ratio}${target}`;
}

function report(figure: Figure): void {
	figures.push(figure);
	console.log(`  ${line(figure)}${figure.detail ? `\n      ${figure.detail}` : ""}`);
}

function note(text: string): void {
	console.log(`\n${text}`);
}

const mb = (bytes: number) => bytes / 1024 / 1024;
const load = () =>
	os
		.loadavg()
		.map((value) => value.toFixed(1))
		.join(" ");

// ---- data --------------------------------------------------------------------------------

/** Generated data sets are kept between runs (bench/results/ is not in git). */
async function ensureData(options: Options, count: number): Promise<string> {
	const dir = path.join(options.dataRoot, `p${count}`);
	const markerFile = path.join(dir, "bench-data.json");
	const marker = fs.existsSync(markerFile)
		? (JSON.parse(fs.readFileSync(markerFile, "utf8")) as { participants: number; generator: number })
		: null;
	if (marker?.participants === count && marker.generator === GENERATOR_VERSION) return dir;
	fs.rmSync(dir, { recursive: true, force: true });
	note(`generating ${count.toLocaleString("en-US")} participants into ${dir}`);
	const bar = new SingleBar(
		{
			format: " {bar} {percentage}% | {value}/{total} participants | ETA {eta_formatted}",
			hideCursor: true,
			noTTYOutput: true,
			notTTYSchedule: 10000,
		},
		Presets.shades_classic,
	);
	let started = false;
	const result = await loadParticipants(dir, count, {
		phase: () => undefined,
		tick(done, total) {
			if (!started) bar.start(total, 0);
			started = true;
			bar.update(done);
		},
	});
	if (started) bar.stop();
	console.log(
		`  loaded in ${((result.importMs + result.rebuildMs) / 1000).toFixed(1)} s (lookup rebuilt: ${result.organizations} organizations)`,
	);
	fs.writeFileSync(
		markerFile,
		JSON.stringify({ participants: count, generator: GENERATOR_VERSION, at: new Date().toISOString() }),
	);
	return dir;
}

// ---- requests ----------------------------------------------------------------------------

const LOOKUP_ACCEPT = "application/vnd.registry.organizations.processes.v1+json";
const READ_ACCEPT = "application/vnd.registry.participants.get.v1+json";
const basic = (username: string, password: string) =>
	`Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;

interface Workload {
	generator: Generator;
	sp1: string;
	sp1Auth: string;
	adminAuth: string;
	lookupPaths(count: number): string[];
	readPaths(count: number): string[];
}

function workload(): Workload {
	const seed = readDemoSeed();
	const generator = createGenerator(seed);
	const account = (username: string) => {
		const found = seed.accounts.find((candidate) => candidate.username === username);
		if (!found) throw new Error(`the demo seed has no account ${username}`);
		return found;
	};
	const sp1 = account("sp1");
	const admin = account("admin");
	return {
		generator,
		sp1: (sp1.serviceProvider ?? "").toLowerCase(),
		sp1Auth: basic(sp1.username, sp1.password),
		adminAuth: basic(admin.username, admin.password),
		lookupPaths: (count) =>
			Array.from(
				{ length: count },
				(_, index) =>
					`/rest/api/organizations/${qualifiedIdentifier(generator.organizationNumber(index))}/processes`,
			),
		readPaths(count) {
			const paths: string[] = [];
			for (let index = 0; index < count; index++) {
				const participant = generator.participant(index);
				if (participant.serviceProvider === (sp1.serviceProvider ?? "").toLowerCase())
					paths.push(`/rest/api/participants/${qualifiedIdentifier(participant.organizationIdentifier)}`);
			}
			return paths;
		},
	};
}

// ---- measurements ------------------------------------------------------------------------

interface Comparison {
	baseline: LoadResult;
	subject: LoadResult;
	/** Server CPU per answered request in the subject's best round (µs), for reading noise. */
	cpuMicros?: number;
	/** Requests the subject answered in all rounds together (for the metrics check). */
	answered: number;
	/**
	 * The median of each round's subject/baseline ratio: this machine's speed drifts within
	 * minutes, so a round is compared with the baseline round just before it, not with the best.
	 */
	ratio: number;
}

/** CPU time so far (ms) of processes together, and the kernel's part of it (from /proc/<pid>/stat, in ticks of 10 ms). */
function cpuTimes(pids: number[]): { total: number; kernel: number } {
	let user = 0;
	let kernel = 0;
	for (const pid of pids) {
		const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
		user += Number(fields[11]) * (1000 / 100);
		kernel += Number(fields[12]) * (1000 / 100);
	}
	return { total: user + kernel, kernel };
}

/** Baseline and subject in alternating rounds; the best round of each. */
async function compare(
	options: Options,
	baseline: BaselineServer,
	url: string,
	paths: string[],
	headers: Record<string, string>,
	subjectPid?: number,
): Promise<Comparison> {
	let best: Comparison | null = null;
	let bestBaseline: LoadResult | null = null;
	let answered = 0;
	const ratios: number[] = [];
	for (let round = 0; round < options.rounds; round++) {
		const base = await runLoad({
			url: baseline.url,
			connections: 64,
			duration: options.duration,
			headers,
			plan: { kind: "paths", paths },
		});
		if (!bestBaseline || base.requestsPerSecond > bestBaseline.requestsPerSecond) bestBaseline = base;
		const before = subjectPid ? cpuTimes([subjectPid]).total : 0;
		const subject = await runLoad({
			url,
			connections: 64,
			duration: options.duration,
			headers,
			plan: { kind: "paths", paths },
		});
		answered += subject.total;
		ratios.push(subject.requestsPerSecond / base.requestsPerSecond);
		const cpu = subjectPid
			? ((cpuTimes([subjectPid]).total - before) * 1000) / Math.max(1, subject.total)
			: undefined;
		console.log(
			`    round ${round + 1}: baseline ${Math.round(base.requestsPerSecond)} req/s, registry ${Math.round(subject.requestsPerSecond)} req/s (p50 ${subject.latency.p50} ms, p99 ${subject.latency.p99} ms${cpu ? `, ${cpu.toFixed(0)} µs CPU/request` : ""}; load ${load()})`,
		);
		if (subject.non2xx > 0 || subject.errors > 0)
			console.log(
				`    ! ${subject.non2xx} non-2xx, ${subject.errors} errors: ${JSON.stringify(subject.statusCodes)}`,
			);
		if (!best || subject.requestsPerSecond > best.subject.requestsPerSecond)
			best = { baseline: base, subject, cpuMicros: cpu, answered: 0, ratio: 0 };
	}
	const ratio = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
	console.log(`    round ratios: ${ratios.map((value) => value.toFixed(2)).join(", ")} (median ${ratio.toFixed(2)})`);
	return { ...(best as Comparison), baseline: bestBaseline as LoadResult, answered, ratio };
}

/** Every path once (64 connections): the lookup's cache holds every organization afterwards. */
async function warmEvery(url: string, paths: string[], headers: Record<string, string>): Promise<void> {
	const started = performance.now();
	const result = await runLoad({
		url,
		connections: 64,
		duration: 600,
		amount: paths.length,
		headers,
		plan: { kind: "paths", paths, sequence: true },
	});
	const others = Object.entries(result.statusCodes).filter(([status]) => !status.startsWith("2"));
	const detail = others.length > 0 ? `: ${others.map(([status, count]) => `${count} × ${status}`).join(", ")}` : "";
	console.log(
		`    warmed ${result.total.toLocaleString("en-US")} organizations in ${((performance.now() - started) / 1000).toFixed(1)} s (${result.non2xx} non-2xx${detail})`,
	);
}

function latency(
	options: Options,
	url: string,
	paths: string[],
	headers: Record<string, string>,
): Promise<LatencyResult> {
	return runLoad({ latency: true, url, paths, headers, duration: options.latencySeconds, warmup: 1 });
}

async function capture(
	url: string,
	path: string,
	headers: Record<string, string>,
): Promise<{ status: number; headers: [string, string][]; body: string }> {
	const response = await fetch(`${url}${path}`, { headers });
	const body = await response.text();
	if (response.status !== 200) throw new Error(`capturing ${path}: ${response.status} ${body}`);
	return { status: response.status, headers: [...response.headers.entries()], body };
}

function ratioFigure(
	name: string,
	comparison: Comparison,
	minRatio: number | undefined,
	extra?: { maxP99?: number },
): Figure {
	const ratio = comparison.ratio;
	const p99ok = extra?.maxP99 === undefined || comparison.subject.latency.p99 < extra.maxP99;
	const targets = [
		minRatio !== undefined ? `≥ ${minRatio.toFixed(2)}x` : "",
		extra?.maxP99 !== undefined ? `p99 < ${extra.maxP99} ms` : "",
	]
		.filter(Boolean)
		.join(", ");
	return {
		name,
		value: comparison.subject.requestsPerSecond,
		unit: "req/s",
		ratio,
		target: targets || undefined,
		pass: targets ? (minRatio === undefined || ratio >= minRatio) && p99ok : undefined,
		detail: `median of the rounds' ratios; best round p50 ${comparison.subject.latency.p50} ms, p99 ${comparison.subject.latency.p99} ms at 64 connections; best baseline round ${Math.round(comparison.baseline.requestsPerSecond).toLocaleString("en-US")} req/s (p50 ${comparison.baseline.latency.p50} ms, p99 ${comparison.baseline.latency.p99} ms)${comparison.cpuMicros ? `; registry CPU ${comparison.cpuMicros.toFixed(0)} µs/request` : ""}`,
	};
}

// ---- the registry's pieces ---------------------------------------------------------------

/** The k8s/ Deployments and the SERVICES each runs (the topology the bench starts). */
function k8sTopology(): Record<string, string> {
	const dir = path.join(ROOT, "k8s");
	const topology: Record<string, string> = {};
	for (const file of fs
		.readdirSync(dir)
		.filter((name) => /\.ya?ml$/.test(name))
		.sort()) {
		for (const document of parseAllDocuments(fs.readFileSync(path.join(dir, file), "utf8"))) {
			const doc = document.toJS() as {
				kind?: string;
				metadata?: { name?: string };
				spec?: { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } };
			} | null;
			if (doc?.kind !== "Deployment") continue;
			const services = doc.spec?.template?.spec?.containers
				?.flatMap((container) => container.env ?? [])
				.find((entry) => entry.name === "SERVICES")?.value;
			if (services && doc.metadata?.name) topology[doc.metadata.name] = services;
		}
	}
	if (!Object.values(topology).some((services) => services.split(",").includes("api")))
		throw new Error("k8s/ has no gateway Deployment (SERVICES with api)");
	return topology;
}

/** The default configuration; LOG_LEVEL only quiets the start-up lines (no request is logged at info either). */
const ONE_PROCESS_ENV = (dataDir: string): Record<string, string> => ({ DATA_DIR: dataDir, LOG_LEVEL: "warn" });

async function idleRss(process: RegistryProcess, settleMs = 2000): Promise<number> {
	await new Promise((resolve) => setTimeout(resolve, settleMs));
	return rssOf(process.child.pid as number);
}

// ---- scenarios ---------------------------------------------------------------------------

async function runMemoryAndStart(): Promise<void> {
	note("memory and start: an empty registry");
	const empty = fs.mkdtempSync(path.join(os.tmpdir(), "registry-bench-empty-"));
	try {
		const registry = await startRegistry("empty", ONE_PROCESS_ENV(empty));
		const rss = await idleRss(registry);
		await registry.stop();
		report({
			name: "start to ready, empty",
			value: registry.readyMs,
			unit: "ms",
			target: "< 3000 ms",
			pass: registry.readyMs < 3000,
		});
		report({ name: "RSS idle, empty", value: mb(rss), unit: "MB", target: "< 150 MB", pass: mb(rss) < 150 });
	} finally {
		fs.rmSync(empty, { recursive: true, force: true });
	}
}

interface Sizes {
	small: string;
	large: string;
}

/** The finds measured at a registry of `count` participants (paths), by kind. */
function findPaths(work: Workload, count: number): Record<"deep" | "middle" | "word" | "number", string[]> {
	return {
		deep: [`/rest/api/participants?page=250&size=20&sort=name`],
		middle: [`/rest/api/participants?page=${Math.floor(count / 2 / 20)}&size=20&sort=name`],
		word: nameWords().map((word) => `/rest/api/participants?query=${encodeURIComponent(word)}&size=20`),
		number: Array.from(
			{ length: 2000 },
			(_, index) =>
				`/rest/api/participants?query=${work.generator.organizationNumber(Math.floor((index * count) / 2000))}`,
		),
	};
}

const findHeadersOf = (work: Workload) => ({
	accept: "application/vnd.registry.participants.find.v1+json",
	authorization: work.adminAuth,
});

/** The one-process figures at the large data set: start, lookup, authenticated read, finds, RSS. */
async function runOneProcess(
	options: Options,
	data: Sizes,
	work: Workload,
	want: (name: string) => boolean,
): Promise<void> {
	const lookupHeaders = { accept: LOOKUP_ACCEPT };
	const count = options.large;
	const paths = work.lookupPaths(count);
	const size = count.toLocaleString("en-US");

	// Prime the data set once (schema changes are applied, the files are in the page cache):
	// the start time measured is the registry's, not the first read of a cold disk.
	await (await startRegistry("prime", ONE_PROCESS_ENV(data.large))).stop();

	note(`one process, ${size} participants (${data.large})`);
	const registry = await startRegistry("one-process", ONE_PROCESS_ENV(data.large));
	let baseline: BaselineServer | null = null;
	try {
		const rssStarted = await idleRss(registry, 1000);
		if (want("memory"))
			report({
				name: `start to ready, ${size} participants`,
				value: registry.readyMs,
				unit: "ms",
				target: "< 5000 ms",
				pass: registry.readyMs < 5000,
			});
		const answer = await capture(registry.url, paths[0], lookupHeaders);
		baseline = await startBaseline(answer);
		console.log(`    baseline answers ${answer.body.length} bytes with ${answer.headers.length} headers`);
		const baseLatency = await latency(options, baseline.url, paths, lookupHeaders);

		if (want("lookup")) {
			await warmEvery(registry.url, paths, lookupHeaders);
			const lookup = await latency(options, registry.url, paths, lookupHeaders);
			report({
				name: "lookup latency, one client, 100k",
				value: lookup.p50,
				unit: "ms",
				ratio: baseLatency.p50 / lookup.p50,
				detail: `p50; p99 ${lookup.p99.toFixed(2)} ms; baseline p50 ${baseLatency.p50.toFixed(3)} ms`,
			});
		}

		if (want("auth")) {
			// The held read answers the RSS figure below includes.
			const readHeaders = {
				accept: READ_ACCEPT,
				authorization: work.sp1Auth,
			};
			await warmEvery(registry.url, work.readPaths(count), readHeaders);
		}

		if (want("finds")) {
			const finds = findPaths(work, count);
			const names: Record<keyof typeof finds, string> = {
				deep: "find, sorted page 251 (offset 5,000), 100k",
				middle: `find, sorted middle page (offset ${(Math.floor(count / 2 / 20) * 20).toLocaleString("en-US")}), 100k`,
				word: "find, name-word query, 100k",
				number: "find, organization-number query, 100k",
			};
			for (const kind of Object.keys(names) as Array<keyof typeof finds>) {
				const result = await latency(options, registry.url, finds[kind], findHeadersOf(work));
				if (result.non2xx > 0) console.log(`    ! find ${kind}: ${JSON.stringify(result.statusCodes)}`);
				report({
					name: names[kind],
					value: result.p50,
					unit: "ms",
					target: "p50 < 50 ms",
					pass: result.p50 < 50 && result.non2xx === 0,
					detail: `p50; p90 ${result.p90.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ${result.count} requests, one client`,
				});
			}
		}

		if (want("memory")) {
			const rss = await idleRss(registry);
			report({
				name: `RSS holding ${size} participants`,
				value: mb(rss),
				unit: "MB",
				target: "< 300 MB",
				pass: mb(rss) < 300,
				detail: `after the loads above (${want("lookup") ? "every organization's lookup answer" : "no lookup answer"} and ${want("auth") ? "sp1's read answers" : "no read answer"} held); ${mb(rssStarted).toFixed(0)} MB right after start`,
			});
		}
	} finally {
		await baseline?.stop();
		await registry.stop();
	}
}

/** One-client rounds per size and kind in the growth figures. */
const GROWTH_ROUNDS = 3;

/**
 * How cost grows from 10,000 to 100,000 participants: both registries run at once and the
 * one-client latency rounds alternate between them (small, large, large, small, …), each
 * side's median p50 compared. This machine's speed drifts by up to 2x within minutes, so p50s
 * of ~0.1–1 ms measured minutes apart compared the drift as much as the code (the same find
 * code read 1.82x, 1.93x and 2.66x in three runs).
 */
async function runGrowth(
	options: Options,
	data: Sizes,
	work: Workload,
	want: (name: string) => boolean,
): Promise<void> {
	note(
		`how cost grows, ${options.small.toLocaleString("en-US")} → ${options.large.toLocaleString("en-US")} participants (p50, one client, both registries running, rounds alternating)`,
	);
	const small = await startRegistry("growth-small", ONE_PROCESS_ENV(data.small));
	const large = await startRegistry("growth-large", ONE_PROCESS_ENV(data.large));
	try {
		const sides = [
			{ registry: small, count: options.small },
			{ registry: large, count: options.large },
		];
		const lookupHeaders = { accept: LOOKUP_ACCEPT };
		const kinds: Array<{
			name: string;
			limit: number;
			headers: Record<string, string>;
			paths: (count: number) => string[];
		}> = [];
		if (want("lookup")) {
			for (const side of sides) await warmEvery(side.registry.url, work.lookupPaths(side.count), lookupHeaders);
			kinds.push({
				name: "lookup p50 growth",
				limit: 1.2,
				headers: lookupHeaders,
				paths: (count) => work.lookupPaths(count),
			});
		}
		if (want("finds")) {
			const findHeaders = findHeadersOf(work);
			kinds.push(
				{
					name: "find sorted page 251 p50 growth",
					limit: 2,
					headers: findHeaders,
					paths: (count) => findPaths(work, count).deep,
				},
				{
					name: "find name-word p50 growth",
					limit: 2,
					headers: findHeaders,
					paths: (count) => findPaths(work, count).word,
				},
				{
					name: "find organization-number p50 growth",
					limit: 2,
					headers: findHeaders,
					paths: (count) => findPaths(work, count).number,
				},
			);
		}
		const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
		for (const kind of kinds) {
			const p50s = sides.map(() => [] as number[]);
			for (let round = 0; round < GROWTH_ROUNDS; round++) {
				const order = round % 2 === 0 ? [0, 1] : [1, 0];
				for (const index of order) {
					const result = await latency(
						options,
						sides[index].registry.url,
						kind.paths(sides[index].count),
						kind.headers,
					);
					if (result.non2xx > 0) console.log(`    ! ${kind.name}: ${JSON.stringify(result.statusCodes)}`);
					p50s[index].push(result.p50);
				}
			}
			const [smallP50, largeP50] = p50s.map(median);
			const factor = largeP50 / smallP50;
			const rounds = (values: number[]) => values.map((value) => value.toFixed(3)).join(", ");
			report({
				name: kind.name,
				value: factor,
				unit: "x",
				target: `≤ ${kind.limit.toFixed(2)}x`,
				pass: factor <= kind.limit,
				detail: `median p50 ${smallP50.toFixed(3)} ms → ${largeP50.toFixed(3)} ms (rounds: ${rounds(p50s[0])} → ${rounds(p50s[1])})`,
			});
		}
	} finally {
		await small.stop();
		await large.stop();
	}
}

/**
 * The registry's own settings from k8s/configmap.yaml (issue 15: measure what k8s ships), less
 * the addresses and paths the bench sets itself, with RATE_LIMIT high enough that the bench's
 * one client address is never refused (it still runs every request through the limit), or unset.
 */
function configMapEnv(rateLimited: boolean): Record<string, string> {
	const file = path.join(ROOT, "k8s", "configmap.yaml");
	const doc = parseAllDocuments(fs.readFileSync(file, "utf8"))[0].toJS() as { data: Record<string, string> };
	const env = { ...doc.data };
	for (const name of ["TRANSPORTER", "CACHER", "NAMESPACE", "DATA_DIR", "MONGO_URI"]) delete env[name];
	env.RATE_LIMIT = rateLimited ? "1000000000" : "";
	return env;
}

/** Sum of moleculer_request_total samples of one action in a process's /metrics. */
async function requestsCounted(url: string, action: string): Promise<number> {
	const text = await (await fetch(`${url}/metrics`)).text();
	let total = 0;
	for (const entry of text.split("\n"))
		if (entry.startsWith("moleculer_request_total{") && entry.includes(`action="${action}"`))
			total += Number(entry.slice(entry.lastIndexOf(" ") + 1));
	return total;
}

function metricsFigure(name: string, action: string, answered: number, counted: number): Figure {
	const gap = Math.abs(counted - answered) / Math.max(1, answered);
	return {
		name,
		value: gap * 100,
		unit: "%",
		target: "≤ 1 %",
		pass: gap <= 0.01,
		detail: `${answered.toLocaleString("en-US")} requests answered, ${counted.toLocaleString("en-US")} counted in moleculer_request_total{action="${action}"}`,
	};
}

/** One server measured with wrk: its URL and the processes pinned to the server core. */
interface Side {
	name: string;
	url: string;
	pids: number[];
}

interface SideRounds {
	results: WrkResult[];
	/** Server CPU per answered request, per round (µs), summed over the side's processes. */
	cpuMicros: number[];
	/** The kernel's part of it (µs): reading the request and writing the answer, waking the client. */
	kernelMicros: number[];
}

/** The median of a list (the lower middle of an even one). */
function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor((sorted.length - 1) / 2)];
}

/**
 * wrk rounds, every side once per round, the order alternating from round to round (the first
 * side first, then last), so that every side sees the same machine; each ratio is the median
 * of the rounds' ratios.
 */
async function wrkRounds(
	options: Options,
	sides: Side[],
	paths: string[],
	headers: Record<string, string>,
): Promise<Map<string, SideRounds>> {
	const rounds = new Map<string, SideRounds>(
		sides.map((side) => [side.name, { results: [], cpuMicros: [], kernelMicros: [] }]),
	);
	for (let round = 0; round < options.rounds; round++) {
		const order = round % 2 === 0 ? sides : [...sides].reverse();
		const parts: string[] = [];
		for (const side of order) {
			const before = cpuTimes(side.pids);
			const result = await runWrk({ url: side.url, paths, headers, connections: 64, duration: options.duration });
			const after = cpuTimes(side.pids);
			const perRequest = 1000 / Math.max(1, result.total);
			const cpu = (after.total - before.total) * perRequest;
			const kernel = (after.kernel - before.kernel) * perRequest;
			const entry = rounds.get(side.name) as SideRounds;
			entry.results.push(result);
			entry.cpuMicros.push(cpu);
			entry.kernelMicros.push(kernel);
			parts.push(
				`${side.name} ${Math.round(result.requestsPerSecond)} req/s (p99 ${result.latency.p99} ms, ${cpu.toFixed(0)} µs CPU, kernel ${kernel.toFixed(0)})`,
			);
			if (result.non2xx > 0 || result.socketErrors > 0)
				parts.push(`! ${side.name}: ${result.non2xx} non-2xx, ${result.socketErrors} socket errors`);
		}
		console.log(`    round ${round + 1}: ${parts.join("; ")}; load ${load()}`);
	}
	return rounds;
}

function roundRatios(rounds: Map<string, SideRounds>, subject: string, reference: string): number[] {
	const of = (name: string) => (rounds.get(name) as SideRounds).results;
	return of(subject).map((result, index) => result.requestsPerSecond / of(reference)[index].requestsPerSecond);
}

/** A side's figure: its median ratio to the moleculer-web limit (the target), beside its ratio to bare node:http in the same rounds. */
function sideFigure(
	name: string,
	rounds: Map<string, SideRounds>,
	side: string,
	minRatio: number | undefined,
	maxP99: number | undefined,
): Figure {
	const { results, cpuMicros, kernelMicros } = rounds.get(side) as SideRounds;
	const toLimit = roundRatios(rounds, side, LIMIT);
	const toBare = roundRatios(rounds, side, BARE);
	// The reading sides present in these rounds, each as ", 0.97x of the <side>".
	const toReadingSides = [LIMIT_METRICS, LIMIT_HOOKS]
		.filter((reading) => rounds.has(reading))
		.map((reading) => `, ${median(roundRatios(rounds, side, reading)).toFixed(2)}x of the ${reading}`)
		.join("");
	const ratio = median(toLimit);
	const p99 = median(results.map((result) => result.latency.p99));
	const targets = [
		minRatio !== undefined ? `≥ ${minRatio.toFixed(2)}x of the moleculer-web limit` : "",
		maxP99 !== undefined ? `p99 < ${maxP99} ms` : "",
	]
		.filter(Boolean)
		.join(", ");
	return {
		name,
		value: median(results.map((result) => result.requestsPerSecond)),
		unit: "req/s",
		ratio,
		ratioOf: LIMIT,
		target: targets || undefined,
		pass: targets
			? (minRatio === undefined || ratio >= minRatio) && (maxP99 === undefined || p99 < maxP99)
			: undefined,
		detail:
			`wrk, 1 thread on core ${CLIENT_CORE}, servers on core ${SERVER_CORE}, 64 connections; median of the rounds' ratios: ${ratio.toFixed(2)}x of the moleculer-web limit ` +
			`(${toLimit.map((value) => value.toFixed(2)).join(", ")}), ${median(toBare).toFixed(2)}x of bare node:http (${toBare.map((value) => value.toFixed(2)).join(", ")})${toReadingSides}; ` +
			`median p50 ${median(results.map((result) => result.latency.p50))} ms, p99 ${p99} ms; server CPU ${median(cpuMicros).toFixed(1)} µs/request (kernel ${median(kernelMicros).toFixed(1)})`,
	};
}

const BARE = "bare node:http";
const LIMIT = "moleculer-web limit";
/** The same with moleculer's own request metrics and context tracking on (METRICS on, as the registry runs): for reading, no target. */
const LIMIT_METRICS = "moleculer-web limit, METRICS on";
/** The limit with the design's `authentication` and `authorization` hooks, each returning at once (one-process lookup only): for reading, no target. */
const LIMIT_HOOKS = "moleculer-web limit, empty hooks";

/**
 * The two hot reads (the anonymous lookup and a service provider's read of its participant)
 * with wrk, beside bare node:http and the moleculer-web limit in the same rounds, with the
 * ConfigMap's settings (METRICS on), with RATE_LIMIT set high enough not to refuse the bench,
 * in one process and in the k8s topology (one process per Deployment, over the local NATS and
 * Redis). Every request takes the gateway's hooks; /metrics must count every request sent.
 */
async function runHotReads(
	options: Options,
	data: Sizes,
	work: Workload,
	want: (name: string) => boolean,
): Promise<void> {
	const missing = wrkMissing();
	if (missing) {
		report({
			name: "hot reads",
			value: 0,
			unit: "req/s",
			target: "≥ 0.90x",
			pass: false,
			detail: `not measured: ${missing}`,
		});
		return;
	}
	const lookupHeaders = { accept: LOOKUP_ACCEPT };
	const readHeaders = { accept: READ_ACCEPT, authorization: work.sp1Auth };
	const paths = work.lookupPaths(options.large);
	const readPaths = work.readPaths(options.large);
	const clusterReachable = (await reachable(NATS_URL)) && (await reachable(REDIS_URL));
	let bare: BaselineServer | null = null;
	let limit: BaselineServer | null = null;
	let limitWithMetrics: BaselineServer | null = null;
	let limitWithHooks: BaselineServer | null = null;
	try {
		for (const distributed of [false, true]) {
			const setup = distributed ? "k8s topology" : "one process";
			if (distributed && !want("distributed")) continue;
			if (distributed && !clusterReachable) {
				report({
					name: `lookup, ${setup}`,
					value: 0,
					unit: "req/s",
					target: "≥ 0.90x",
					pass: false,
					detail: `not measured: NATS (${NATS_URL}) or Redis (${REDIS_URL}) unreachable`,
				});
				continue;
			}
			const env = configMapEnv(true);
			const topology = distributed ? k8sTopology() : null;
			note(
				`hot reads, ${setup}, RATE_LIMIT ${env.RATE_LIMIT}/min, METRICS on, ${options.large.toLocaleString("en-US")} participants${
					topology
						? `: ${Object.entries(topology)
								.map(([name, services]) => `${name}=${services}`)
								.join(" ")}`
						: ""
				}`,
			);
			const cluster = topology ? await startCluster(topology, data.large, env) : null;
			const single = cluster ? null : await startRegistry("hot-reads", { ...env, DATA_DIR: data.large });
			const gateway = (cluster?.gateway ?? single) as RegistryProcess;
			const registryPids = (cluster?.processes ?? [gateway]).map((entry) => entry.child.pid as number);
			try {
				if (!bare || !limit || !limitWithMetrics || !limitWithHooks) {
					const answer = await capture(gateway.url, paths[0], lookupHeaders);
					bare = await startBaseline(answer);
					limit = await startMoleculerWebLimit(answer);
					limitWithMetrics = await startMoleculerWebLimit(answer, true);
					limitWithHooks = await startMoleculerWebLimit(answer, false, { hooks: true });
					for (const server of [bare, limit, limitWithMetrics, limitWithHooks])
						pinToServerCore(server.child.pid as number);
				}
				for (const pid of registryPids) pinToServerCore(pid);
				const sideOf = (name: string, answering: BaselineServer | null): Side => ({
					name,
					url: (answering as BaselineServer).url,
					pids: [(answering as BaselineServer).child.pid as number],
				});
				// The empty hooks' side runs beside the one-process lookup only: what the hooks cost does not change with the read.
				const sides = (registry: string, withHooks: boolean): Side[] => [
					sideOf(BARE, bare),
					sideOf(LIMIT, limit),
					sideOf(LIMIT_METRICS, limitWithMetrics),
					...(withHooks ? [sideOf(LIMIT_HOOKS, limitWithHooks)] : []),
					{ name: registry, url: gateway.url, pids: registryPids },
				];
				for (const [kind, kindPaths, headers, minRatio] of [
					["lookup", paths, lookupHeaders, 0.9],
					["auth", readPaths, readHeaders, 0.8],
				] as const) {
					if (!want(kind)) continue;
					const label = kind === "lookup" ? "lookup" : "authenticated read (sp1)";
					await warmEvery(gateway.url, [...kindPaths], headers);
					const before = await requestsCounted(gateway.url, "api.rest");
					const withHooks = kind === "lookup" && !distributed;
					const rounds = await wrkRounds(options, sides(label, withHooks), [...kindPaths], headers);
					const counted = (await requestsCounted(gateway.url, "api.rest")) - before;
					const sent = (rounds.get(label) as SideRounds).results.reduce(
						(sum, result) => sum + result.total,
						0,
					);
					report(sideFigure(`${label}, ${setup}`, rounds, label, minRatio, 10));
					if (kind === "lookup" && !distributed) {
						report(sideFigure(`${LIMIT} (beside the lookup)`, rounds, LIMIT, undefined, undefined));
						report(
							sideFigure(
								`${LIMIT_METRICS} (beside the lookup)`,
								rounds,
								LIMIT_METRICS,
								undefined,
								undefined,
							),
						);
						report(
							sideFigure(`${LIMIT_HOOKS} (beside the lookup)`, rounds, LIMIT_HOOKS, undefined, undefined),
						);
					}
					report(metricsFigure(`${label} requests counted in /metrics, ${setup}`, "api.rest", sent, counted));
				}
			} finally {
				await (cluster ?? single)?.stop();
			}
		}
	} finally {
		await bare?.stop();
		await limit?.stop();
		await limitWithMetrics?.stop();
		await limitWithHooks?.stop();
		removeWrkFiles();
	}
}

/** Requests each side answers before its instructions are counted; the windows counted, and their requests. */
const CALLGRIND_WARM = 10_000;
const CALLGRIND_WINDOWS = 4;
const CALLGRIND_COUNTED = 4_000;
/** How many functions the instruction section lists where the registry spends more than the limit. */
const INSTRUCTION_BREAKDOWN = 25;

/** The `count` functions on which `side` spends the most more than `baseline` (per request). */
function costlier(side: Map<string, number>, baseline: Map<string, number>, count: number): [string, number][] {
	return [...side]
		.map(([name, cost]): [string, number] => [name, cost - (baseline.get(name) ?? 0)])
		.sort((a, b) => b[1] - a[1])
		.slice(0, count);
}

/**
 * Instructions per hot read under callgrind (bench/lib/instructions.ts): the registry in one
 * process (ConfigMap settings; again with METRICS off, for the metrics' share) against the
 * moleculer-web limit. No target: the targets are throughputs; this is what tells, on a machine
 * whose speed drifts, whether a change made the gateway's work smaller.
 */
async function runInstructions(options: Options, data: Sizes, work: Workload): Promise<void> {
	note(
		`instructions per request under callgrind, one process, ${options.small.toLocaleString("en-US")} participants: ${CALLGRIND_WARM.toLocaleString("en-US")} requests to warm, then ${CALLGRIND_WINDOWS} windows of ${CALLGRIND_COUNTED.toLocaleString("en-US")} counted (the fewest kept)`,
	);
	const missing = valgrindMissing();
	if (missing) {
		console.log(`  not measured: ${missing}`);
		return;
	}
	const kinds: { name: string; paths: string[]; headers: Record<string, string> }[] = [
		{ name: "lookup", paths: work.lookupPaths(options.small), headers: { accept: LOOKUP_ACCEPT } },
		{
			name: "authenticated read (sp1)",
			paths: work.readPaths(options.small),
			headers: { accept: READ_ACCEPT, authorization: work.sp1Auth },
		},
	];
	const { dir, wrapper, nodeArgs } = callgrindWrapper();
	const counted = new Map<string, InstructionCount>();
	const round = (value: number) => Math.round(value).toLocaleString("en-US");
	const count = async (side: string, pid: number, url: string) => {
		for (const kind of kinds) {
			const result = await countInstructions({
				pid,
				dir,
				url,
				paths: kind.paths,
				headers: kind.headers,
				warm: CALLGRIND_WARM,
				requests: CALLGRIND_COUNTED,
				windows: CALLGRIND_WINDOWS,
			});
			const others = Object.keys(result.statusCodes).filter((status) => status !== "200");
			if (others.length > 0)
				throw new Error(
					`${side}, ${kind.name}: answers other than 200 (${JSON.stringify(result.statusCodes)})`,
				);
			console.log(
				`    ${side}, ${kind.name}: request path ${result.requestPathWindows.map(round).join(", ")}; whole process ${result.windows.map(round).join(", ")} instructions/request`,
			);
			counted.set(`${side}/${kind.name}`, result);
		}
	};
	let answer: Awaited<ReturnType<typeof capture>> | null = null;
	try {
		for (const [side, metrics] of [
			["registry", "true"],
			["registry, METRICS off", "false"],
		] as const) {
			const registry = await startRegistry(
				`${side} under callgrind`,
				{ ...configMapEnv(true), METRICS: metrics, DATA_DIR: data.small },
				{ wrapper, nodeArgs, timeoutMs: 600_000 },
			);
			try {
				answer ??= await capture(registry.url, kinds[0].paths[0], kinds[0].headers);
				await count(side, registry.child.pid as number, registry.url);
			} finally {
				await registry.stop();
				removePerfMap(registry.child.pid as number);
			}
		}
		const limit = await startMoleculerWebLimit(answer as NonNullable<typeof answer>, false, { wrapper, nodeArgs });
		try {
			await count(LIMIT, limit.child.pid as number, limit.url);
		} finally {
			await limit.stop();
			removePerfMap(limit.child.pid as number);
		}
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
	for (const kind of kinds) {
		const countOf = (side: string) => counted.get(`${side}/${kind.name}`) as InstructionCount;
		const [registry, withoutMetrics, limit] = ["registry", "registry, METRICS off", LIMIT].map(countOf);
		console.log(
			`    where the registry's ${kind.name} spends more than the limit's (instructions/request in the function itself, whole process, in the window of the fewest on the request path):`,
		);
		for (const [name, more] of costlier(registry.functions, limit.functions, INSTRUCTION_BREAKDOWN))
			console.log(`      ${round(more).padStart(7)}  ${name}`);
		report({
			name: `instructions per ${kind.name}, one process`,
			value: registry.requestPath,
			unit: "instructions/request",
			ratio: limit.requestPath / registry.requestPath,
			ratioOf: LIMIT,
			detail: `callgrind, the request path (node's HTTP parser callback, inclusive), the fewest of ${CALLGRIND_WINDOWS} windows; ${LIMIT} ${round(limit.requestPath)}; the registry with METRICS off ${round(withoutMetrics.requestPath)}. Whole process (timers and V8's threads too, ~40x their weight at full speed): registry ${round(registry.perRequest)}, ${LIMIT} ${round(limit.perRequest)}, METRICS off ${round(withoutMetrics.perRequest)}. The process's own work only (not the kernel's, nor cache misses)`,
		});
	}
}

/** Participant rows and updated contacts in a participants store, read after the registry stopped. */
function storedCounts(dataDir: string): { participants: number; updated: number; organizations: number } {
	const participants = new Database(path.join(dataDir, "participants.db"), { readonly: true });
	const lookup = new Database(path.join(dataDir, "lookup.db"), { readonly: true });
	try {
		return {
			participants: (participants.prepare("SELECT count(*) AS n FROM participants").get() as { n: number }).n,
			updated: (
				participants
					.prepare(
						"SELECT count(*) AS n FROM participants WHERE json_extract(body, '$.contact.name') LIKE 'Oppdatert Kontakt %'",
					)
					.get() as { n: number }
			).n,
			organizations: (lookup.prepare("SELECT count(*) AS n FROM organizationProcesses").get() as { n: number }).n,
		};
	} finally {
		participants.close();
		lookup.close();
	}
}

/**
 * Participant adds, then updates, each at 16 connections on a copy of the large data set. Each
 * runs a warm-up first (WRITE_WARMUP writes, not timed): the first thousands of writes of a new
 * process still run while V8 compiles the write path (measured: ~190 functions optimised during
 * 4,000 adds after a 1,000-add start, several hundred µs per add on V8's compiler threads), and the
 * target is a sustained rate. Every write, warm-up included, is a distinct participant and is
 * looked for in the stores afterwards.
 */
const WRITE_WARMUP = 2000;

async function runWrites(options: Options, data: Sizes, work: Workload): Promise<void> {
	note(`writes, one process, on a copy of the ${options.large.toLocaleString("en-US")}-participant data`);
	const copy = fs.mkdtempSync(path.join(os.tmpdir(), "registry-bench-writes-"));
	try {
		fs.cpSync(data.large, copy, { recursive: true });
		const before = storedCounts(copy);
		const registry = await startRegistry("writes", ONE_PROCESS_ENV(copy));
		const amount = 12000;
		let adds: LoadResult;
		let updates: LoadResult;
		let warmAdds: LoadResult;
		let warmUpdates: LoadResult;
		try {
			const headers = (operation: string) => ({
				accept: `application/vnd.registry.participants.${operation}.v1+json`,
				"content-type": `application/vnd.registry.participants.${operation}.v1+json`,
				authorization: work.sp1Auth,
			});
			const addsFrom = (fromIndex: number, count: number) =>
				runLoad({
					url: registry.url,
					method: "POST",
					connections: 16,
					duration: 120,
					amount: count,
					headers: headers("add"),
					plan: { kind: "adds", fromIndex, pathPrefix: "/rest/api/participants" },
				});
			warmAdds = await addsFrom(options.large, WRITE_WARMUP);
			adds = await addsFrom(options.large + WRITE_WARMUP, amount);
			// Each update is of a different participant: the warm-up takes the ones after the measured run's.
			const numbers = work.readPaths(options.large).map((entry) => entry.split(":").pop() as string);
			const measured = Math.min(amount, numbers.length - WRITE_WARMUP);
			const updatesOf = (organizationNumbers: string[]) =>
				runLoad({
					url: registry.url,
					method: "PUT",
					connections: 16,
					duration: 120,
					amount: organizationNumbers.length,
					headers: headers("update"),
					plan: {
						kind: "updates",
						organizationNumbers,
						pathPrefix: "/rest/api/participants",
						processSets: [
							[work.generator.processIds[0]],
							[work.generator.processIds[0], work.generator.processIds[2]],
						],
					},
				});
			warmUpdates = await updatesOf(numbers.slice(measured, measured + WRITE_WARMUP));
			updates = await updatesOf(numbers.slice(0, measured));
		} finally {
			await registry.stop();
		}
		const after = storedCounts(copy);
		const addsKept = after.participants - before.participants;
		const updatesKept = after.updated - before.updated;
		const allOk = (...runs: LoadResult[]) => runs.every((run) => run.non2xx === 0 && run.errors === 0);
		const addsOk = warmAdds.ok + adds.ok === addsKept && allOk(warmAdds, adds);
		const updatesOk = warmUpdates.ok + updates.ok === updatesKept && allOk(warmUpdates, updates);
		const cold = (run: LoadResult) =>
			`${Math.round(run.requestsPerSecond)}/s during the ${run.ok.toLocaleString("en-US")}-write warm-up`;
		report({
			name: "participant adds, one process",
			value: adds.requestsPerSecond,
			unit: "/s",
			target: "≥ 1,000/s, none lost",
			pass: adds.requestsPerSecond >= 1000 && addsOk,
			detail: `${adds.ok} answered 201 in ${adds.durationSeconds.toFixed(1)} s (16 connections; ${cold(warmAdds)}), ${adds.non2xx + warmAdds.non2xx} other answers, ${adds.errors + warmAdds.errors} errors; stored afterwards: ${addsKept} new participants (warm-up included), ${after.organizations - before.organizations} new organizations in the lookup; p50 ${adds.latency.p50} ms, p99 ${adds.latency.p99} ms`,
		});
		report({
			name: "participant updates, one process",
			value: updates.requestsPerSecond,
			unit: "/s",
			target: "≥ 1,000/s, none lost",
			pass: updates.requestsPerSecond >= 1000 && updatesOk,
			detail: `${updates.ok} answered 200 in ${updates.durationSeconds.toFixed(1)} s (16 connections, each a different participant; ${cold(warmUpdates)}), ${updates.non2xx + warmUpdates.non2xx} other answers, ${updates.errors + warmUpdates.errors} errors; stored afterwards: ${updatesKept} participants with the new contact (warm-up included); p50 ${updates.latency.p50} ms, p99 ${updates.latency.p99} ms`,
		});
	} finally {
		fs.rmSync(copy, { recursive: true, force: true });
	}
}

async function runMillion(options: Options, work: Workload): Promise<void> {
	const count = 1_000_000;
	const dir = await ensureData(options, count);
	await (await startRegistry("prime", ONE_PROCESS_ENV(dir), { timeoutMs: 600000 })).stop();
	note(`one process, ${count.toLocaleString("en-US")} participants (${dir})`);
	const registry = await startRegistry("one-process-1m", ONE_PROCESS_ENV(dir), { timeoutMs: 600000 });
	const lookupHeaders = { accept: LOOKUP_ACCEPT };
	const findHeaders = { accept: "application/vnd.registry.participants.find.v1+json", authorization: work.adminAuth };
	let baseline: BaselineServer | null = null;
	try {
		report({ name: "start to ready, 1,000,000 participants", value: registry.readyMs, unit: "ms" });
		const paths = work.lookupPaths(count);
		baseline = await startBaseline(await capture(registry.url, paths[0], lookupHeaders));
		// A million organizations do not all fit the lookup's in-memory answers (250,000 by default):
		// random lookups over all of them measure the miss path too.
		// The warm figure first: random lookups over all of them churn the cache afterwards.
		const warm = paths.slice(0, 250000);
		await warmEvery(registry.url, warm, lookupHeaders);
		report(
			ratioFigure(
				"lookup, one process, 250,000 warm of 1,000,000",
				await compare(options, baseline, registry.url, warm, lookupHeaders, registry.child.pid),
				undefined,
			),
		);
		const lookup = await latency(options, registry.url, warm, lookupHeaders);
		report(
			ratioFigure(
				"lookup, one process, random over 1,000,000",
				await compare(options, baseline, registry.url, paths, lookupHeaders, registry.child.pid),
				undefined,
			),
		);
		report({
			name: "lookup latency, one client, 1M (warm)",
			value: lookup.p50,
			unit: "ms",
			detail: `p99 ${lookup.p99.toFixed(2)} ms`,
		});
		const finds: Record<string, string[]> = {
			"find, sorted page 251 (offset 5,000), 1M": [`/rest/api/participants?page=250&size=20&sort=name`],
			"find, sorted middle page (offset 500,000), 1M": [`/rest/api/participants?page=25000&size=20&sort=name`],
			"find, name-word query, 1M": nameWords().map(
				(word) => `/rest/api/participants?query=${encodeURIComponent(word)}&size=20`,
			),
			"find, organization-number query, 1M": Array.from(
				{ length: 2000 },
				(_, index) => `/rest/api/participants?query=${work.generator.organizationNumber(index * 500)}`,
			),
		};
		for (const [name, list] of Object.entries(finds)) {
			const result = await latency(options, registry.url, list, findHeaders);
			report({
				name,
				value: result.p50,
				unit: "ms",
				target: "p50 < 50 ms",
				pass: result.p50 < 50 && result.non2xx === 0,
				detail: `p90 ${result.p90.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ${result.count} requests`,
			});
		}
		report({ name: "RSS holding 1,000,000 participants", value: mb(await idleRss(registry)), unit: "MB" });
	} finally {
		await baseline?.stop();
		await registry.stop();
	}
}

// ---- main --------------------------------------------------------------------------------

/** Each hook's cost per request, measured in a process of its own (bench/hook-costs.ts). */
function runHookCosts(): void {
	note("what each hook costs per request (in-process loop, the registry with demo data, METRICS on)");
	const output = execFileSync(process.execPath, [path.join(__dirname, "hook-costs.js")], {
		encoding: "utf8",
		env: { ...process.env, LOG_LEVEL: "warn" },
	});
	const costs = JSON.parse(output.trim().split("\n").pop() as string) as Record<string, number>;
	for (const [name, micros] of Object.entries(costs)) report({ name, value: micros, unit: "µs/request" });
}

function machine(): string {
	const git = (() => {
		try {
			return execFileSync("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
		} catch {
			return "?";
		}
	})();
	return `${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${os.platform()} ${os.release()}, commit ${git}, load ${load()}`;
}

async function main(): Promise<void> {
	const options = parseOptions(process.argv.slice(2));
	const started = performance.now();
	console.log(`npm run bench — ${machine()}`);
	console.log(
		`rounds ${options.rounds} × ${options.duration} s per throughput, one-client latencies ${options.latencySeconds} s; autocannon at 64 connections, pipelining 1`,
	);
	const work = workload();
	if (options.million) {
		await runMillion(options, work);
	} else {
		const want = (name: string) => !options.only || options.only.has(name);
		const needs = ["lookup", "auth", "hot", "instructions", "finds", "memory", "distributed", "writes"].some(want);
		const data: Sizes = needs
			? { large: await ensureData(options, options.large), small: await ensureData(options, options.small) }
			: { large: "", small: "" };
		if (want("memory")) await runMemoryAndStart();
		if (want("hooks")) runHookCosts();
		if (["lookup", "auth", "hot"].some(want))
			await runHotReads(options, data, work, (name) => want(name) || want("hot"));
		if (want("instructions")) await runInstructions(options, data, work);
		if (["lookup", "auth", "finds", "memory"].some(want)) await runOneProcess(options, data, work, want);
		if (["lookup", "finds"].some(want)) await runGrowth(options, data, work, want);
		if (want("writes")) await runWrites(options, data, work);
	}

	const missed = figures.filter((figure) => figure.pass === false);
	console.log(`\nsummary (${((performance.now() - started) / 1000).toFixed(0)} s; load ${load()})`);
	for (const figure of figures) console.log(line(figure));
	const resultsDir = path.join(ROOT, "bench", "results");
	fs.mkdirSync(resultsDir, { recursive: true });
	const file = path.join(resultsDir, `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
	fs.writeFileSync(
		file,
		JSON.stringify(
			{ machine: machine(), options: { ...options, only: options.only ? [...options.only] : null }, figures },
			null,
			2,
		),
	);
	console.log(
		`\n${missed.length === 0 ? "every target met" : `${missed.length} target(s) missed: ${missed.map((figure) => figure.name).join("; ")}`} (figures in ${path.relative(ROOT, file)})`,
	);
	process.exitCode = missed.length === 0 ? 0 : 1;
}

main().catch((error) => {
	console.error("bench failed:", error instanceof Error ? (error.stack ?? error.message) : error);
	process.exit(2);
});
