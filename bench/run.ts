/**
 * `npm run bench`: the figures docs/performance.md reports, each beside its target. Run it by
 * hand on an idle machine (never while tests run); it is not a test and CI does not run it.
 *
 *   npm run bench [-- --only floors,bearer,smp,tier,million,sml] [--rounds N] [--duration S] [--participants N]
 *
 * Every figure prints one line, `name: value unit [target …] ok|MISSED`; a missed target makes
 * the run exit 1. Throughputs come from wrk (Debian's, one thread) pinned to one core with every
 * server pinned to the other, in rounds that alternate the sides compared, each ratio the median
 * of the rounds' ratios (this machine's speed drifts within minutes; two builds of the same code
 * differ by 10-15 % on a hot read).
 *   floors   one process: the repeated lookup and a service provider's repeated read of its
 *            participant against a bare node:http server answering the same bytes (k8s/'s
 *            ConfigMap settings, the rate limit on and never reached, metrics on); p99 at 64 connections.
 *   bearer   one process: a service provider's repeated read of its participant with an OAuth Bearer
 *            token (decisions §15) against the same read with its remembered Basic credential.
 *   smp      one process: the demo participant's repeated signed Peppol SignedServiceMetadata
 *            against the repeated JSON lookup of the same organization, and the time of the first
 *            signed answer after the start (signing, cold) beside a repeated one.
 *   tier     the k8s topology on one machine (a process per Deployment over the local NATS and
 *            Redis) with three lookup nodes, each held to a quarter of a CPU (a CFS quota, as a k8s
 *            CPU limit is): the lookup capacity of 1, 2 and 3 nodes loaded at once.
 *   million  1,000,000 participants in the same topology: how soon a new lookup node is ready,
 *            the lookup's p99 at one connection over random organizations, the node's RSS.
 *   sml      --participants organizations imported in bulk with SML_URL (a stand-in SML, HTTPS with client
 *            TLS) and without, alternating: the import's time ratio, seconds until the SML holds them all
 *            and the SML calls that took.
 * Data sets are generated once into bench/results/data (npm run bench:data does the same).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { cpuLimit, cpuLimitMissing, type CpuLimit } from "./lib/cgroup";
import { createGenerator, GENERATOR_VERSION, qualifiedIdentifier } from "./lib/generate";
import { loadParticipants, readDemoSeed, ROOT } from "./lib/load";
import { startBenchIssuer } from "./lib/oauth-issuer";
import { rssOf, startBaseline, startCluster, startRegistry, type Cluster, type RegistryProcess } from "./lib/processes";
import { pinToServerCore, removeWrkFiles, runWrk, wrkMissing, type WrkResult } from "./lib/wrk";
import { importWithSml } from "./lib/sml-import";
import { makeTestPki, StandInSml } from "../test/support/stand-in-network";

interface Options {
	rounds: number;
	duration: number;
	participants: number;
	only: Set<string>;
}

function parseOptions(argv: string[]): Options {
	const options: Options = {
		rounds: 5,
		duration: 5,
		participants: 100_000,
		only: new Set(["floors", "bearer", "smp", "tier", "million", "sml"]),
	};
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].split("=", 2);
		const value = () => inline ?? argv[++i];
		if (flag === "--rounds") options.rounds = Math.max(1, Number(value()));
		else if (flag === "--duration") options.duration = Math.max(1, Number(value()));
		else if (flag === "--participants") options.participants = Number(value());
		else if (flag === "--only") options.only = new Set(value().split(","));
		else
			throw new Error(
				`unknown option ${flag} (--only floors,bearer,smp,tier,million,sml --rounds N --duration S --participants N)`,
			);
	}
	return options;
}

// ---- figures -----------------------------------------------------------------------------

interface Figure {
	name: string;
	value: number;
	unit: string;
	target?: string;
	pass?: boolean;
	detail?: string;
}

const figures: Figure[] = [];

function report(figure: Figure): void {
	figures.push(figure);
	const value = figure.unit === "req/s" ? Math.round(figure.value).toLocaleString("en-US") : figure.value.toFixed(2);
	const target = figure.target ? `   [target ${figure.target}] ${figure.pass === false ? "MISSED" : "ok"}` : "";
	console.log(`  ${figure.name}: ${value} ${figure.unit}${target}${figure.detail ? `\n      ${figure.detail}` : ""}`);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
const list = (values: number[]) => values.map((value) => value.toFixed(2)).join(", ");
const rate = (values: WrkResult[]) => Math.round(median(values.map((result) => result.requestsPerSecond)));
/** Non-2xx answers and socket errors (timeouts included) of wrk runs, as a figure's detail says them. */
function errorsOf(results: WrkResult[]): { count: number; text: string } {
	const non2xx = results.reduce((sum, result) => sum + result.non2xx, 0);
	const socket = results.reduce((sum, result) => sum + result.socketErrors, 0);
	return { count: non2xx + socket, text: `${non2xx} non-2xx, ${socket} socket errors` };
}

