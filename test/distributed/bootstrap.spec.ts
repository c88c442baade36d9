/**
 * Issue 17: the documented multi-process topology started as an operator does, `npm start`
 * (--demo-when-empty) on every process. The demo data is loaded once for the registry, by
 * one process, and every lookup answers it; a gateway given a REGISTRY_SEED that clashes with
 * the demo data refuses to start and says what to do; a seed given to every process is
 * loaded once and every process starts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCluster, type Cluster } from "../support/cluster";
import { DEMO_SEED_FILE, REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { K8S_TOPOLOGY } from "./convergence";
import { LOOKUP, pollUntil, send } from "./support";

const ALL_ON_ONE_DIRECTORY = Object.fromEntries(Object.keys(K8S_TOPOLOGY).map((name) => [name, "shared"]));
const DEMO_ORGANIZATION = "iso6523-actorid-upis::0192:991825827";
/** What seed/demo.json registers for that organization (its visible processes). */
const DEMO_ANSWER = ["55555555-0000-4000-8000-000000000001", "55555555-0000-4000-8000-000000000006"];

const logsOf = (cluster: Cluster, name: string) => (cluster.processes.get(name)?.output ?? []).join("");

async function lookupIds(cluster: Cluster, gateway: string): Promise<string[] | number> {
	const port = cluster.processes.get(gateway)?.port;
	const answer = await send(
		`http://127.0.0.1:${port}/rest/api/organizations/${encodeURIComponent(DEMO_ORGANIZATION)}/processes`,
		{ headers: { Accept: LOOKUP } },
	);
	return answer.status === 200
		? (answer.body as { identifier: string }[]).map((process) => process.identifier).sort()
		: answer.status;
}

describe("npm start on every process of the k8s topology, one data directory", () => {
	let cluster: Cluster;
	const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "registry-bootstrap-"));
	const clashingSeed = path.join(scratch, "clashing.json");

	beforeAll(async () => {
		// A process with the demo's qualified identifier under another record identifier.
		const demo = JSON.parse(fs.readFileSync(DEMO_SEED_FILE, "utf8"));
		const process = { ...demo.processes[0], identifier: "77777777-0000-4000-8000-000000000001" };
		fs.writeFileSync(clashingSeed, JSON.stringify({ processes: [process] }));
		cluster = await startCluster({
			topology: K8S_TOPOLOGY,
			shareDataWith: { ...ALL_ON_ONE_DIRECTORY, gateway3: "shared" },
			args: ["--demo-when-empty"],
			env: { LOG_LEVEL: "info" },
			processEnv: { gateway3: { REGISTRY_SEED: clashingSeed } },
		});
	}, REGISTRY_START_TIMEOUT_MS);
	afterAll(async () => {
		await cluster?.stop();
		fs.rmSync(scratch, { recursive: true, force: true });
	});

	test("the demo data is loaded once, by one process, and every gateway's and lookup node's lookup answers it", async () => {
		const names = Object.keys(K8S_TOPOLOGY);
		const loaders = names.filter((name) => logsOf(cluster, name).includes("empty registry: loading the demo data"));
		expect(loaders).toHaveLength(1);
		await pollUntil("every other process to skip the demo data", 10000, async () =>
			names.filter((name) => logsOf(cluster, name).includes("the registry was initialized already")).length ===
			names.length - 1
				? true
				: undefined,
		);
		// A node ready before it has discovered a lookup service answers 503 until it has: wait for that.
		for (const node of ["gateway1", "gateway2", "lookup1", "lookup2"]) {
			const answer = await pollUntil(`${node} to answer the lookup`, 20000, async () => {
				const ids = await lookupIds(cluster, node);
				return ids === 503 ? undefined : ids;
			});
			expect(answer).toEqual(DEMO_ANSWER);
		}
	});

	test("a gateway given a REGISTRY_SEED that clashes with the demo data refuses to start, saying what holds the registry and what to do", async () => {
		await expect(cluster.add("gateway3", "api")).rejects.toThrow(
			/REGISTRY_SEED .*clashing\.json refused, nothing changed: this registry already holds the demo data[\s\S]*start it with an empty store and REGISTRY_SEED set on every process/,
		);
	});
});

describe("REGISTRY_SEED on every process of the k8s topology", () => {
	let cluster: Cluster;
	beforeAll(async () => {
		cluster = await startCluster({
			topology: K8S_TOPOLOGY,
			shareDataWith: ALL_ON_ONE_DIRECTORY,
			env: { LOG_LEVEL: "info", REGISTRY_SEED: DEMO_SEED_FILE },
		});
	}, REGISTRY_START_TIMEOUT_MS);
	afterAll(() => cluster?.stop());

	test("every process starts; the first imports the seed, the others find it imported", async () => {
		const imported = Object.keys(K8S_TOPOLOGY).filter((name) => logsOf(cluster, name).includes("imported:"));
		expect(imported).toHaveLength(Object.keys(K8S_TOPOLOGY).length);
		const created = Object.keys(K8S_TOPOLOGY).filter((name) => /created: [1-9]/.test(logsOf(cluster, name)));
		expect(created).toHaveLength(1);
		// A node ready before it has discovered a lookup service answers 503 until it has: wait for that.
		for (const node of ["gateway1", "gateway2", "lookup1", "lookup2"]) {
			const answer = await pollUntil(`${node} to answer the lookup`, 20000, async () => {
				const ids = await lookupIds(cluster, node);
				return ids === 503 ? undefined : ids;
			});
			expect(answer).toEqual(DEMO_ANSWER);
		}
	});
});
