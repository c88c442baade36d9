/**
 * The operations table's roles enforced on the node that runs an action
 * (src/platform/permissions.ts), on an in-memory registry broker with the real services:
 * a call the gateway would refuse is refused the same way when it reaches the action directly.
 */
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import type { Caller, Participant } from "../../src/contract/model";
import { OPERATIONS } from "../../src/contract/operations";
import { importSeed } from "../../src/exchange/seed";
import { callerMeta, markAuthenticated, signAuthentication, signCaller } from "../../src/platform/caller-signature";
import { actionRoles } from "../../src/platform/permissions";
import { demoSeed } from "../support/registry";

const SP1 = "11111111-0000-4000-8000-000000000001";
const BILLING = "55555555-0000-4000-8000-000000000001";
const sp1: Caller = { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: SP1 };
const accessPointProvider: Caller = {
	username: "app1",
	role: "ACCESS_POINT_PROVIDER",
	accessPointProvider: "22222222-0000-4000-8000-000000000001",
};
const authority: Caller = { username: "authority", role: "NETWORK_AUTHORITY" };
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const form = (organizationIdentifier: string) => ({
	icd: "0088",
	organizationIdentifier,
	processes: [{ identifier: BILLING }],
	contact,
});

let broker: ServiceBroker;

async function failure(promise: Promise<unknown>): Promise<{ code: number; type: string; message: string }> {
	try {
		await promise;
	} catch (error) {
		return error as never;
	}
	throw new Error("expected the call to fail");
}

beforeAll(async () => {
	broker = createRegistryBroker({
		env: { DATA_DIR: ":memory:" },
		services: ["catalog", "accounts", "accessPoints", "participants", "lookup"],
		overrides: { logger: false },
	});
	await broker.start();
	await importSeed(broker, demoSeed());
});
afterAll(() => broker.stop());

test("an action's roles are the union of the roles of the operations that call it", () => {
	const roles = actionRoles();
	// participants.get: SERVICE_PROVIDER by qualified identifier, the readers by UUID.
	expect([...(roles.get("participants.get") ?? [])].sort()).toEqual([
		"ADMIN",
		"NETWORK_AUTHORITY",
		"SERVICE_PROVIDER",
	]);
	expect([...(roles.get("participants.delete") ?? [])].sort()).toEqual(["ADMIN", "SERVICE_PROVIDER"]);
	expect(new Set(roles.keys())).toEqual(new Set(OPERATIONS.map((operation) => operation.action)));
	expect(roles.has("participants.organizationProcessSets")).toBe(false);
});

test("without a caller, an action no anonymous operation calls answers 401 AuthenticationException, before validating anything", async () => {
	expect(await failure(broker.call("participants.add", { body: form("910000001") }))).toMatchObject({
		code: 401,
		type: "AuthenticationException",
	});
	expect(await failure(broker.call("participants.add", { body: "not a form" }))).toMatchObject({
		code: 401,
		type: "AuthenticationException",
	});
	expect(await failure(broker.call("participants.find", {}, { meta: { user: null } }))).toMatchObject({
		code: 401,
		type: "AuthenticationException",
	});
});

test("a caller whose role no operation of the action allows answers 403 AccessDeniedException, and nothing changes", async () => {
	expect(
		await failure(
			broker.call("participants.add", { body: form("910000002") }, { meta: callerMeta(broker, authority) }),
		),
	).toMatchObject({ code: 403, type: "AccessDeniedException" });
	expect(
		await failure(broker.call("participants.find", {}, { meta: callerMeta(broker, accessPointProvider) })),
	).toMatchObject({
		code: 403,
		type: "AccessDeniedException",
	});
	// A claimed role that is not a caller's role, or no role at all, is no better, signed or not.
	for (const user of [{ username: "x", role: "ANONYMOUS" }, { username: "x", role: ["ADMIN"] }, "ADMIN"]) {
		expect(
			await failure(broker.call("participants.find", {}, { meta: callerMeta(broker, user as never) })),
		).toMatchObject({
			code: 403,
			type: "AccessDeniedException",
		});
	}
	const found = await broker.call<{ content: Participant[] }, object>(
		"participants.find",
		{ query: "910000002" },
		{ meta: callerMeta(broker, authority) },
	);
	expect(found.content).toEqual([]);
});

test("with an allowed role the action runs", async () => {
	const added = await broker.call<Participant, object>(
		"participants.add",
		{ body: form("910000003") },
		{ meta: callerMeta(broker, sp1) },
	);
	expect(added).toMatchObject({ organizationIdentifier: "910000003", provider: { identifier: SP1 } });
	const found = await broker.call<{ content: Participant[] }, object>(
		"participants.find",
		{ query: "910000003" },
		{ meta: callerMeta(broker, authority) },
	);
	expect(found.content.map((participant) => participant.identifier)).toEqual([added.identifier]);
});

