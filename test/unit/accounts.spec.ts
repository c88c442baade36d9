/**
 * The accounts service on an in-memory broker (decisions §3; docs/internals.md "Actions"),
 * with the real accessPoints service, which owns the access point providers accounts name.
 */
process.env.DATA_DIR = ":memory:";

import { Errors, ServiceBroker, type Service } from "moleculer";
import AccessPointsService from "../../services/access-points/access-points.service";
import AccountsService, { accountIdentifier, type AccountSummary } from "../../services/accounts/accounts.service";
import type { Caller, ServiceProvider } from "../../src/contract/model";
import { signAuthentication, signClientResolution } from "../../src/platform/caller-signature";
import { hashPassword } from "../../src/platform/passwords";
import type { Collection, StoredDoc } from "../../src/store/types";

const SP1 = "11111111-0000-4000-8000-0000000000a1";
const SP2 = "11111111-0000-4000-8000-0000000000a2";
const APP1 = "22222222-0000-4000-8000-0000000000a1";
const UNKNOWN = "0f0f0f0f-0000-4000-8000-000000000000";
const AP1 = "33333333-0000-4000-8000-0000000000a1";
const AP2 = "33333333-0000-4000-8000-0000000000a2";
const AS4 = { title: "Peppol AS4 profile v2", value: "peppol-transport-as4-v2_0", certificateTypes: ["Peppol AP"] };

const seed = {
	serviceProviders: [
		{ identifier: SP2, title: "Zeta Billing" },
		{ identifier: SP1, title: "alpha invoicing" },
	],
	accounts: [
		{ username: "sp1", password: "sp1-test-password", role: "SERVICE_PROVIDER", serviceProvider: SP1 },
		{ username: "app1", password: "app1-test-password", role: "ACCESS_POINT_PROVIDER", accessPointProvider: APP1 },
		{ username: "admin", password: "admin-test-password", role: "ADMIN" },
	],
};

let broker: ServiceBroker;
const accountChanges: unknown[] = [];

async function rejection(promise: Promise<unknown>): Promise<Errors.MoleculerError & { data?: unknown }> {
	try {
		await promise;
	} catch (error) {
		return error as Errors.MoleculerError;
	}
	throw new Error("expected a rejection");
}

/** As a gateway asks (src/platform/caller-signature.ts). */
const authenticate = (username: string, password: string) =>
	broker.call<Caller | null, object>(
		"accounts.authenticate",
		{ username, password },
		{ meta: { authenticationSignature: signAuthentication(broker, username) } },
	);

function auditOutbox(): Collection<StoredDoc> {
	return (broker.getLocalService("accounts") as Service & { collections: { auditOutbox: Collection<StoredDoc> } })
		.collections.auditOutbox;
}

beforeAll(async () => {
	broker = new ServiceBroker({ logger: false });
	broker.createService(AccountsService);
	broker.createService(AccessPointsService);
	broker.createService({
		name: "listener",
		events: {
			"accounts.changed"(ctx: { params: unknown }) {
				accountChanges.push(ctx.params);
			},
		},
	});
	await broker.start();
	await broker.call("accessPoints.importSeed", {
		accessPointProviders: [
			{
				identifier: APP1,
				title: "AP provider",
				contact: { name: "Kari", email: "kari@ap.example", phoneNumber: "+47 22 33 44 55" },
			},
		],
		accessPoints: [
			{
				identifier: AP1,
				title: "AP one",
				provider: APP1,
				endpoints: [{ url: "https://one.example/as4", transportProfile: AS4 }],
			},
			{ identifier: AP2, title: "AP two", provider: APP1, endpoints: [] },
		],
	});
	await broker.call("accounts.importSeed", seed);
});
afterAll(() => broker.stop());
beforeEach(() => {
	accountChanges.length = 0;
});

describe("authenticate", () => {
	test("the right password answers a small Caller with the role and the provider the account acts for", async () => {
		expect(await authenticate("sp1", "sp1-test-password")).toEqual({
			username: "sp1",
			role: "SERVICE_PROVIDER",
			serviceProvider: SP1,
		});
		expect(await authenticate("app1", "app1-test-password")).toEqual({
			username: "app1",
			role: "ACCESS_POINT_PROVIDER",
			accessPointProvider: APP1,
		});
		expect(await authenticate("admin", "admin-test-password")).toEqual({ username: "admin", role: "ADMIN" });
	});

	test("a wrong password, an unknown user or a differently cased username answers null, never an error", async () => {
		expect(await authenticate("sp1", "wrong-password")).toBeNull();
		expect(await authenticate("nobody", "sp1-test-password")).toBeNull();
		expect(await authenticate("SP1", "sp1-test-password")).toBeNull();
		expect(await authenticate("sp1", "x".repeat(5000))).toBeNull();
	});
});

