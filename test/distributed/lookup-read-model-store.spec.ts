/**
 * Issue 43 (decisions §11, §12): the durable channel gives each participant change to one lookup
 * node of the group, so lookup nodes must share one read model. A lookup node that finds another
 * on a different read-model store (each its own SQLite here, no MONGO_URI) is not ready, and says
 * why; once the other is gone it is ready again. Nodes on one store stay ready
 * (lookup-shared-work.spec.ts), as does a single node on its own SQLite (lookup-node.spec.ts).
 */
import { startCluster, type Cluster } from "../support/cluster";
import { REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { pollUntil, send, type Answer } from "./support";

let cluster: Cluster;

beforeAll(async () => {
	cluster = await startCluster({
		topology: { core: "catalog,accounts,accessPoints,participants,audit", lookup: "lookup" },
	});
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => cluster?.stop());

const readiness = (name: string): Promise<Answer> =>
	send(`http://127.0.0.1:${cluster.processes.get(name)?.port}/health/ready`);

interface Readiness {
	status: string;
	checks: Record<string, string>;
	details?: Record<string, string>;
}

test("two lookup nodes each on its own read-model store: neither is ready, each says why; with the other gone the first is ready again", async () => {
	expect((await readiness("lookup")).status).toBe(200);
	// A second lookup node on a read-model store of its own (its own DATA_DIR): not ready, so not waited for.
	await cluster.add("lookup2", "lookup", false);

	for (const [name, other] of [
		["lookup2", "lookup"],
		["lookup", "lookup2"],
	]) {
		const answer = await pollUntil(`${name} to say it is not ready`, 60000, async () => {
			const found = await readiness(name);
			return found.status === 503 && (found.body as Readiness).checks["cluster:lookup"] === "DOWN"
				? found
				: undefined;
		});
		const body = answer.body as Readiness;
		expect(body.status).toBe("DOWN");
		expect(body.details?.["cluster:lookup"]).toContain(`${other}-${cluster.namespace}`);
		expect(body.details?.["cluster:lookup"]).toContain("read-model store");
		const logs = () => cluster.processes.get(name)?.output.join("") ?? "";
		await pollUntil(`${name} to log why`, 10000, async () =>
			logs().includes(`${other}-${cluster.namespace}`) && logs().includes("read-model store") ? true : undefined,
		);
	}

	await cluster.kill("lookup2", "SIGTERM");
	const again = await pollUntil("lookup to be ready again", 60000, async () => {
		const found = await readiness("lookup");
		return found.status === 200 ? found : undefined;
	});
	expect((again.body as Readiness).checks["cluster:lookup"]).toBe("UP");
}, 180000);