// ---- data and settings -------------------------------------------------------------------

const DATA_ROOT = path.join(ROOT, "bench", "results", "data");

/** A generated data set, made once (bench/results/ is not in git), copied for each run: a run writes to its store. */
async function dataCopy(participants: number): Promise<{ dir: string; remove(): void }> {
	const source = path.join(DATA_ROOT, `p${participants}`);
	const marker = path.join(source, "bench-data.json");
	const made = fs.existsSync(marker) && JSON.parse(fs.readFileSync(marker, "utf8")).generator === GENERATOR_VERSION;
	if (!made) {
		console.log(`\ngenerating ${participants.toLocaleString("en-US")} participants into ${source} (once)`);
		fs.rmSync(source, { recursive: true, force: true });
		const loaded = await loadParticipants(source, participants);
		console.log(`  loaded in ${((loaded.importMs + loaded.rebuildMs) / 1000).toFixed(0)} s`);
		fs.writeFileSync(marker, JSON.stringify({ participants, generator: GENERATOR_VERSION }));
	}
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-bench-"));
	fs.cpSync(source, dir, { recursive: true });
	return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * k8s/configmap.yaml's settings (measure what k8s ships), less the addresses and paths the bench
 * sets itself, with the rate limit so high the bench's one client address is never refused (every
 * request still goes through it).
 */
function configMapEnv(): Record<string, string> {
	const file = path.join(ROOT, "k8s", "configmap.yaml");
	const env = { ...(parseAllDocuments(fs.readFileSync(file, "utf8"))[0].toJS().data as Record<string, string>) };
	for (const name of ["TRANSPORTER", "CACHER", "NAMESPACE", "DATA_DIR", "MONGO_URI"]) delete env[name];
	return { ...env, RATE_LIMIT: "1000000000", LOG_LEVEL: "warn" };
}

const LOOKUP_ACCEPT = "application/vnd.registry.organizations.processes.v1+json";
const READ_ACCEPT = "application/vnd.registry.participants.get.v1+json";
const seed = readDemoSeed();
const generator = createGenerator(seed);
const sp1 = seed.accounts.find((account) => account.username === "sp1")!;
const SP1_AUTH = `Basic ${Buffer.from(`${sp1.username}:${sp1.password}`).toString("base64")}`;

/** Lookup paths of `count` generated organizations, spread over the first `of` (a seeded shuffle). */
function lookupPaths(count: number, of: number): string[] {
	let state = 17;
	const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
	return Array.from({ length: count }, () => {
		const index = Math.floor(next() * of);
		return `/rest/api/organizations/${qualifiedIdentifier(generator.organizationNumber(index))}/processes`;
	});
}

/** A generated participant of sp1 (the generator gives participants to the demo providers in turn). */
function sp1ReadPath(): string {
	for (let index = 0; ; index++) {
		const participant = generator.participant(index);
		if (participant.serviceProvider.toLowerCase() === sp1.serviceProvider?.toLowerCase())
			return `/rest/api/participants/${qualifiedIdentifier(participant.organizationIdentifier)}`;
	}
}