describe("service providers", () => {
	test("getServiceProvider answers a known provider and null for an unknown one", async () => {
		expect(await broker.call("accounts.getServiceProvider", { identifier: SP1 })).toEqual({
			identifier: SP1,
			title: "alpha invoicing",
			accessPoints: [],
		});
		expect(await broker.call("accounts.getServiceProvider", { identifier: UNKNOWN })).toBeNull();
	});

	test("serviceProviders answers the known ones in the order asked and leaves unknown ones out", async () => {
		const providers = await broker.call<ServiceProvider[], object>("accounts.serviceProviders", {
			identifiers: [SP2, UNKNOWN, SP1],
		});
		expect(providers.map((provider) => provider.identifier)).toEqual([SP2, SP1]);
	});

	test("addServiceProvider adds one (its identifier may be given), refuses a taken identifier, and listServiceProviders sorts by title", async () => {
		const added = await broker.call<ServiceProvider, object>("accounts.addServiceProvider", {
			body: { title: "Midgard Faktura", identifier: "11111111-0000-4000-8000-0000000000a3" },
		});
		expect(added).toEqual({
			identifier: "11111111-0000-4000-8000-0000000000a3",
			title: "Midgard Faktura",
			accessPoints: [],
		});
		expect(accountChanges).toEqual([{ serviceProvider: added.identifier }]);
		expect(
			(
				await rejection(
					broker.call("accounts.addServiceProvider", {
						body: { title: "Again", identifier: added.identifier },
					}),
				)
			).code,
		).toBe(409);
		const titles = (await broker.call<ServiceProvider[]>("accounts.listServiceProviders")).map(
			(provider) => provider.title,
		);
		expect(titles).toEqual(["alpha invoicing", "Midgard Faktura", "Zeta Billing"]);
	});
});

