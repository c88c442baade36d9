/**
 * Nothing lost on the way to the SML in a cluster (decisions §14): while the SML is down the
 * organization is failing; while the network process is away the participants' network outbox
 * keeps what changed; killed and started again, the network process delivers both once the SML
 * is back. The stand-in SML demands the test CA's client certificate (test/support/stand-in-network.ts).
 */
import type { Cluster } from "../support/cluster";
import { demoAuth, REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { makeTestPki, missingOpenssl, networkEnv, StandInSml } from "../support/stand-in-network";
import { FREE_PROCESSES, Participants, pollUntil, qid, send, startSeededCluster } from "./support";

const suite = missingOpenssl().length ? describe.skip : describe;
const DEADLINE_MS = 120_000;
const NETWORK = "application/vnd.registry.network.get.v1+json";

suite("the SML delivery in a cluster: an outage and a restart of the network process", () => {
	const pki = makeTestPki();
	const sml = new StandInSml(pki);
	let cluster: Cluster;
	let participants: Participants;
	const stamp = Date.now().toString().slice(-9);
	const [first, second] = [`4${stamp}01`, `4${stamp}02`];

	const until = (what: string, check: () => Promise<boolean>) =>
		pollUntil(what, DEADLINE_MS, async () => ((await check()) ? true : undefined));
	const smlState = async (organization: string) => {
		const answer = await send(`${cluster.url}/rest/api/network/${encodeURIComponent(qid(organization))}`, {
			headers: { Authorization: demoAuth("ADMIN"), Accept: NETWORK },
		});
		return answer.status === 200 ? (answer.body as { sml: { state: string } }).sml.state : null;
	};

	beforeAll(async () => {
		await sml.start();
		cluster = await startSeededCluster({ env: { ...networkEnv(pki, sml, null), SML_SYNC_INTERVAL: "0" } });
		participants = new Participants(cluster);
		await until("the SMP record", async () => sml.smp !== null);
	}, REGISTRY_START_TIMEOUT_MS);
	afterAll(async () => {
		await cluster?.stop();
		await sml.stop();
	});

	it("an organization added while the SML is down is failing, and reaches the SML after it and a restart", async () => {
		sml.down = true;
		expect((await participants.add(first, [FREE_PROCESSES[0]])).status).toBe(201);
		await until("the organization failing", async () => (await smlState(first)) === "failing");
		await cluster.kill("network", "SIGKILL");
		// The network process is away: the change waits in the participants' network outbox.
		expect((await participants.add(second, [FREE_PROCESSES[0]])).status).toBe(201);
		sml.down = false;
		await cluster.restart("network");
		await until("both organizations in the SML", async () =>
			[first, second].every((organization) => sml.participants.has(`0088:${organization}`)),
		);
		await until("both registered", async () => (await smlState(second)) === "registered");
		expect(sml.malformed).toEqual([]);
	});
});
