/**
 * The accessPoints service on an in-memory broker (spec "Access point", "Access points";
 * docs/internals.md "Actions").
 */
process.env.DATA_DIR = ":memory:";

import { Errors, ServiceBroker, type Service } from "moleculer";
import AccessPointsService from "../../services/access-points/access-points.service";
import type { AccessPoint, AccessPointProvider } from "../../src/contract/model";
import type { Page } from "../../src/contract/paging";
import type { Collection, StoredDoc } from "../../src/store/types";
import type { AccessPointEndpoints } from "../../src/contract/endpoints";
import { base64DerOf, certificatePem } from "../support/certificates";

const PROVIDER_A = "22222222-0000-4000-8000-0000000000a1";
const PROVIDER_B = "22222222-0000-4000-8000-0000000000a2";
const UNKNOWN = "0f0f0f0f-0000-4000-8000-000000000000";
const AS4 = { title: "Peppol AS4 profile v2", value: "peppol-transport-as4-v2_0", certificateTypes: ["Peppol AP"] };

const seed = {
	accessPointProviders: [
		{
			identifier: PROVIDER_A,
			title: "Provider A",
			contact: { name: "Kari Nordmann", email: "kari@a.example", phoneNumber: "+47 22 33 44 55" },
		},
		{
			identifier: PROVIDER_B,
			title: "Provider B",
			contact: { name: "Ola Nordmann", email: "ola@b.example", phoneNumber: "41234567" },
		},
	],
	accessPoints: [
		{
			identifier: "33333333-0000-4000-8000-0000000000a3",
			title: "charlie",
			provider: PROVIDER_B,
			endpoints: [{ url: "https://c.example/as4", transportProfile: AS4 }],
		},
		{
			identifier: "33333333-0000-4000-8000-0000000000a1",
			title: "Alpha",
			provider: PROVIDER_A,
			endpoints: [{ url: "https://a.example/as4", transportProfile: AS4 }],
		},
		{ identifier: "33333333-0000-4000-8000-0000000000a2", title: "bravo", provider: PROVIDER_A, endpoints: [] },
	],
};

let broker: ServiceBroker;
const changes: unknown[] = [];

async function rejection(promise: Promise<unknown>): Promise<Errors.MoleculerError & { data?: unknown }> {
	try {
		await promise;
	} catch (error) {
		return error as Errors.MoleculerError;
	}
	throw new Error("expected a rejection");
}

function auditOutbox(): Collection<StoredDoc> {
	return (broker.getLocalService("accessPoints") as Service & { collections: { auditOutbox: Collection<StoredDoc> } })
		.collections.auditOutbox;
}

beforeAll(async () => {
	broker = new ServiceBroker({ logger: false });
	broker.createService(AccessPointsService);
	broker.createService({
		name: "probe",
		events: {
			"accessPoints.changed"(ctx: { params: unknown }) {
				changes.push(ctx.params);
			},
		},
	});
	await broker.start();
	await broker.call("accessPoints.importSeed", seed);
});
afterAll(() => broker.stop());

test("an access point is answered exactly in the spec's shape, its provider and contact resolved", async () => {
	const accessPoint = await broker.call<AccessPoint, object>("accessPoints.get", {
		identifier: "33333333-0000-4000-8000-0000000000a1",
	});
	expect(accessPoint).toEqual({
		identifier: "33333333-0000-4000-8000-0000000000a1",
		title: "Alpha",
		provider: {
			identifier: PROVIDER_A,
			title: "Provider A",
			contact: { name: "Kari Nordmann", email: "kari@a.example", phoneNumber: "+47 22 33 44 55" },
		},
		endpoints: [{ url: "https://a.example/as4", transportProfile: AS4 }],
	});
});

test("an unknown access point is 404 with the instance message", async () => {
	const error = await rejection(broker.call("accessPoints.get", { identifier: UNKNOWN }));
	expect(error.code).toBe(404);
	expect(error.type).toBe("NotFoundException");
	expect(error.message).toBe(`access point instance with identifier ${UNKNOWN} cannot be found`);
});

test("find answers a page sorted by title, case-insensitively, in either direction", async () => {
	const titles = async (direction: "asc" | "desc") =>
		(
			await broker.call<Page<AccessPoint>, object>("accessPoints.find", {
				pageRequest: { page: 0, size: 10, sort: [{ field: "title", direction }] },
			})
		).content.map((accessPoint) => accessPoint.title);
	expect(await titles("asc")).toEqual(["Alpha", "bravo", "charlie"]);
	expect(await titles("desc")).toEqual(["charlie", "bravo", "Alpha"]);
});