describe("operator actions", () => {
	test("addAccount creates an account that can authenticate; its answer and its audit record carry no hash", async () => {
		const account = await broker.call<AccountSummary, object>("accounts.addAccount", {
			body: { username: "authority", password: "authority-password", role: "NETWORK_AUTHORITY" },
		});
		expect(account).toEqual({
			identifier: expect.any(String),
			username: "authority",
			role: "NETWORK_AUTHORITY",
			disabled: false,
		});
		expect(await authenticate("authority", "authority-password")).toEqual({
			username: "authority",
			role: "NETWORK_AUTHORITY",
		});
		expect(accountChanges).toEqual([{ username: "authority" }]);
		const audits = await auditOutbox().find({});
		expect(JSON.stringify(audits)).not.toMatch(/scrypt\$/);
		expect(audits.some((record) => (record as unknown as { operation: string }).operation === "addAccount")).toBe(
			true,
		);
	});

	test("a username that is taken is a 409", async () => {
		const error = await rejection(
			broker.call("accounts.addAccount", {
				body: { username: "sp1", password: "another-password", role: "ADMIN" },
			}),
		);
		expect(error.code).toBe(409);
	});

	test("the role decides the link: a service provider account needs an existing service provider, others may not name one", async () => {
		const add = (params: object) =>
			rejection(
				broker.call("accounts.addAccount", {
					body: { username: "linked", password: "linked-password", ...params },
				}),
			);
		const violations = (error: { data?: unknown }) =>
			(error.data as { violations: { field: string; code: string }[] }).violations;
		expect(violations(await add({ role: "SERVICE_PROVIDER" }))).toEqual([
			expect.objectContaining({ field: "serviceProvider", code: "NotNull" }),
		]);
		expect(violations(await add({ role: "SERVICE_PROVIDER", serviceProvider: UNKNOWN }))).toEqual([
			expect.objectContaining({ field: "serviceProvider", code: "Exists" }),
		]);
		expect(violations(await add({ role: "ACCESS_POINT_PROVIDER", accessPointProvider: UNKNOWN }))).toEqual([
			expect.objectContaining({ field: "accessPointProvider", code: "Exists" }),
		]);
		expect(violations(await add({ role: "ADMIN", serviceProvider: SP1 }))).toEqual([
			expect.objectContaining({ field: "serviceProvider", code: "Null" }),
		]);
		expect(
			await broker.call("accounts.addAccount", {
				body: {
					username: "linked",
					password: "linked-password",
					role: "ACCESS_POINT_PROVIDER",
					accessPointProvider: APP1,
				},
			}),
		).toMatchObject({
			accessPointProvider: APP1,
		});
	});

	test("params are validated: a short password, an unknown role, a username with a colon", async () => {
		for (const params of [
			{ username: "short", password: "short", role: "ADMIN" },
			{ username: "role", password: "long-enough-password", role: "ANONYMOUS" },
			{ username: "a:b", password: "long-enough-password", role: "ADMIN" },
		]) {
			expect(await rejection(broker.call("accounts.addAccount", { body: params }))).toBeInstanceOf(
				Errors.ValidationError,
			);
		}
	});

	test("a disabled account no longer authenticates", async () => {
		await broker.call("accounts.addAccount", {
			body: { username: "leaver", password: "leaver-password", role: "ADMIN" },
		});
		accountChanges.length = 0;
		expect(await broker.call("accounts.disableAccount", { identifier: accountIdentifier("leaver") })).toMatchObject(
			{ username: "leaver", disabled: true },
		);
		expect(accountChanges).toEqual([{ username: "leaver" }]);
		expect(await authenticate("leaver", "leaver-password")).toBeNull();
	});

	test("resetPassword replaces the password: the old one fails, the new one works", async () => {
		await broker.call("accounts.addAccount", {
			body: { username: "forgetful", password: "old-password-1", role: "ADMIN" },
		});
		await broker.call("accounts.resetPassword", {
			identifier: accountIdentifier("forgetful"),
			body: { password: "new-password-2" },
		});
		expect(await authenticate("forgetful", "old-password-1")).toBeNull();
		expect(await authenticate("forgetful", "new-password-2")).toMatchObject({ username: "forgetful" });
	});

	test("disabling or resetting an unknown account is a 404", async () => {
		expect(
			(await rejection(broker.call("accounts.disableAccount", { identifier: accountIdentifier("ghost") }))).code,
		).toBe(404);
		expect(
			(
				await rejection(
					broker.call("accounts.resetPassword", {
						identifier: accountIdentifier("ghost"),
						body: { password: "whatever-password" },
					}),
				)
			).code,
		).toBe(404);
	});
});

describe("seed import", () => {
	test("a second import of the same accounts changes nothing, and keeps an operator's disabling", async () => {
		await broker.call("accounts.importSeed", {
			accounts: [{ username: "seasonal", password: "seasonal-password", role: "ADMIN" }],
		});
		await broker.call("accounts.disableAccount", { identifier: accountIdentifier("seasonal") });
		const audits = await auditOutbox().count();
		const counts = await broker.call("accounts.importSeed", {
			...seed,
			accounts: [...seed.accounts, { username: "seasonal", password: "seasonal-password", role: "ADMIN" }],
		});
		expect(counts).toEqual({
			serviceProviders: { created: 0, updated: 0, unchanged: 2 },
			accounts: { created: 0, updated: 0, unchanged: 4 },
		});
		expect(await auditOutbox().count()).toBe(audits);
		expect(await authenticate("seasonal", "seasonal-password")).toBeNull();
	});

	test("the same account imported by two nodes at once is created once, without a conflict", async () => {
		const account = { username: "twice", password: "twice-password", role: "ADMIN" };
		await Promise.all([
			broker.call("accounts.importSeed", { accounts: [account] }),
			broker.call("accounts.importSeed", { accounts: [account] }),
		]);
		expect(await authenticate("twice", "twice-password")).toEqual({ username: "twice", role: "ADMIN" });
	});

	test("an account may bring a passwordHash instead of a password", async () => {
		const passwordHash = await hashPassword("hashed-elsewhere");
		expect(
			await broker.call("accounts.importSeed", {
				accounts: [{ username: "hashed", passwordHash, role: "ADMIN" }],
			}),
		).toMatchObject({
			accounts: { created: 1 },
		});
		expect(await authenticate("hashed", "hashed-elsewhere")).toEqual({ username: "hashed", role: "ADMIN" });
	});

	test("a changed seed password replaces the stored one", async () => {
		await broker.call("accounts.importSeed", {
			accounts: [{ username: "rotated", password: "first-password", role: "ADMIN" }],
		});
		expect(
			await broker.call("accounts.importSeed", {
				accounts: [{ username: "rotated", password: "second-password", role: "ADMIN" }],
			}),
		).toMatchObject({
			accounts: { updated: 1 },
		});
		expect(await authenticate("rotated", "first-password")).toBeNull();
		expect(await authenticate("rotated", "second-password")).toMatchObject({ username: "rotated" });
	});

	test("accounts naming unknown providers, or the wrong kind of link, are refused whole with every reason", async () => {
		const error = await rejection(
			broker.call("accounts.importSeed", {
				accounts: [
					{ username: "fine", password: "fine-password", role: "ADMIN" },
					{
						username: "sp-unknown",
						password: "some-password",
						role: "SERVICE_PROVIDER",
						serviceProvider: UNKNOWN,
					},
					{
						username: "app-unknown",
						password: "some-password",
						role: "ACCESS_POINT_PROVIDER",
						accessPointProvider: UNKNOWN,
					},
					{ username: "admin-linked", password: "some-password", role: "ADMIN", serviceProvider: SP1 },
					{ username: "both", password: "some-password", passwordHash: "scrypt$x", role: "ADMIN" },
				],
			}),
		);
		expect((error.data as { reasons: { path: string }[] }).reasons.map((reason) => reason.path).sort()).toEqual(
			[
				"accounts[1].serviceProvider",
				"accounts[2].accessPointProvider",
				"accounts[3].serviceProvider",
				"accounts[4].password",
			].sort(),
		);
		expect(await authenticate("fine", "fine-password")).toBeNull();
	});
});