/** An answer as the registry writes it (status, headers in order, bytes), for the bare server to answer alike. */
async function capture(url: string, headers: Record<string, string>) {
	const response = await fetch(url, { headers });
	const body = await response.text();
	if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${body}`);
	return { status: response.status, headers: [...response.headers.entries()] as [string, string][], body };
}

/** A warm-up run of each side, then `rounds` rounds that alternate them (the machine's speed drifts). */
async function alternating(rounds: number, sides: (() => Promise<WrkResult>)[]): Promise<WrkResult[][]> {
	for (const side of sides) await side();
	const results: WrkResult[][] = sides.map(() => []);
	for (let round = 0; round < rounds; round++)
		for (const [index, side] of sides.entries()) results[index].push(await side());
	return results;
}

/** One registry process on a copy of the data set, pinned to the server core, for `run`; removed after. */
async function withOneProcess(
	options: Options,
	run: (registry: RegistryProcess) => Promise<void>,
	env: Record<string, string> = {},
): Promise<void> {
	const data = await dataCopy(options.participants);
	const registry = await startRegistry("registry", { ...configMapEnv(), DATA_DIR: data.dir, ...env }).catch(
		(error) => {
			data.remove();
			throw error;
		},
	);
	pinToServerCore(registry.child.pid!);
	try {
		await run(registry);
	} finally {
		await registry.stop();
		data.remove();
	}
}

// ---- floors: one process against bare node:http ------------------------------------------

async function floors(options: Options): Promise<void> {
	console.log("\nfloors: one process against bare node:http answering the same bytes (wrk, 64 connections)");
	await withOneProcess(options, async (registry) => {
		// Issue 43's floors (toward 0.40x and 0.30x).
		const reads: { name: string; path: string; headers: Record<string, string>; floor: number }[] = [
			{ name: "repeated lookup", path: lookupPaths(1, 1000)[0], headers: { Accept: LOOKUP_ACCEPT }, floor: 0.3 },
			{
				name: "authenticated read",
				path: sp1ReadPath(),
				headers: { Accept: READ_ACCEPT, Authorization: SP1_AUTH },
				floor: 0.22,
			},
		];
		for (const read of reads) {
			const answer = await capture(`${registry.url}${read.path}`, read.headers);
			const baselines = [await startBaseline(answer), await startBaseline(answer, "moleculer-web")];
			for (const baseline of baselines) pinToServerCore(baseline.child.pid!);
			try {
				const wrk = (url: string) => () =>
					runWrk({
						url,
						paths: [read.path],
						headers: read.headers,
						connections: 64,
						duration: options.duration,
					});
				const [bare, framework, ours] = await alternating(options.rounds, [
					...baselines.map((baseline) => wrk(baseline.url)),
					wrk(registry.url),
				]);
				const ratios = ours.map((result, round) => result.requestsPerSecond / bare[round].requestsPerSecond);
				const errors = errorsOf(ours);
				const p99 = (results: WrkResult[]) => median(results.map((result) => result.latency.p99)).toFixed(2);
				report({
					name: `${read.name}, one process, of bare node:http`,
					value: median(ratios),
					unit: "x",
					target: `≥ ${read.floor.toFixed(2)}x, no errors`,
					pass: median(ratios) >= read.floor && errors.count === 0,
					detail: `rounds ${list(ratios)}; ${rate(ours).toLocaleString("en-US")} against ${rate(bare).toLocaleString("en-US")} req/s; p99 at 64 connections ${p99(ours)} ms (bare ${p99(bare)} ms); ${errors.text}`,
				});
				const ofFramework = ours.map(
					(result, round) => result.requestsPerSecond / framework[round].requestsPerSecond,
				);
				report({
					name: `${read.name}, one process, of a bare moleculer-web route (Moleculer's metrics on)`,
					value: median(ofFramework),
					unit: "x",
					detail: `rounds ${list(ofFramework)}; the route alone ${rate(framework).toLocaleString("en-US")} req/s, ${(rate(framework) / rate(bare)).toFixed(2)}x of bare node:http, p99 ${p99(framework)} ms`,
				});
			} finally {
				for (const baseline of baselines) await baseline.stop();
			}
		}
	});
}

// ---- bearer: an OAuth access token against a remembered Basic credential ------------------

