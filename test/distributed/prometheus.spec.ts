/**
 * Issue 23: a real Prometheus (Debian's, its own storage in a temporary folder, a free port)
 * scrapes a running two-process cluster every second, with k8s/monitoring/registry-rules.yaml
 * loaded. Once its API shows both targets up, every metric name the rules and the dashboard
 * use is found there, every rule evaluates without error, and a burst of bad logins makes the
 * lockout series rise. The core process runs network against a stand-in SML, so its deliveries
 * gauge is there too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "yaml";
import type { Cluster } from "../support/cluster";
import { basic } from "../support/registry";
import { freePort } from "../support/local-network";
import { missingBinaries } from "../support/private-servers";
import { makeTestPki, missingOpenssl, networkEnv, StandInSml, type TestPki } from "../support/stand-in-network";
import { FREE_PROCESSES, LOOKUP, Participants, pollUntil, qid, send, startSeededCluster } from "./support";

const PROMETHEUS = process.env.TEST_PROMETHEUS ?? "/usr/bin/prometheus";
const MONITORING = path.join(__dirname, "..", "..", "k8s", "monitoring");
const missing = [...missingBinaries(PROMETHEUS), ...missingOpenssl()];
const suite = missing.length ? describe.skip : describe;

/** Metric names in PromQL expressions (recording rules' names, with a colon, are not metrics). */
function metricNames(expressions: string[]): string[] {
	const names = expressions.flatMap(
		(expr) => expr.match(/\b(?:moleculer_[a-z0-9_]+|registry_[a-z0-9_]+|up)\b(?=\s*[{[)\s]|$)/g) ?? [],
	);
	return [...new Set(names)].sort();
}

const rulesFile = parse(fs.readFileSync(path.join(MONITORING, "registry-rules.yaml"), "utf8")) as {
	groups: { rules: { expr: string }[] }[];
};
const dashboard = JSON.parse(fs.readFileSync(path.join(MONITORING, "grafana-dashboard.json"), "utf8")) as {
	panels: { targets: { expr: string }[] }[];
};
const USED = metricNames([
	...rulesFile.groups.flatMap((group) => group.rules.map((rule) => rule.expr)),
	...dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)),
]);

let cluster: Cluster;
let pki: TestPki | null = null;
let sml: StandInSml | null = null;
let prometheus: ChildProcess | null = null;
let prometheusUrl = "";
let prometheusLog = "";
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-prometheus-"));

async function query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
	const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
	const body = (await response.json()) as {
		status: string;
		data: { result: { metric: Record<string, string>; value: [number, string] }[] };
	};
	if (body.status !== "success") throw new Error(`query ${promql}: ${JSON.stringify(body)}`);
	return body.data.result;
}

