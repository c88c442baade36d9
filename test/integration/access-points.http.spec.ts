/**
 * Access points through the real gateway (spec "Access point", "Access points", endpoint
 * table; decisions §3, §7), on the demo seed (docs/demo-data.md).
 */
import request from "supertest";
import { basic, demoSeed, REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";

const FIND = "application/vnd.registry.accesspoints.find.v1+json";
const GET = "application/vnd.registry.accesspoints.get.v1+json";
const PRODUCTION = "33333333-0000-4000-8000-000000000001";
const UNKNOWN = "0f0f0f0f-0000-4000-8000-000000000000";
const SP1 = basic("sp1", "sp1-demo-password");

/** The base64 DER certificate seed/demo.json gives an access point's first endpoint. */
function demoCertificate(identifier: string): string {
	const accessPoints = demoSeed().accessPoints as { identifier: string; endpoints: { certificate: string }[] }[];
	return (accessPoints.find((accessPoint) => accessPoint.identifier === identifier) as (typeof accessPoints)[0])
		.endpoints[0].certificate;
}

let registry: RunningRegistry;
beforeAll(async () => {
	registry = await startRegistry();
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

const find = (query = "", authorization: string | null = SP1) => {
	const call = request(registry.url).get(`/rest/api/accessPoints${query}`).set("Accept", FIND);
	return authorization ? call.set("Authorization", authorization) : call;
};

test("find answers a page of access points in the spec's shape, with the find media type", async () => {
	const response = await find("?sort=title");
	expect(response.status).toBe(200);
	expect(response.headers["content-type"]).toBe(`${FIND};charset=UTF-8`);
	expect(response.body).toMatchObject({
		number: 0,
		size: 10,
		totalElements: 3,
		totalPages: 1,
		first: true,
		last: true,
		empty: false,
		sort: { sorted: true },
	});
	expect(response.body.content.map((accessPoint: { title: string }) => accessPoint.title)).toEqual([
		"Fjordnett AP",
		"Nordlys AP production",
		"Nordlys AP test",
	]);
	expect(response.body.content[1]).toEqual({
		identifier: PRODUCTION,
		title: "Nordlys AP production",
		provider: {
			identifier: "22222222-0000-4000-8000-000000000001",
			title: "Nordlys Aksesspunkt AS",
			contact: { name: "Kari Nordmann", email: "ap-support@nordlys-ap.example", phoneNumber: "+47 22 33 44 55" },
		},
		endpoints: [
			{
				url: "https://as4.nordlys-ap.example/as4",
				transportProfile: {
					title: "Peppol AS4 profile v2",
					value: "peppol-transport-as4-v2_0",
					certificateTypes: ["Peppol AP"],
				},
				// The registry's extension (decisions §13), answered because the demo sets them.
				certificate: demoCertificate(PRODUCTION),
				activationDate: "2026-01-01",
				description: "Nordlys production AS4 endpoint",
				technicalContactUrl: "https://nordlys-ap.example/support",
			},
		],
	});
});

test("find sorts descending and pages: page 1 of size 2 holds the last access point", async () => {
	const response = await find("?sort=title,desc&page=1&size=2");
	expect(response.status).toBe(200);
	expect(response.body).toMatchObject({
		number: 1,
		size: 2,
		numberOfElements: 1,
		totalElements: 3,
		totalPages: 2,
		first: false,
		last: true,
	});
	expect(response.body.pageable).toMatchObject({ pageNumber: 1, pageSize: 2, offset: 2 });
	expect(response.body.content.map((accessPoint: { title: string }) => accessPoint.title)).toEqual(["Fjordnett AP"]);
});

test("a sort on a property access points do not have is 400", async () => {
	const response = await find("?sort=url");
	expect(response.status).toBe(400);
	expect(response.body.exception).toBe("MethodArgumentTypeMismatchException");
});

test("get answers one access point with the get media type", async () => {
	const response = await request(registry.url)
		.get(`/rest/api/accessPoints/${PRODUCTION}`)
		.set("Accept", GET)
		.set("Authorization", SP1);
	expect(response.status).toBe(200);
	expect(response.headers["content-type"]).toBe(`${GET};charset=UTF-8`);
	expect(response.body).toMatchObject({
		identifier: PRODUCTION,
		title: "Nordlys AP production",
		provider: { title: "Nordlys Aksesspunkt AS" },
	});
});

test("an unknown access point is 404 saying the instance cannot be found", async () => {
	const response = await request(registry.url)
		.get(`/rest/api/accessPoints/${UNKNOWN}`)
		.set("Accept", GET)
		.set("Authorization", SP1);
	expect(response.status).toBe(404);
	expect(response.headers["content-type"]).toBe("application/json;charset=UTF-8");
	expect(response.body).toMatchObject({
		status: 404,
		exception: "NotFoundException",
		message: `access point instance with identifier ${UNKNOWN} cannot be found`,
		path: `/rest/api/accessPoints/${UNKNOWN}`,
	});
});

test("an access point path value that is not a UUID is 400", async () => {
	const response = await request(registry.url)
		.get("/rest/api/accessPoints/not-a-uuid")
		.set("Accept", GET)
		.set("Authorization", SP1);
	expect(response.status).toBe(400);
	expect(response.body.exception).toBe("MethodArgumentTypeMismatchException");
});

test("every authenticated role may read access points; anonymous callers get 401 with WWW-Authenticate", async () => {
	for (const [username, password] of [
		["sp1", "sp1-demo-password"],
		["app1", "app1-demo-password"],
		["admin", "admin-demo-password"],
		["authority", "authority-demo-password"],
	]) {
		expect([username, (await find("", basic(username, password))).status]).toEqual([username, 200]);
	}
	const anonymous = await find("", null);
	expect(anonymous.status).toBe(401);
	expect(anonymous.headers["www-authenticate"]).toMatch(/^Basic realm="registry"/);
	const anonymousGet = await request(registry.url).get(`/rest/api/accessPoints/${PRODUCTION}`).set("Accept", GET);
	expect(anonymousGet.status).toBe(401);
});
