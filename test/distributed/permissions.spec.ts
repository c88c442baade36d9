/**
 * The operations table's roles on the transporter (src/platform/permissions.ts): a node that is
 * not the gateway (the cluster's service-less test node, with the cluster key) calls the
 * participants service's actions directly, naming signed callers (src/platform/caller-signature.ts).
 * Without a caller, or with a role the operation does not allow, it is refused as the gateway
 * would refuse it; with an allowed role the action runs. Strangers and forged callers:
 * cluster-key.spec.ts.
 */
import { PROCESS_READY_TIMEOUT_MS, startCluster, type Cluster } from "../support/cluster";
import { REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import { callerMeta } from "../../src/platform/caller-signature";

const SP1 = {
	username: "sp1",
	role: "SERVICE_PROVIDER",
	serviceProvider: "11111111-0000-4000-8000-000000000001",
} as const;
const ACCESS_POINT_PROVIDER = { username: "app1", role: "ACCESS_POINT_PROVIDER" } as const;
const AUTHORITY = { username: "authority", role: "NETWORK_AUTHORITY" } as const;
const FORM = {
	icd: "0088",
	organizationIdentifier: "permissions-test",
	processes: [],
	contact: { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" },
};

let cluster: Cluster;

beforeAll(async () => {
	// The participants service (with the catalog and accounts it asks) in one process: a remote node for the test's broker.
	cluster = await startCluster({ topology: { registry: "catalog,accounts,accessPoints,participants" } });
	await cluster.broker.waitForServices(["participants"], PROCESS_READY_TIMEOUT_MS);
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => cluster?.stop());

async function failure(promise: Promise<unknown>): Promise<{ code: number; type: string }> {
	try {
		await promise;
	} catch (error) {
		return error as never;
	}
	throw new Error("expected the call to fail");
}

test("participants.add and participants.find over NATS without a caller: 401 AuthenticationException", async () => {
	expect(await failure(cluster.broker.call("participants.add", { body: FORM }))).toMatchObject({
		code: 401,
		type: "AuthenticationException",
	});
	expect(await failure(cluster.broker.call("participants.find", {}))).toMatchObject({
		code: 401,
		type: "AuthenticationException",
	});
});

test("participants.add and participants.find over NATS with a role their operations do not allow: 403 AccessDeniedException", async () => {
	expect(
		await failure(
			cluster.broker.call("participants.add", { body: FORM }, { meta: callerMeta(cluster.broker, AUTHORITY) }),
		),
	).toMatchObject({ code: 403, type: "AccessDeniedException" });
	expect(
		await failure(
			cluster.broker.call("participants.find", {}, { meta: callerMeta(cluster.broker, ACCESS_POINT_PROVIDER) }),
		),
	).toMatchObject({ code: 403, type: "AccessDeniedException" });
	const found = await cluster.broker.call<{ content: unknown[] }, object>(
		"participants.find",
		{ query: "permissions-test" },
		{ meta: callerMeta(cluster.broker, AUTHORITY) },
	);
	expect(found.content).toEqual([]);
});

test("participants.find over NATS with an allowed role runs", async () => {
	await expect(
		cluster.broker.call("participants.find", {}, { meta: callerMeta(cluster.broker, SP1) }),
	).resolves.toMatchObject({
		content: expect.any(Array),
	});
});