describe("the access points a service provider's participants receive through (decisions §13)", () => {
	const admin = { meta: { user: { username: "admin", role: "ADMIN" } } };
	const link = (identifier: string, accessPoints: string[]) =>
		broker.call<ServiceProvider, object>(
			"accounts.setServiceProviderAccessPoints",
			{ identifier, body: { accessPoints: accessPoints.map((accessPoint) => ({ identifier: accessPoint })) } },
			admin,
		);

	test("ADMIN links access points: the provider's answers and the internal reads show them, audited, broadcast", async () => {
		const audits = await auditOutbox().count();
		expect(await link(SP1, [AP2, AP1.toUpperCase()])).toEqual({
			identifier: SP1,
			title: "alpha invoicing",
			accessPoints: [{ identifier: AP2 }, { identifier: AP1 }],
		});
		expect(accountChanges).toEqual([{ serviceProvider: SP1 }]);
		expect(await auditOutbox().count()).toBe(audits + 1);
		const record = (await auditOutbox().find({})).find(
			(audit) => (audit as { operation?: string }).operation === "setServiceProviderAccessPoints",
		);
		expect(record).toMatchObject({
			resource: "serviceProvider",
			resourceId: SP1,
			actor: { username: "admin" },
			after: { accessPoints: [AP2, AP1] },
		});
		const [provider] = await broker.call<ServiceProvider[], object>("accounts.serviceProviders", {
			identifiers: [SP1],
		});
		expect(provider.accessPoints).toEqual([{ identifier: AP2 }, { identifier: AP1 }]);
		expect(
			(await broker.call<ServiceProvider, object>("accounts.getServiceProviderRecord", { identifier: SP1 }))
				.accessPoints,
		).toEqual([{ identifier: AP2 }, { identifier: AP1 }]);
	});

	test("an empty list unlinks them all", async () => {
		await link(SP2, [AP1]);
		expect((await link(SP2, [])).accessPoints).toEqual([]);
	});

	test("an unknown or repeated access point is a 400 on its field, and nothing changes", async () => {
		const before = await broker.call("accounts.getServiceProviderRecord", { identifier: SP1 });
		accountChanges.length = 0;
		const error = await rejection(link(SP1, [AP1, UNKNOWN, AP1]));
		expect(error.code).toBe(400);
		expect((error.data as { violations: unknown[] }).violations).toEqual([
			expect.objectContaining({ field: "accessPoints[1].identifier", code: "Exists", rejectedValue: UNKNOWN }),
			expect.objectContaining({ field: "accessPoints[2].identifier", code: "Unique" }),
		]);
		expect(await broker.call("accounts.getServiceProviderRecord", { identifier: SP1 })).toEqual(before);
		expect(accountChanges).toEqual([]);
	});

	test("an unknown service provider is a 404", async () => {
		expect((await rejection(link(UNKNOWN, [AP1]))).code).toBe(404);
	});

	test("a seed names a provider's access points; one the registry does not have refuses the file whole", async () => {
		await broker.call("accounts.importSeed", {
			serviceProviders: [{ identifier: SP2, title: "Zeta Billing", accessPoints: [{ identifier: AP2 }] }],
		});
		const [provider] = await broker.call<ServiceProvider[], object>("accounts.serviceProviders", {
			identifiers: [SP2],
		});
		expect(provider.accessPoints).toEqual([{ identifier: AP2 }]);
		const error = await rejection(
			broker.call("accounts.importSeed", {
				serviceProviders: [{ identifier: SP2, title: "Zeta Billing", accessPoints: [{ identifier: UNKNOWN }] }],
			}),
		);
		expect((error.data as { reasons: unknown[] }).reasons).toEqual([
			{ path: "serviceProviders[0].accessPoints[0].identifier", message: expect.stringContaining(UNKNOWN) },
		]);
	});
});

