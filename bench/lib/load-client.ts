/**
 * The load generator: autocannon in its own process (forked by bench/lib/measure.ts), so
 * that the client never shares an event loop with the server it measures. It receives one
 * LoadSpec over IPC, runs it (an optional warm-up first), and sends back a LoadResult.
 *
 * Requests are built per request by `setupRequest`: a random path from a list (lookups and
 * reads of random organizations), or the next generated participant (adds), or the next
 * organization to update (updates; each update is of a different participant).
 */
import http from "node:http";
import autocannon from "autocannon";
import { createGenerator, type GeneratedParticipant } from "./generate";
import { readDemoSeed } from "./load";

export type RequestPlan =
	/** Random paths; `sequence`: each path once, in order (warming every organization). */
	| { kind: "paths"; paths: string[]; sequence?: boolean }
	| { kind: "adds"; fromIndex: number; pathPrefix: string }
	| { kind: "updates"; organizationNumbers: string[]; pathPrefix: string; processSets: string[][] };

/**
 * Latency of one client: requests one after another on one keep-alive connection, timed in
 * microseconds (autocannon's histogram has whole milliseconds, too coarse for a find of 2 ms).
 */
export interface LatencySpec {
	latency: true;
	url: string;
	headers?: Record<string, string>;
	paths: string[];
	/** Seconds measured, after `warmup` seconds discarded. */
	duration: number;
	warmup?: number;
	/** At most this many measured requests. */
	maxRequests?: number;
}

export interface LatencyResult {
	count: number;
	/** Milliseconds. */
	p50: number;
	p90: number;
	p99: number;
	mean: number;
	statusCodes: Record<string, number>;
	non2xx: number;
}

export interface LoadSpec {
	url: string;
	method?: "GET" | "POST" | "PUT";
	headers?: Record<string, string>;
	connections: number;
	/** Seconds measured. */
	duration: number;
	/** Seconds of the same load run first and discarded (cache warm, JIT warm). */
	warmup?: number;
	/** Stop after this many requests (writes: each one is a distinct participant). */
	amount?: number;
	plan: RequestPlan;
}

export interface LoadResult {
	requestsPerSecond: number;
	latency: { p50: number; p90: number; p99: number; max: number; mean: number };
	total: number;
	ok: number;
	non2xx: number;
	errors: number;
	timeouts: number;
	statusCodes: Record<string, number>;
	durationSeconds: number;
	/** Requests the plan issued (writes: how many distinct participants were sent). */
	issued: number;
}

type Setup = (request: {
	method?: string;
	path?: string;
	body?: string | Buffer;
	headers?: Record<string, string>;
}) => typeof request;

function setupFor(spec: LoadSpec, counter: { next: number }): Setup {
	const plan = spec.plan;
	if (plan.kind === "paths") {
		const paths = plan.paths;
		if (plan.sequence) {
			return (request) => {
				request.path = paths[counter.next++ % paths.length];
				return request;
			};
		}
		return (request) => {
			counter.next++;
			request.path = paths[(Math.random() * paths.length) | 0];
			return request;
		};
	}
	const generator = createGenerator(readDemoSeed());
	if (plan.kind === "adds") {
		return (request) => {
			const participant: Omit<GeneratedParticipant, "serviceProvider"> & { serviceProvider?: string } = {
				...generator.participant(plan.fromIndex + counter.next++),
			};
			delete participant.serviceProvider;
			request.path = plan.pathPrefix;
			request.body = JSON.stringify(participant);
			return request;
		};
	}
	return (request) => {
		const at = counter.next++;
		const number = plan.organizationNumbers[at % plan.organizationNumbers.length];
		const processes =
			plan.processSets[Math.floor(at / plan.organizationNumbers.length + at) % plan.processSets.length];
		request.path = `${plan.pathPrefix}/iso6523-actorid-upis::0192:${number}`;
		request.body = JSON.stringify({
			processes: processes.map((identifier) => ({ identifier })),
			contact: {
				name: `Oppdatert Kontakt ${at}`,
				email: `oppdatert${at}@bench.example`,
				phoneNumber: "+47 22 12 34 56",
			},
		});
		return request;
	};
}

