/**
 * Decisions §11: in the k8s topology run on one machine (two gateways, two lookup nodes
 * answering lookups over HTTP, every domain service in its own process, over NATS and Redis),
 * every lookup node and gateway answers every committed change within 1 s, and never an older
 * state after the newer one: participant adds, updates, deletes and transfers, and catalog
 * changes (a process renamed or hidden), made through random gateways. Every process is started
 * as `npm start` does, all at once (one of them loads the demo data meanwhile). Once with all
 * processes on one data directory, once with a data directory per service (the lookups share theirs).
 */
import type { Cluster } from "../support/cluster";
import { K8S_TOPOLOGY, runConvergence, startDemoCluster, summary } from "./convergence";
import { REGISTRY_START_TIMEOUT_MS } from "../support/registry";

const GATEWAYS = ["gateway1", "gateway2"];

const variants: [string, Record<string, string>, Record<string, string>][] = [
	["one data directory", K8S_TOPOLOGY, Object.fromEntries(Object.keys(K8S_TOPOLOGY).map((name) => [name, "shared"]))],
	// Two nodes of participants and of catalog too: read caches and catalog copies on both.
	[
		"a data directory per service, two participants and two catalog nodes",
		{ ...K8S_TOPOLOGY, participants2: "participants", catalog2: "catalog" },
		{ lookup2: "lookup1", participants2: "participants", catalog2: "catalog" },
	],
];

describe.each(variants)("two gateways, two lookup nodes, %s", (name, topology, shareDataWith) => {
	let cluster: Cluster;
	beforeAll(async () => {
		cluster = await startDemoCluster({ topology, shareDataWith });
	}, REGISTRY_START_TIMEOUT_MS);
	afterAll(() => cluster?.stop());

	test("500 random changes through random gateways: every node agrees within 1 s after each, and none goes back to an older answer", async () => {
		const report = await runConvergence(cluster, {
			gateways: GATEWAYS,
			lookups: () => [...GATEWAYS, "lookup1", "lookup2"],
			changes: 520,
			seed: 17,
		});
		// eslint-disable-next-line no-console
		console.info(summary(name, report));
		expect(report.failedWrites).toEqual([]);
		expect(report.changes).toBeGreaterThanOrEqual(500);
		expect(report.staleAfterOneSecond).toEqual([]);
		expect(report.regressions).toEqual([]);
	}, 600000);
});
