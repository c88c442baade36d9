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