test("an operation open to anonymous callers stays open without a caller; internal actions are not checked", async () => {
	await expect(broker.call("catalog.findProcesses", {})).resolves.toMatchObject({ content: expect.any(Array) });
	await expect(broker.call("catalog.allProcesses", {})).resolves.toEqual(expect.any(Array));
});

test("SMP publishing data: only an access point provider or ADMIN sets endpoints, only ADMIN links access points; others 403 and nothing changes", async () => {
	const ACCESS_POINT = "33333333-0000-4000-8000-000000000001";
	const before = await broker.call(
		"accessPoints.get",
		{ identifier: ACCESS_POINT },
		{ meta: callerMeta(broker, sp1) },
	);
	for (const user of [sp1, authority]) {
		expect(
			await failure(
				broker.call(
					"accessPoints.setEndpoints",
					{ identifier: ACCESS_POINT, body: { endpoints: [] } },
					{ meta: callerMeta(broker, user) },
				),
			),
		).toMatchObject({ code: 403, type: "AccessDeniedException" });
	}
	for (const user of [sp1, accessPointProvider, authority]) {
		expect(
			await failure(
				broker.call(
					"accounts.setServiceProviderAccessPoints",
					{ identifier: SP1, body: { accessPoints: [] } },
					{ meta: callerMeta(broker, user) },
				),
			),
		).toMatchObject({ code: 403, type: "AccessDeniedException" });
	}
	expect(
		await broker.call("accessPoints.get", { identifier: ACCESS_POINT }, { meta: callerMeta(broker, sp1) }),
	).toEqual(before);
	const provider = await broker.call<{ accessPoints: unknown[] }, object>("accounts.getServiceProvider", {
		identifier: SP1,
	});
	expect(provider.accessPoints).toEqual([{ identifier: ACCESS_POINT }]);
});

describe("the caller's signature (src/platform/caller-signature.ts), in one process as in a cluster", () => {
	const admin: Caller = { username: "admin", role: "ADMIN" };

	test("a caller without a signature, or whose signature expired or covers another caller, is refused 403 whatever its role", async () => {
		const signedSp1 = callerMeta(broker, sp1);
		for (const meta of [
			{ user: admin },
			{ user: sp1, userSignature: "" },
			{ user: admin, userSignature: signedSp1.userSignature },
			{ user: admin, userSignature: signCaller(broker, admin, Date.now() - 10 * 60_000) },
		]) {
			expect(await failure(broker.call("participants.find", {}, { meta }))).toMatchObject({
				code: 403,
				type: "AccessDeniedException",
			});
		}
		// Internal actions too: a call carrying a user must carry its signature.
		expect(await failure(broker.call("catalog.allProcesses", {}, { meta: { user: admin } }))).toMatchObject({
			code: 403,
		});
	});

	test("the very caller this process's gateway authenticated needs no signature here; an equal copy does", async () => {
		const authenticated = markAuthenticated({ username: "admin", role: "ADMIN" });
		const page = await broker.call<{ records: unknown[] }, object>(
			"accounts.exportRecords",
			{ type: "account" },
			{ meta: { user: authenticated } },
		);
		expect(page.records.length).toBeGreaterThan(0);
		expect(
			await failure(
				broker.call("accounts.exportRecords", { type: "account" }, { meta: { user: { ...authenticated } } }),
			),
		).toMatchObject({ code: 403 });
		// Marked callers are frozen: nothing turns one into another afterwards.
		expect(Object.isFrozen(authenticated)).toBe(true);
	});

	test("accounts.exportRecords (password hashes) answers a signed ADMIN only: no caller 401, another role 403", async () => {
		expect(await failure(broker.call("accounts.exportRecords", { type: "account" }))).toMatchObject({ code: 401 });
		expect(
			await failure(broker.call("accounts.exportRecords", { type: "account" }, { meta: { user: admin } })),
		).toMatchObject({ code: 403 });
		expect(
			await failure(
				broker.call("accounts.exportRecords", { type: "account" }, { meta: callerMeta(broker, sp1) }),
			),
		).toMatchObject({ code: 403 });
		const page = await broker.call<{ records: { passwordHash?: string }[] }, object>(
			"accounts.exportRecords",
			{ type: "account" },
			{ meta: callerMeta(broker, admin) },
		);
		expect(page.records.length).toBeGreaterThan(0);
		expect(page.records.every((record) => typeof record.passwordHash === "string")).toBe(true);
	});

	test("accounts.authenticate answers only a gateway's signed call for that username: no password oracle", async () => {
		const ask = (meta: object) =>
			broker.call("accounts.authenticate", { username: "sp1", password: "sp1-demo-password" }, { meta });
		expect(await failure(ask({}))).toMatchObject({ code: 403 });
		expect(await failure(ask({ authenticationSignature: signAuthentication(broker, "admin") }))).toMatchObject({
			code: 403,
		});
		await expect(ask({ authenticationSignature: signAuthentication(broker, "sp1") })).resolves.toMatchObject({
			username: "sp1",
			role: "SERVICE_PROVIDER",
		});
	});
});