suite("a real Prometheus scrapes a two-process cluster", () => {
	beforeAll(async () => {
		pki = makeTestPki();
		sml = await new StandInSml(pki).start();
		cluster = await startSeededCluster({
			topology: { gateway: "api,lookup,accounts", core: "catalog,participants,accessPoints,audit,network" },
			env: { AUTH_USER_MAX_FAILURES: "3", ...networkEnv(pki, sml, null), SML_SYNC_INTERVAL: "0" },
		});
		const targets = [...cluster.processes.values()].map((entry) => `127.0.0.1:${entry.port}`);
		fs.copyFileSync(path.join(MONITORING, "registry-rules.yaml"), path.join(dir, "registry-rules.yaml"));
		fs.writeFileSync(
			path.join(dir, "prometheus.yml"),
			stringify({
				global: { scrape_interval: "1s", evaluation_interval: "1s" },
				rule_files: ["registry-rules.yaml"],
				scrape_configs: [{ job_name: "participant-registry", static_configs: [{ targets }] }],
			}),
		);
		const port = await freePort();
		prometheusUrl = `http://127.0.0.1:${port}`;
		prometheus = spawn(
			PROMETHEUS,
			[
				`--config.file=${path.join(dir, "prometheus.yml")}`,
				`--storage.tsdb.path=${path.join(dir, "data")}`,
				`--web.listen-address=127.0.0.1:${port}`,
				"--log.level=warn",
			],
			{ stdio: ["ignore", "pipe", "pipe"] },
		);
		prometheus.stdout?.on("data", (chunk: Buffer) => (prometheusLog += chunk.toString()));
		prometheus.stderr?.on("data", (chunk: Buffer) => (prometheusLog += chunk.toString()));
		// Traffic every metric needs: a write (the change channel, outboxes), lookups (the answer cache), a 404.
		const organization = `prom-${cluster.namespace}`;
		expect((await new Participants(cluster).add(organization, FREE_PROCESSES.slice(0, 1))).status).toBe(201);
		const lookup = (name: string) =>
			send(`${cluster.url}/rest/api/organizations/${encodeURIComponent(qid(name))}/processes`, {
				headers: { Accept: LOOKUP },
			});
		await pollUntil("the lookup to know the participant", 20000, async () =>
			(await lookup(organization)).status === 200 ? true : undefined,
		);
		for (let i = 0; i < 3; i++) await lookup(organization);
		await lookup(`absent-${cluster.namespace}`);
	}, 180000);

	afterAll(async () => {
		if (prometheus && prometheus.exitCode === null) {
			const exited = new Promise((resolve) => prometheus!.once("exit", resolve));
			prometheus.kill("SIGTERM");
			await exited;
		}
		await cluster?.stop();
		await sml?.stop();
		fs.rmSync(dir, { recursive: true, force: true });
		if (pki) fs.rmSync(pki.dir, { recursive: true, force: true });
	});

	test("its API shows both processes up, finds every metric the rules and the dashboard use, and evaluates every rule", async () => {
		await pollUntil(
			`Prometheus to scrape both targets\n${prometheusLog}`,
			30000,
			async () => {
				const response = await fetch(`${prometheusUrl}/api/v1/targets`).catch(() => null);
				if (!response?.ok) return undefined;
				const targets = ((await response.json()) as { data: { activeTargets: { health: string }[] } }).data
					.activeTargets;
				return targets.length === cluster.processes.size && targets.every((target) => target.health === "up")
					? true
					: undefined;
			},
			200,
		);
		expect(USED.length).toBeGreaterThanOrEqual(15);
		// Some series appear a few seconds after start (the channel's backlog is read every 5 s): wait for them, not for the clock.
		let absent: string[] = USED;
		await pollUntil(
			"every metric to be scraped",
			30000,
			async () => {
				const still: string[] = [];
				for (const name of absent) if ((await query(name)).length === 0) still.push(name);
				absent = still;
				return still.length === 0 ? true : undefined;
			},
			500,
		).catch(() => undefined);
		expect(absent).toEqual([]);
		const rules = await pollUntil("every rule to have been evaluated", 20000, async () => {
			const response = await fetch(`${prometheusUrl}/api/v1/rules`);
			const groups = (
				(await response.json()) as {
					data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
				}
			).data.groups;
			const all = groups.flatMap((group) => group.rules);
			return all.length > 0 && all.every((rule) => rule.health !== "unknown") ? all : undefined;
		});
		expect(rules.filter((rule) => rule.health !== "ok").map((rule) => `${rule.name}: ${rule.lastError}`)).toEqual(
			[],
		);
		// The lookup's p99 is computed from the real histogram once lookups come in while it scrapes.
		const p99 = await pollUntil(
			"the lookup's p99 to be recorded",
			20000,
			async () => {
				await send(
					`${cluster.url}/rest/api/organizations/${encodeURIComponent(qid(`absent-${Date.now()}`))}/processes`,
					{ headers: { Accept: LOOKUP } },
				);
				const samples = await query("registry:lookup_latency_p99:ms5m");
				const value = Number(samples[0]?.value[1]);
				return Number.isFinite(value) ? value : undefined;
			},
			500,
		);
		expect(p99).toBeGreaterThan(0);
	});

	test("a burst of bad logins makes the lockout series rise", async () => {
		const lockouts = async () =>
			(await query('sum(registry_login_lockouts_total{scope="user"})')).reduce(
				(total, sample) => total + Number(sample.value[1]),
				0,
			);
		const before = await lockouts();
		// AUTH_USER_MAX_FAILURES=3: every third failure of one username locks it.
		for (let i = 0; i < 3; i++) {
			const answer = await send(`${cluster.url}/rest/api/participants?size=1`, {
				headers: { Authorization: basic(`burst-${cluster.namespace}`, `wrong-${i}`) },
			});
			expect(answer.status).toBe(401);
		}
		const after = await pollUntil("the lockout series to rise", 20000, async () => {
			const value = await lockouts();
			return value > before ? value : undefined;
		});
		expect(after).toBeGreaterThan(before);
	});
});
