/**
 * The operator's watch (k8s/monitoring/): Prometheus's own tools check the rules and run their
 * unit tests (each alert fires on made-up series showing its trouble and stays quiet
 * otherwise); the PrometheusRule is the rules file, generated; the write-latency rule names
 * exactly the write operations; every alert has its runbook section; every dashboard query is
 * valid PromQL over metrics the rules know. That Prometheus really finds these metrics on a
 * running cluster is test/distributed/prometheus.spec.ts.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "yaml";
import { OPERATIONS } from "../../src/contract/operations";

const ROOT = path.join(__dirname, "..", "..");
const DIR = path.join(ROOT, "k8s", "monitoring");
const PROMTOOL = process.env.TEST_PROMTOOL ?? "/usr/bin/promtool";
const promtoolMissing = !fs.existsSync(PROMTOOL);
if (promtoolMissing && process.env.CI === "true")
	throw new Error(`CI=true and ${PROMTOOL} missing: install Debian's prometheus package (.ci/run)`);
// eslint-disable-next-line no-console
if (promtoolMissing) console.warn(`promtool tests skipped: ${PROMTOOL} not installed (Debian package prometheus)`);
const withPromtool = promtoolMissing ? test.skip : test;

type Rule = {
	record?: string;
	alert?: string;
	expr: string;
	labels?: Record<string, string>;
	annotations?: Record<string, string>;
};
const rulesFile = parse(fs.readFileSync(path.join(DIR, "registry-rules.yaml"), "utf8")) as {
	groups: { name: string; rules: Rule[] }[];
};
const rules = rulesFile.groups.flatMap((group) => group.rules);
const alerts = rules.filter((rule) => rule.alert);
const dashboard = JSON.parse(fs.readFileSync(path.join(DIR, "grafana-dashboard.json"), "utf8")) as {
	panels: { title: string; targets: { expr: string }[] }[];
};

function promtool(...args: string[]): { status: number | null; output: string } {
	const run = spawnSync(PROMTOOL, args, { cwd: DIR, encoding: "utf8", timeout: 60000 });
	return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("k8s/monitoring", () => {
	withPromtool("promtool check rules: the rules file is valid", () => {
		const result = promtool("check", "rules", "registry-rules.yaml");
		expect(result).toEqual({ status: 0, output: expect.stringContaining("SUCCESS") });
	});

	withPromtool("promtool test rules: every alert fires on its trouble and stays quiet otherwise", () => {
		const result = promtool("test", "rules", "registry-rules.test.yaml");
		expect(result).toEqual({ status: 0, output: expect.stringContaining("SUCCESS") });
	});

	test("the unit tests expect every alert to fire at least once, and check each one quiet at least once", () => {
		const tests = parse(fs.readFileSync(path.join(DIR, "registry-rules.test.yaml"), "utf8")) as {
			tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
		};
		const checks = tests.tests.flatMap((entry) => entry.alert_rule_test ?? []);
		for (const { alert } of alerts) {
			expect({
				alert,
				fires: checks.some((check) => check.alertname === alert && (check.exp_alerts ?? []).length > 0),
			}).toEqual({ alert, fires: true });
			expect({
				alert,
				quiet: checks.some((check) => check.alertname === alert && (check.exp_alerts ?? []).length === 0),
			}).toEqual({ alert, quiet: true });
		}
	});

	test("prometheus-rule.yaml is the rules file as a PrometheusRule (node k8s/monitoring/generate.mjs)", () => {
		const resource = parse(fs.readFileSync(path.join(DIR, "prometheus-rule.yaml"), "utf8"));
		expect(resource.kind).toBe("PrometheusRule");
		expect(resource.apiVersion).toBe("monitoring.coreos.com/v1");
		expect(stringify(resource.spec.groups)).toBe(stringify(rulesFile.groups));
	});

	test("the write-latency rule names exactly the write operations of src/contract/operations.ts", () => {
		const expr = rules.find((rule) => rule.record === "registry:write_latency_p99:ms5m")!.expr;
		const named = /action=~"([^"]+)"/.exec(expr)![1].split("|").sort();
		const writes = [
			...new Set(
				OPERATIONS.filter((operation) => operation.method !== "GET").map((operation) => operation.action),
			),
		].sort();
		expect(named).toEqual(writes);
	});

	test.each(alerts.map((rule) => [rule.alert!, rule]))(
		"alert %s has a severity, a summary and a runbook section in docs/operations.md",
		(name, rule) => {
			const docs = fs.readFileSync(path.join(ROOT, "docs", "operations.md"), "utf8");
			expect(["page", "warning"]).toContain(rule.labels?.severity);
			expect(rule.annotations?.summary).toBeTruthy();
			const anchor = rule.annotations!.runbook.split("#")[1];
			const headings = docs
				.split("\n")
				.filter((line) => line.startsWith("#"))
				.map((line) =>
					line
						.replace(/^#+\s*/, "")
						.toLowerCase()
						.replace(/[^a-z0-9 -]/g, "")
						.replace(/ /g, "-"),
				);
			expect(headings).toContain(anchor);
			// The section is the alert's own, named in its heading.
			expect(docs).toMatch(new RegExp(`^#+ .*${name}`, "m"));
		},
	);

	withPromtool("every dashboard query is valid PromQL (checked by promtool as recording rules)", () => {
		const targets = dashboard.panels.flatMap((panel) =>
			panel.targets.map((target) => target.expr.replace(/\$instance/g, ".*")),
		);
		expect(targets.length).toBeGreaterThanOrEqual(12);
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-dashboard-"));
		try {
			const file = path.join(dir, "dashboard-rules.yaml");
			fs.writeFileSync(
				file,
				stringify({
					groups: [
						{
							name: "dashboard",
							rules: targets.map((expr, index) => ({ record: `dashboard:panel${index}`, expr })),
						},
					],
				}),
			);
			const result = promtool("check", "rules", file);
			expect(result).toEqual({ status: 0, output: expect.stringContaining("SUCCESS") });
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	});
});