async function bearer(options: Options): Promise<void> {
	console.log("\nbearer: one process, an authenticated read with a Bearer token against Basic (wrk, 64 connections)");
	const issuer = await startBenchIssuer();
	const env = { OAUTH_ISSUER: issuer.url, OAUTH_AUDIENCE: issuer.audience };
	try {
		await withOneProcess(
			options,
			async (registry) => {
				// sp1's account is the one its client's tokens act as (PUT …/oauth-client, as an ADMIN does it).
				const admin = seed.accounts.find((account) => account.role === "ADMIN")!;
				const mapped = await fetch(`${registry.url}/rest/api/accounts/sp1/oauth-client`, {
					method: "PUT",
					headers: {
						Authorization: `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}`,
						"Content-Type": "application/json",
					},
					body: JSON.stringify({ oauthClientId: "sp1-bench-client" }),
				});
				if (mapped.status !== 200) throw new Error(`mapping the client answered ${mapped.status}`);
				const path = sp1ReadPath();
				const withToken = {
					Accept: READ_ACCEPT,
					Authorization: `Bearer ${await issuer.token("sp1-bench-client")}`,
				};
				const withPassword = { Accept: READ_ACCEPT, Authorization: SP1_AUTH };
				for (const headers of [withToken, withPassword]) await capture(`${registry.url}${path}`, headers);
				const wrk = (headers: Record<string, string>) => () =>
					runWrk({ url: registry.url, paths: [path], headers, connections: 64, duration: options.duration });
				const [token, basic] = await alternating(options.rounds, [wrk(withToken), wrk(withPassword)]);
				const ratios = token.map((result, round) => result.requestsPerSecond / basic[round].requestsPerSecond);
				const errors = [errorsOf(token), errorsOf(basic)];
				const p99 = (results: WrkResult[]) => median(results.map((result) => result.latency.p99)).toFixed(2);
				report({
					name: "authenticated read with a Bearer token, of the same read with Basic",
					value: median(ratios),
					unit: "x",
					target: "≥ 0.90x, no errors",
					pass: median(ratios) >= 0.9 && errors[0].count + errors[1].count === 0,
					detail: `rounds ${list(ratios)}; ${rate(token).toLocaleString("en-US")} against ${rate(basic).toLocaleString("en-US")} req/s; p99 ${p99(token)} ms (Basic ${p99(basic)} ms); Bearer: ${errors[0].text}; Basic: ${errors[1].text}`,
				});
			},
			env,
		);
	} finally {
		await issuer.stop();
	}
}

// ---- smp: the signed SMP answer against the JSON lookup ----------------------------------

/** The demo participant (the JSON lookup takes the qualified identifier the SMP takes). */
const SMP_PARTICIPANT = qualifiedIdentifier("991825827");
const JSON_LOOKUP = `/rest/api/organizations/${SMP_PARTICIPANT}/processes`;