test("find pages: page 1 of size 2 holds the third access point, and the envelope says so", async () => {
	const page = await broker.call<Page<AccessPoint>, object>("accessPoints.find", {
		pageRequest: { page: 1, size: 2, sort: [{ field: "title", direction: "asc" }] },
	});
	expect(page).toMatchObject({
		number: 1,
		size: 2,
		numberOfElements: 1,
		totalElements: 3,
		totalPages: 2,
		first: false,
		last: true,
		empty: false,
	});
	expect(page.content.map((accessPoint) => accessPoint.title)).toEqual(["charlie"]);
	expect(page.content[0].provider.identifier).toBe(PROVIDER_B);
});

test("providers answers the known access point providers only", async () => {
	const providers = await broker.call<AccessPointProvider[], object>("accessPoints.providers", {
		identifiers: [PROVIDER_B, UNKNOWN],
	});
	expect(providers.map((provider) => provider.identifier)).toEqual([PROVIDER_B]);
});

test("importing the same seed again changes nothing and audits nothing", async () => {
	const audits = await auditOutbox().count();
	const counts = await broker.call("accessPoints.importSeed", seed);
	expect(counts).toEqual({
		accessPointProviders: { created: 0, updated: 0, unchanged: 2 },
		accessPoints: { created: 0, updated: 0, unchanged: 3 },
	});
	expect(await auditOutbox().count()).toBe(audits);
});

test("an access point whose provider is neither in the seed nor in the registry is refused, and nothing is written", async () => {
	const error = await rejection(
		broker.call("accessPoints.importSeed", {
			accessPoints: [
				{
					identifier: "33333333-0000-4000-8000-0000000000b1",
					title: "Orphan",
					provider: UNKNOWN,
					endpoints: [],
				},
				{
					identifier: "33333333-0000-4000-8000-0000000000b2",
					title: "Fine",
					provider: PROVIDER_A,
					endpoints: [],
				},
			],
		}),
	);
	expect(error.code).toBe(400);
	expect((error.data as { reasons: unknown[] }).reasons).toEqual([
		{ path: "accessPoints[0].provider", message: expect.stringContaining(UNKNOWN) },
	]);
	expect((await broker.call<Page<AccessPoint>, object>("accessPoints.find", {})).totalElements).toBe(3);
});

