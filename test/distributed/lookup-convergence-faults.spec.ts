/**
 * Decisions §11, with faults: the convergence run of lookup-convergence.spec.ts while a lookup
 * node is killed (SIGKILL) and started again, and then the cluster's Redis is killed and started
 * again. Every lookup node that is up still agrees within 1 s after each change (clients reach
 * lookup nodes through the ingress, which leaves a node that is down out).
 */
import type { Cluster } from "../support/cluster";
import { freePort } from "../support/local-network";
import { K8S_TOPOLOGY, runConvergence, startDemoCluster, summary } from "./convergence";
import { LOOKUP, PrivateRedis, send } from "./support";
import { demoAuth } from "../support/registry";
import { REGISTRY_START_TIMEOUT_MS } from "../support/registry";

const ALL_ON_ONE_DIRECTORY = Object.fromEntries(Object.keys(K8S_TOPOLOGY).map((name) => [name, "shared"]));

let cluster: Cluster;

async function warmUp(target: Cluster, name: string): Promise<void> {
	const url = `http://127.0.0.1:${target.processes.get(name)?.port}/rest/api/organizations/${encodeURIComponent("iso6523-actorid-upis::0192:991825827")}/processes`;
	const anonymous: Record<string, string> = { Accept: LOOKUP };
	for (const headers of [anonymous, { ...anonymous, Authorization: demoAuth("ADMIN") }])
		expect((await send(url, { headers })).status).toBe(200);
}
let redis: PrivateRedis;

beforeAll(async () => {
	redis = new PrivateRedis(await freePort());
	await redis.start();
	cluster = await startDemoCluster({ shareDataWith: ALL_ON_ONE_DIRECTORY, env: { CACHER: redis.url } });
}, REGISTRY_START_TIMEOUT_MS);
afterAll(async () => {
	await cluster?.stop();
	await redis?.kill();
	redis?.dispose();
});

test("a lookup node killed and restarted, then Redis killed and restarted, during 500 random changes: every node up agrees within 1 s after each", async () => {
	const faults: string[] = [];
	let lookup2Up = true;
	const report = await runConvergence(cluster, {
		gateways: ["gateway1", "gateway2"],
		lookups: () => (lookup2Up ? ["lookup1", "lookup2"] : ["lookup1"]),
		changes: 520,
		seed: 1717,
		async before(index) {
			if (index === 100) {
				lookup2Up = false;
				await cluster.kill("lookup2", "SIGKILL");
				faults.push(`lookup2 killed before change ${index}`);
			} else if (index === 200) {
				await cluster.restart("lookup2");
				// Its first authenticated request verifies the credential (scrypt) and warms the process: a latency, not staleness.
				await warmUp(cluster, "lookup2");
				lookup2Up = true;
				faults.push(`lookup2 restarted before change ${index}`);
			} else if (index === 300) {
				await redis.kill();
				faults.push(`Redis killed before change ${index}`);
			} else if (index === 380) {
				await redis.start();
				faults.push(`Redis restarted before change ${index}`);
			}
		},
	});
	// eslint-disable-next-line no-console
	console.info(`${summary("with faults", report)}; ${faults.join(", ")}`);
	// A stale change is rare: keep what the processes logged (warnings and up) beside it.
	if (report.staleAfterOneSecond.length > 0)
		for (const [name, entry] of cluster.processes)
			// eslint-disable-next-line no-console
			console.info(`--- ${name} (last lines)\n${entry.output.join("").slice(-1500)}`);
	expect(faults).toHaveLength(4);
	expect(report.failedWrites).toEqual([]);
	expect(report.changes).toBeGreaterThanOrEqual(500);
	expect(report.staleAfterOneSecond).toEqual([]);
	expect(report.regressions).toEqual([]);
}, 900000);