/** When the latest answer of the current run arrived (performance.now()). */
let lastAnswerAt = 0;

function run(spec: LoadSpec, seconds: number, counter: { next: number }): Promise<autocannon.Result> {
	return new Promise((resolve, reject) => {
		const instance = autocannon(
			{
				url: spec.url,
				connections: spec.connections,
				duration: seconds,
				...(spec.amount ? { amount: spec.amount } : {}),
				method: spec.method ?? "GET",
				headers: spec.headers,
				requests: [{ setupRequest: setupFor(spec, counter) as never }],
				// One request per connection at a time, as clients do.
				pipelining: 1,
				timeout: 10,
			},
			(error, result) => (error ? reject(error) : resolve(result)),
		);
		instance.on("error", reject);
		instance.on("response", () => {
			lastAnswerAt = performance.now();
		});
	});
}

async function measure(spec: LoadSpec): Promise<LoadResult> {
	const counter = { next: 0 };
	if (spec.warmup && spec.warmup > 0) await run(spec, spec.warmup, counter);
	const before = counter.next;
	const started = performance.now();
	const result = await run(spec, spec.duration, counter);
	const elapsed = (lastAnswerAt - started) / 1000;
	const codes: Record<string, number> = {};
	for (const [code, count] of Object.entries(
		(result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {},
	))
		codes[code] = count.count;
	const ok = result["2xx"];
	// autocannon's `duration` is whole seconds (it stops on its one-second tick): a run that
	// ends at `amount` requests (writes, warm-ups) is timed to its last answer instead, or
	// 12,000 requests answered in 12.4 s read as 13 s (-7%).
	const seconds = spec.amount ? elapsed : result.duration;
	return {
		requestsPerSecond: ok / seconds,
		latency: {
			p50: result.latency.p50,
			p90: result.latency.p90,
			p99: result.latency.p99,
			max: result.latency.max,
			mean: result.latency.average,
		},
		total: result.requests.total,
		ok,
		non2xx: result.non2xx,
		errors: result.errors,
		timeouts: result.timeouts,
		statusCodes: codes,
		durationSeconds: seconds,
		issued: counter.next - before,
	};
}

function percentile(sorted: number[], q: number): number {
	if (sorted.length === 0) return NaN;
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

async function latency(spec: LatencySpec): Promise<LatencyResult> {
	const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
	const base = new URL(spec.url);
	const get = (path: string) =>
		new Promise<number>((resolve, reject) => {
			const request = http.request(
				{ host: base.hostname, port: base.port, path, method: "GET", headers: spec.headers, agent },
				(response) => {
					response.on("data", () => undefined);
					response.on("end", () => resolve(response.statusCode ?? 0));
				},
			);
			request.on("error", reject);
			request.end();
		});
	const pick = () => spec.paths[(Math.random() * spec.paths.length) | 0];
	const warmUntil = performance.now() + (spec.warmup ?? 0) * 1000;
	while (performance.now() < warmUntil) await get(pick());
	const samples: number[] = [];
	const codes: Record<string, number> = {};
	let non2xx = 0;
	const until = performance.now() + spec.duration * 1000;
	while (performance.now() < until && samples.length < (spec.maxRequests ?? Infinity)) {
		const started = process.hrtime.bigint();
		const status = await get(pick());
		samples.push(Number(process.hrtime.bigint() - started) / 1e6);
		codes[status] = (codes[status] ?? 0) + 1;
		if (status < 200 || status >= 300) non2xx++;
	}
	agent.destroy();
	const sorted = [...samples].sort((a, b) => a - b);
	return {
		count: samples.length,
		p50: percentile(sorted, 0.5),
		p90: percentile(sorted, 0.9),
		p99: percentile(sorted, 0.99),
		mean: samples.reduce((sum, value) => sum + value, 0) / Math.max(1, samples.length),
		statusCodes: codes,
		non2xx,
	};
}

process.once("message", (spec: LoadSpec | LatencySpec) => {
	("latency" in spec ? latency(spec) : measure(spec)).then(
		(result) => process.send?.({ result }, () => process.exit(0)),
		(error: Error) => process.send?.({ error: error.stack ?? error.message }, () => process.exit(1)),
	);
});