describe("endpoints (SMP publishing data, decisions §13)", () => {
	const ALPHA = "33333333-0000-4000-8000-0000000000a1";
	const CHARLIE = "33333333-0000-4000-8000-0000000000a3";
	const providerA = { username: "app-a", role: "ACCESS_POINT_PROVIDER", accessPointProvider: PROVIDER_A };
	const admin = { username: "admin", role: "ADMIN" };
	let validPem: string;
	let expiredPem: string;
	let soonPem: string;

	beforeAll(async () => {
		[validPem, expiredPem, soonPem] = await Promise.all([
			certificatePem(365, "alpha.example"),
			certificatePem(-1),
			certificatePem(10, "soon.example"),
		]);
	});
	beforeEach(() => {
		changes.length = 0;
	});

	const setEndpoints = (identifier: string, endpoints: unknown[], user: object = providerA) =>
		broker.call<AccessPoint, object>(
			"accessPoints.setEndpoints",
			{ identifier, body: { endpoints } },
			{ meta: { user } },
		);

	test("its provider replaces an access point's endpoints: a PEM certificate is stored and answered as base64 DER, audited, broadcast", async () => {
		const audits = await auditOutbox().count();
		const answer = await setEndpoints(ALPHA, [
			{
				url: "https://a.example/as4",
				transportProfile: AS4,
				certificate: validPem,
				activationDate: "2026-01-01",
				expirationDate: "2030-12-31T23:59:59Z",
				description: "Production endpoint",
				technicalContactUrl: "https://a.example/support",
			},
		]);
		const endpoint = {
			url: "https://a.example/as4",
			transportProfile: AS4,
			certificate: base64DerOf(validPem),
			activationDate: "2026-01-01",
			expirationDate: "2030-12-31T23:59:59Z",
			description: "Production endpoint",
			technicalContactUrl: "https://a.example/support",
		};
		expect(answer.endpoints).toEqual([endpoint]);
		expect((await broker.call<AccessPoint, object>("accessPoints.get", { identifier: ALPHA })).endpoints).toEqual([
			endpoint,
		]);
		expect(changes).toEqual([{ accessPoint: ALPHA }]);
		expect(await auditOutbox().count()).toBe(audits + 1);
		const record = (await auditOutbox().find({})).find(
			(audit) => (audit as { operation?: string }).operation === "setAccessPointEndpoints",
		);
		expect(record).toMatchObject({
			operation: "setAccessPointEndpoints",
			resource: "accessPoint",
			resourceId: ALPHA,
			actor: { username: "app-a" },
			before: { endpoints: [{ url: "https://a.example/as4", transportProfile: AS4 }] },
			after: { endpoints: [endpoint] },
		});
	});

	test("another provider's access point answers 404 exactly as an unknown one, and nothing changes", async () => {
		const error = await rejection(setEndpoints(CHARLIE, []));
		expect(error.code).toBe(404);
		expect(error.message).toBe(`access point instance with identifier ${CHARLIE} cannot be found`);
		expect((await rejection(setEndpoints(UNKNOWN, []))).message).toBe(
			`access point instance with identifier ${UNKNOWN} cannot be found`,
		);
		expect(
			(await broker.call<AccessPoint, object>("accessPoints.get", { identifier: CHARLIE })).endpoints,
		).toHaveLength(1);
		expect(changes).toEqual([]);
	});

	test("ADMIN may replace any provider's endpoints", async () => {
		const answer = await setEndpoints(
			CHARLIE,
			[{ url: "https://c.example/as4-new", transportProfile: AS4 }],
			admin,
		);
		expect(answer.endpoints).toEqual([{ url: "https://c.example/as4-new", transportProfile: AS4 }]);
		expect(changes).toEqual([{ accessPoint: CHARLIE }]);
	});

	test("an invalid or expired certificate, or an expiration before the activation, is a 400 on the field and changes nothing", async () => {
		const before = await broker.call<AccessPoint, object>("accessPoints.get", { identifier: ALPHA });
		const error = await rejection(
			setEndpoints(ALPHA, [
				{ url: "https://a.example/1", transportProfile: AS4, certificate: "AAAA" },
				{ url: "https://a.example/2", transportProfile: AS4, certificate: expiredPem },
				{
					url: "https://a.example/3",
					transportProfile: AS4,
					activationDate: "2027-01-02",
					expirationDate: "2027-01-01",
				},
			]),
		);
		expect(error.code).toBe(400);
		expect(error.type).toBe("MethodArgumentNotValidException");
		expect((error.data as { violations: { field: string; code: string }[] }).violations).toEqual([
			expect.objectContaining({ field: "endpoints[0].certificate", code: "Certificate" }),
			expect.objectContaining({ field: "endpoints[1].certificate", code: "CertificateExpired" }),
			expect.objectContaining({ field: "endpoints[2].expirationDate", code: "ExpirationBeforeActivation" }),
		]);
		expect(await broker.call("accessPoints.get", { identifier: ALPHA })).toEqual(before);
		expect(changes).toEqual([]);
	});

	test("knownIdentifiers and endpointsOf answer the known access points only, endpointsOf in the order asked", async () => {
		expect(
			(
				await broker.call<string[], object>("accessPoints.knownIdentifiers", {
					identifiers: [CHARLIE, UNKNOWN, ALPHA.toUpperCase()],
				})
			).sort(),
		).toEqual([ALPHA, CHARLIE]);
		const found = await broker.call<AccessPointEndpoints[], object>("accessPoints.endpointsOf", {
			accessPoints: [CHARLIE, UNKNOWN, ALPHA],
		});
		expect(found.map((accessPoint) => [accessPoint.identifier, accessPoint.provider])).toEqual([
			[CHARLIE, PROVIDER_B],
			[ALPHA, PROVIDER_A],
		]);
		expect(found[1].endpoints[0].certificate).toBe(base64DerOf(validPem));
		const all = await broker.call<AccessPointEndpoints[], object>("accessPoints.endpointsOf", {});
		expect(all.length).toBeGreaterThanOrEqual(3);
	});

	test("the expiring-certificates count holds endpoints whose certificate ends within 30 days, recounted after a change", async () => {
		const service = broker.getLocalService("accessPoints") as Service & {
			countExpiringCertificates(): Promise<number>;
		};
		const before = await service.countExpiringCertificates();
		await setEndpoints("33333333-0000-4000-8000-0000000000a2", [
			{ url: "https://b.example/as4", transportProfile: AS4, certificate: soonPem },
			{ url: "https://b.example/as4-next", transportProfile: AS4, certificate: validPem },
		]);
		expect(await service.countExpiringCertificates()).toBe(before + 1);
	});

	test("a seed's endpoint certificate is checked like the API's: an expired one refuses the file with its path", async () => {
		const error = await rejection(
			broker.call("accessPoints.importSeed", {
				accessPoints: [
					{
						identifier: "33333333-0000-4000-8000-0000000000c1",
						title: "Expired",
						provider: PROVIDER_A,
						endpoints: [{ url: "https://x.example/as4", transportProfile: AS4, certificate: expiredPem }],
					},
				],
			}),
		);
		expect((error.data as { reasons: unknown[] }).reasons).toEqual([
			{ path: "accessPoints[0].endpoints[0].certificate", message: "the certificate has expired" },
		]);
	});
});