describe("OAuth clients (decisions §15)", () => {
	/** As a gateway asks for a verified token's client. */
	const clientCaller = (clientId: string, signature = signClientResolution(broker, clientId)) =>
		broker.call<Caller | null, object>(
			"accounts.oauthClient",
			{ clientId },
			{ meta: { authenticationSignature: signature } },
		);
	const stored = async (username: string) =>
		(await broker.call<AccountSummary[]>("accounts.listAccounts")).find((account) => account.username === username);

	test("a seed maps a client; one that leaves it out leaves it as it is; null clears it", async () => {
		const sp1 = seed.accounts[0];
		await broker.call("accounts.importSeed", { accounts: [{ ...sp1, oauthClientId: "sp1-system" }] });
		expect(await clientCaller("sp1-system")).toEqual({
			username: "sp1",
			role: "SERVICE_PROVIDER",
			serviceProvider: SP1,
		});
		await broker.call("accounts.importSeed", { accounts: [sp1] });
		expect((await stored("sp1"))?.oauthClientId).toBe("sp1-system");
		await broker.call("accounts.importSeed", { accounts: [{ ...sp1, oauthClientId: null }] });
		expect((await stored("sp1"))?.oauthClientId).toBeUndefined();
		expect(await clientCaller("sp1-system")).toBeNull();
	});

	test("a client another account has is refused: 409 over HTTP's action, the seed whole", async () => {
		await broker.call("accounts.setOAuthClient", { username: "admin", body: { oauthClientId: "ops-bot" } });
		const conflict = await rejection(
			broker.call("accounts.setOAuthClient", { username: "app1", body: { oauthClientId: "ops-bot" } }),
		);
		expect(conflict.code).toBe(409);
		const seedConflict = await rejection(
			broker.call("accounts.importSeed", { accounts: [{ ...seed.accounts[1], oauthClientId: "ops-bot" }] }),
		);
		expect(seedConflict.code).toBe(400);
		const twice = await rejection(
			broker.call("accounts.importSeed", {
				accounts: [
					{ ...seed.accounts[0], oauthClientId: "twin" },
					{ ...seed.accounts[1], oauthClientId: "twin" },
				],
			}),
		);
		expect(JSON.stringify(twice.data)).toContain("duplicate oauthClientId");
		expect((await stored("app1"))?.oauthClientId).toBeUndefined();
		await broker.call("accounts.setOAuthClient", { username: "admin", body: { oauthClientId: null } });
	});

	test("only a gateway's signature for that client gets an answer; a disabled account's client answers null", async () => {
		await broker.call("accounts.setOAuthClient", { username: "app1", body: { oauthClientId: "app1-system" } });
		expect((await rejection(clientCaller("app1-system", signClientResolution(broker, "other")))).code).toBe(403);
		expect((await rejection(clientCaller("app1-system", signAuthentication(broker, "app1-system")))).code).toBe(
			403,
		);
		expect(await clientCaller("app1-system")).toMatchObject({ username: "app1" });
		expect(await clientCaller("unknown-system")).toBeNull();
		await broker.call("accounts.disableAccount", { identifier: accountIdentifier("app1") });
		expect(await clientCaller("app1-system")).toBeNull();
	});
});