/** One request, timed to its last byte. */
async function timed(url: string, headers: Record<string, string> = {}) {
	const started = performance.now();
	const response = await fetch(url, { headers });
	const body = await response.text();
	if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${body}`);
	return { ms: performance.now() - started, body };
}

async function smp(options: Options): Promise<void> {
	console.log("\nsmp: one process, the signed SMP service metadata against the JSON lookup (wrk, 64 connections)");
	await withOneProcess(options, async (registry) => {
		// The participant's service group names its document types (links on SMP_PUBLIC_URL: the path is kept).
		const group = await timed(`${registry.url}/${SMP_PARTICIPANT}`);
		const [signedPath, otherPath] = [...group.body.matchAll(/<ServiceMetadataReference href="([^"]+)"/g)].map(
			(match) => new URL(match[1].replace(/&amp;/g, "&")).pathname,
		);
		if (!signedPath) throw new Error(`the service group names no document type:\n${group.body}`);
		await timed(`${registry.url}${JSON_LOOKUP}`, { Accept: LOOKUP_ACCEPT });
		const first = await timed(`${registry.url}${signedPath}`);
		if (!first.body.includes("SignatureValue")) throw new Error(`not a signed answer:\n${first.body}`);
		const other = otherPath
			? `; the first of another document type ${(await timed(`${registry.url}${otherPath}`)).ms.toFixed(1)} ms (signer warm)`
			: "";
		const repeated: number[] = [];
		for (let i = 0; i < 20; i++) repeated.push((await timed(`${registry.url}${signedPath}`)).ms);
		report({
			name: "first signed answer after start (signing, cold)",
			value: first.ms,
			unit: "ms",
			detail: `a repeated one ${median(repeated).toFixed(2)} ms (median of 20)${other}; ${signedPath}`,
		});
		const wrk = (path: string, headers: Record<string, string>) => () =>
			runWrk({ url: registry.url, paths: [path], headers, connections: 64, duration: options.duration });
		const [signed, json] = await alternating(options.rounds, [
			wrk(signedPath, {}),
			wrk(JSON_LOOKUP, { Accept: LOOKUP_ACCEPT }),
		]);
		const p99 = (results: WrkResult[]) =>
			`p99 ${median(results.map((result) => result.latency.p99)).toFixed(2)} ms`;
		const errors = [errorsOf(signed), errorsOf(json)];
		report({ name: "repeated signed SMP answer", value: rate(signed), unit: "req/s", detail: p99(signed) });
		report({ name: "repeated JSON lookup", value: rate(json), unit: "req/s", detail: p99(json) });
		const ratios = signed.map((result, round) => result.requestsPerSecond / json[round].requestsPerSecond);
		report({
			name: "repeated signed SMP answer, of the repeated JSON lookup",
			value: median(ratios),
			unit: "x",
			target: "≥ 0.50x, no errors",
			pass: median(ratios) >= 0.5 && errors[0].count + errors[1].count === 0,
			detail: `rounds ${list(ratios)}; signed: ${errors[0].text}; JSON: ${errors[1].text}`,
		});
	});
}

// ---- the topology of k8s/ on one machine -------------------------------------------------

/** The k8s/ Deployments, one process each, with `lookupNodes` lookup nodes. */
function k8sTopology(lookupNodes: number): Record<string, string> {
	const topology: Record<string, string> = {
		catalog: "catalog",
		participants: "participants",
		accessPoints: "accessPoints",
		accounts: "accounts",
		audit: "audit",
		gateway: "api",
	};
	for (let node = 1; node <= lookupNodes; node++) topology[`lookup${node}`] = "lookup";
	return topology;
}

const lookupNodesOf = (cluster: Cluster) => cluster.processes.filter((entry) => entry.services === "lookup");

// ---- tier: capacity growing with lookup nodes --------------------------------------------

const QUARTER_CPU = 0.25;

async function tier(options: Options): Promise<void> {
	const missing = cpuLimitMissing();
	if (missing)
		return void report({ name: "tier", value: 0, unit: "", target: "measured", pass: false, detail: missing });
	console.log(`\ntier: lookup nodes of the k8s topology, each held to ${QUARTER_CPU} CPU, loaded at once by wrk`);
	const data = await dataCopy(options.participants);
	const limits = new Map<string, CpuLimit>();
	let cluster: Cluster | undefined;
	try {
		cluster = await startCluster(k8sTopology(3), data.dir, configMapEnv(), (name, pid) => {
			if (!name.startsWith("lookup")) return;
			const limit = cpuLimit(name, QUARTER_CPU);
			limit.add(pid);
			limits.set(name, limit);
		});
		const nodes = lookupNodesOf(cluster);
		for (const node of nodes) pinToServerCore(node.child.pid!);
		const paths = lookupPaths(10_000, options.participants);
		const load = (count: number) =>
			Promise.all(
				nodes.slice(0, count).map((node) =>
					runWrk({
						url: node.url,
						paths,
						headers: { Accept: LOOKUP_ACCEPT },
						connections: 16,
						duration: options.duration,
					}),
				),
			);
		await load(3); // every node's cache warmed on the same paths
		const capacity: Record<number, number[]> = { 1: [], 2: [], 3: [] };
		const all: WrkResult[] = [];
		for (let round = 0; round < options.rounds; round++)
			for (const count of [1, 2, 3]) {
				const results = await load(count);
				capacity[count].push(results.reduce((sum, result) => sum + result.requestsPerSecond, 0));
				all.push(...results);
			}
		report({
			name: "lookup capacity, 1 node",
			value: median(capacity[1]),
			unit: "req/s",
			detail: `rounds ${capacity[1].map(Math.round).join(", ")}`,
		});
		for (const [count, target] of [
			[2, 1.8],
			[3, 2.4],
		]) {
			const ratios = capacity[count].map((value, round) => value / capacity[1][round]);
			report({
				name: `lookup capacity, ${count} nodes, of 1 node`,
				value: median(ratios),
				unit: "x",
				target: `≥ ${target.toFixed(1)}x, no non-2xx`,
				pass: median(ratios) >= target && errorsOf(all).count === 0,
				detail: `rounds ${list(ratios)}; ${Math.round(median(capacity[count])).toLocaleString("en-US")} req/s; ${errorsOf(all).text} in all`,
			});
		}
	} finally {
		await cluster?.stop();
		for (const limit of limits.values()) limit.remove();
		data.remove();
	}
}

// ---- million: a new lookup node on 1,000,000 participants --------------------------------

const MILLION = 1_000_000;

async function million(options: Options): Promise<void> {
	console.log("\nmillion: a new lookup node of the k8s topology on 1,000,000 participants");
	const data = await dataCopy(MILLION);
	let cluster: Cluster | undefined;
	try {
		cluster = await startCluster(k8sTopology(1), data.dir, configMapEnv());
		const node = await startRegistry("lookup-new", { ...cluster.env, SERVICES: "lookup" });
		try {
			report({
				name: "a new lookup node ready after its start",
				value: node.readyMs / 1000,
				unit: "s",
				target: "≤ 30 s",
				pass: node.readyMs <= 30_000,
			});
			pinToServerCore(node.child.pid!);
			const paths = lookupPaths(100_000, MILLION);
			const result = await runWrk({
				url: node.url,
				paths,
				headers: { Accept: LOOKUP_ACCEPT },
				connections: 1,
				duration: options.duration * 2,
			});
			report({
				name: "lookup p99 at one connection, random organizations",
				value: result.latency.p99,
				unit: "ms",
				target: "< 5 ms, no non-2xx",
				pass: result.latency.p99 < 5 && result.non2xx === 0,
				detail: `p50 ${result.latency.p50.toFixed(2)} ms; ${Math.round(result.requestsPerSecond)} req/s; ${result.non2xx} non-2xx`,
			});
			report({ name: "the lookup node's RSS", value: rssOf(node.child.pid!) / 1024 / 1024, unit: "MB" });
		} finally {
			await node.stop();
		}
	} finally {
		await cluster?.stop();
		data.remove();
	}
}

/** 100,000 organizations imported in bulk with and without SML_URL, alternating (issue 42). */
async function smlImport(options: Options): Promise<void> {
	const count = options.participants;
	console.log(
		`\nsml: ${count.toLocaleString("en-US")} organizations imported in bulk, with SML_URL (the stand-in SML) and without`,
	);
	const pki = makeTestPki();
	const server = await new StandInSml(pki).start();
	server.smp = { logicalAddress: "https://smp.registry.example", physicalAddress: "192.0.2.10" };
	try {
		const [without, withSml] = [[], []] as Awaited<ReturnType<typeof importWithSml>>[][];
		for (let round = 0; round < Math.max(2, options.rounds); round++) {
			without.push(await importWithSml(count, null));
			withSml.push(await importWithSml(count, { server, pki }));
		}
		const ms = (runs: typeof without, pick: (run: (typeof without)[number]) => number) => median(runs.map(pick));
		const ratio = ms(withSml, (run) => run.importMs) / ms(without, (run) => run.importMs);
		report({
			name: "the import with SML_URL, against without",
			value: ratio,
			unit: "x the time",
			target: "≤ 1.20x",
			pass: ratio <= 1.2,
			detail: `with ${list(withSml.map((run) => run.importMs / 1000))} s; without ${list(without.map((run) => run.importMs / 1000))} s`,
		});
		const last = withSml[withSml.length - 1];
		report({
			name: "seconds until the SML holds every organization (from the import's start)",
			value: ms(withSml, (run) => run.deliveredMs ?? 0) / 1000,
			unit: "s",
			detail: `SML calls of the last run: ${JSON.stringify(last.calls)}`,
		});
	} finally {
		await server.stop();
		fs.rmSync(pki.dir, { recursive: true, force: true });
	}
}

// ---- main --------------------------------------------------------------------------------

async function main(): Promise<void> {
	const options = parseOptions(process.argv.slice(2));
	const missing = wrkMissing();
	if (missing) throw new Error(missing);
	console.log(
		`bench on ${os.cpus().length} cores, load ${os
			.loadavg()
			.map((value) => value.toFixed(1))
			.join(" ")}; ${options.rounds} rounds of ${options.duration} s`,
	);
	try {
		if (options.only.has("floors")) await floors(options);
		if (options.only.has("bearer")) await bearer(options);
		if (options.only.has("smp")) await smp(options);
		if (options.only.has("tier")) await tier(options);
		if (options.only.has("million")) await million(options);
		if (options.only.has("sml")) await smlImport(options);
	} finally {
		removeWrkFiles();
	}
	const missed = figures.filter((figure) => figure.pass === false);
	console.log(
		`\n${figures.length} figures, ${missed.length} target(s) missed${missed.length ? `: ${missed.map((figure) => figure.name).join("; ")}` : ""}`,
	);
	process.exitCode = missed.length ? 1 : 0;
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
