// Writes prometheus-rule.yaml (a PrometheusRule for the Prometheus Operator) from
// registry-rules.yaml, the one source of the rules: `node k8s/monitoring/generate.mjs && npx prettier --write k8s/monitoring`.
// test/unit/monitoring.spec.ts fails when the two differ.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const rules = parse(fs.readFileSync(path.join(here, "registry-rules.yaml"), "utf8"));
const resource = {
	apiVersion: "monitoring.coreos.com/v1",
	kind: "PrometheusRule",
	metadata: {
		name: "participant-registry",
		labels: { "app.kubernetes.io/part-of": "participant-registry", release: "prometheus" },
	},
	spec: { groups: rules.groups },
};
const header =
	"# GENERATED from registry-rules.yaml by generate.mjs: edit that file, then run `node k8s/monitoring/generate.mjs && npx prettier --write k8s/monitoring`.\n";
fs.writeFileSync(path.join(here, "prometheus-rule.yaml"), header + stringify(resource, { lineWidth: 0 }));
