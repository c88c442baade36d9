/**
 * The data SMP publishing needs, over HTTP (decisions §13; docs/decisions.md "SMP publishing
 * data", the registry's extension): an ACCESS_POINT_PROVIDER replaces its own access points'
 * endpoints (certificates, dates, description, technical contact); an ADMIN names the access
 * points a service provider's participants receive through. Each change is audited and
 * broadcast (`accessPoints.changed`, `accounts.changed`); a refusal answers in the spec's error
 * shape and changes nothing. On the demo seed (docs/demo-data.md).
 */
import request from "supertest";
import { basic, REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";
import { base64DerOf, certificatePem } from "../support/certificates";

const API = "/rest/api";
const ENDPOINTS = "application/vnd.registry.accesspoints.endpoints.v1+json";
const GET_ACCESS_POINT = "application/vnd.registry.accesspoints.get.v1+json";
const LINK = "application/vnd.registry.service-providers.access-points.v1+json";
const GET_PROVIDER = "application/vnd.registry.service-providers.get.v1+json";
const NORDLYS_TEST = "33333333-0000-4000-8000-000000000002";
const FJORDNETT = "33333333-0000-4000-8000-000000000003";
const VIDDA = "11111111-0000-4000-8000-000000000003";
const UNKNOWN = "0f0f0f0f-0000-4000-8000-000000000000";
const AS4 = { title: "Peppol AS4 profile v2", value: "peppol-transport-as4-v2_0", certificateTypes: ["Peppol AP"] };
const APP1 = basic("app1", "app1-demo-password");
const ADMIN = basic("admin", "admin-demo-password");
const SP1 = basic("sp1", "sp1-demo-password");
const AUTHORITY = basic("authority", "authority-demo-password");

let registry: RunningRegistry;
const heard: { event: string; payload: unknown }[] = [];
let validPem: string;
let expiredPem: string;

beforeAll(async () => {
	[registry, validPem, expiredPem] = await Promise.all([
		startRegistry(),
		certificatePem(365, "PNO000102"),
		certificatePem(-1),
	]);
	// A probe on the test's own node: it hears what every node of the registry broadcasts.
	registry.broker.createService({
		name: `smp-data-probe-${process.pid}`,
		events: {
			"accessPoints.changed"(ctx: { params: unknown }) {
				heard.push({ event: "accessPoints.changed", payload: ctx.params });
			},
			"accounts.changed"(ctx: { params: unknown }) {
				heard.push({ event: "accounts.changed", payload: ctx.params });
			},
		},
	});
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

function put(path: string, authorization: string | null, media: string, body: unknown) {
	const call = request(registry.url).put(`${API}${path}`).set("Accept", media).set("Content-Type", media);
	return (authorization ? call.set("Authorization", authorization) : call).send(JSON.stringify(body));
}

const setEndpoints = (accessPoint: string, endpoints: unknown[], authorization: string | null = APP1) =>
	put(`/accessPoints/${accessPoint}/endpoints`, authorization, ENDPOINTS, { endpoints });
const link = (serviceProvider: string, accessPoints: string[], authorization: string | null = ADMIN) =>
	put(`/service-providers/${serviceProvider}/access-points`, authorization, LINK, {
		accessPoints: accessPoints.map((identifier) => ({ identifier })),
	});
const getAccessPoint = (identifier: string) =>
	request(registry.url)
		.get(`${API}/accessPoints/${identifier}`)
		.set("Accept", GET_ACCESS_POINT)
		.set("Authorization", APP1);

/** Polls with a deadline: the audit trail is fed by an outbox, and a new probe must first be known to the other nodes. */
async function eventually<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const found = await read();
		if (found !== undefined) return found;
		if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms: ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

async function auditEvent(operation: string, resourceId: string): Promise<Record<string, unknown>> {
	return eventually(async () => {
		const answer = await request(registry.url)
			.get(`${API}/events?operation=${operation}&size=100`)
			.set("Authorization", ADMIN)
			.expect(200);
		return (answer.body.content as Record<string, unknown>[]).find((event) => event.resourceId === resourceId);
	}, `audit record ${operation} of ${resourceId}`);
}

/** Repeats a change until the probe hears its event: in a cluster the probe's subscription reaches the other nodes a moment after it starts. */
async function heardAfter(change: () => Promise<unknown>, event: string, payload: object): Promise<void> {
	await eventually(
		async () => {
			heard.length = 0;
			await change();
			const deadline = Date.now() + 1000;
			while (Date.now() < deadline) {
				if (
					heard.some(
						(entry) => entry.event === event && JSON.stringify(entry.payload) === JSON.stringify(payload),
					)
				)
					return true;
				await new Promise((resolve) => setTimeout(resolve, 20));
			}
			return undefined;
		},
		`${event} ${JSON.stringify(payload)}`,
	);
}

describe("PUT /rest/api/accessPoints/{accessPoint}/endpoints", () => {
	test("the access point's provider replaces its endpoints: 200, a PEM certificate answered as base64 DER, readable, audited, broadcast", async () => {
		const endpoint = {
			url: "https://as4-test.nordlys-ap.example/as4",
			transportProfile: AS4,
			certificate: validPem,
			activationDate: "2026-01-01",
			expirationDate: "2031-01-01T00:00:00Z",
			description: "Nordlys test AS4 endpoint, renewed",
			technicalContactUrl: "https://nordlys-ap.example/support",
		};
		const answer = await setEndpoints(NORDLYS_TEST, [endpoint]);
		expect(answer.status).toBe(200);
		expect(answer.headers["content-type"]).toBe(`${ENDPOINTS};charset=UTF-8`);
		expect(answer.headers.etag).toMatch(/^"/);
		const stored = { ...endpoint, certificate: base64DerOf(validPem) };
		expect(answer.body).toMatchObject({ identifier: NORDLYS_TEST, title: "Nordlys AP test", endpoints: [stored] });
		expect((await getAccessPoint(NORDLYS_TEST).expect(200)).body.endpoints).toEqual([stored]);

		const audit = await auditEvent("setAccessPointEndpoints", NORDLYS_TEST);
		expect(audit).toMatchObject({
			resource: "accessPoint",
			actor: { username: "app1", role: "ACCESS_POINT_PROVIDER" },
			after: { endpoints: [stored] },
		});
		await heardAfter(() => setEndpoints(NORDLYS_TEST, [endpoint]).expect(200), "accessPoints.changed", {
			accessPoint: NORDLYS_TEST,
		});
	});

	test("another provider's access point answers 404 as if absent; other roles 403; no credentials 401", async () => {
		const notOwn = await setEndpoints(FJORDNETT, []);
		expect(notOwn.status).toBe(404);
		expect(notOwn.body).toMatchObject({
			status: 404,
			exception: "NotFoundException",
			message: `access point instance with identifier ${FJORDNETT} cannot be found`,
			path: `${API}/accessPoints/${FJORDNETT}/endpoints`,
		});
		expect((await setEndpoints(UNKNOWN, [])).body.message).toBe(
			`access point instance with identifier ${UNKNOWN} cannot be found`,
		);
		expect((await setEndpoints(FJORDNETT, [], SP1)).status).toBe(403);
		expect((await setEndpoints(FJORDNETT, [], AUTHORITY)).status).toBe(403);
		expect((await setEndpoints(FJORDNETT, [], null)).status).toBe(401);
		expect((await getAccessPoint(FJORDNETT).expect(200)).body.endpoints).toHaveLength(1);
	});

	test("ADMIN may replace any access point's endpoints", async () => {
		const before = (await getAccessPoint(FJORDNETT).expect(200)).body.endpoints;
		const answer = await setEndpoints(FJORDNETT, before, ADMIN);
		expect(answer.status).toBe(200);
		expect(answer.body.endpoints).toEqual(before);
	});

	test("a certificate that is not X.509 or has expired, and an expiration before the activation, are 400 on their fields; nothing changes", async () => {
		const before = (await getAccessPoint(NORDLYS_TEST).expect(200)).body;
		const answer = await setEndpoints(NORDLYS_TEST, [
			{
				url: "https://a.example/1",
				transportProfile: AS4,
				certificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----",
			},
			{ url: "https://a.example/2", transportProfile: AS4, certificate: expiredPem },
			{
				url: "https://a.example/3",
				transportProfile: AS4,
				activationDate: "2027-01-02",
				expirationDate: "2027-01-01",
			},
		]);
		expect(answer.status).toBe(400);
		expect(answer.body.exception).toBe("MethodArgumentNotValidException");
		expect(answer.body.message).toBe("Validation failed for object='accessPointEndpointsFormDTO'. Error count: 3");
		expect(
			answer.body.errors.map((error: { field: string; code: string; objectName: string }) => [
				error.field,
				error.code,
				error.objectName,
			]),
		).toEqual([
			["endpoints[0].certificate", "Certificate", "accessPointEndpointsFormDTO"],
			["endpoints[1].certificate", "CertificateExpired", "accessPointEndpointsFormDTO"],
			["endpoints[2].expirationDate", "ExpirationBeforeActivation", "accessPointEndpointsFormDTO"],
		]);
		expect(answer.body.errors[0].codes).toEqual([
			"Certificate.accessPointEndpointsFormDTO.endpoints[0].certificate",
			"Certificate.endpoints[0].certificate",
			"Certificate",
		]);
		expect((await getAccessPoint(NORDLYS_TEST).expect(200)).body).toEqual(before);
	});

	test("a body of the wrong shape is a 400 in the error shape, never a 500", async () => {
		const cases: [unknown, string, string][] = [
			[{}, "endpoints", "NotNull"],
			[{ endpoints: [{ url: "ftp://a.example/x", transportProfile: AS4 }] }, "endpoints[0].url", "Pattern"],
			[{ endpoints: [{ url: "https://a.example/x" }] }, "endpoints[0].transportProfile", "NotNull"],
			[
				{
					endpoints: [
						{
							url: "https://a.example/x",
							transportProfile: AS4,
							technicalContactUrl: "mailto:x@a.example",
						},
					],
				},
				"endpoints[0].technicalContactUrl",
				"Pattern",
			],
			[
				{ endpoints: [{ url: "https://a.example/x", transportProfile: AS4, certificate: 42 }] },
				"endpoints[0].certificate",
				"TypeMismatch",
			],
			[
				{ endpoints: [{ url: "https://a.example/x", transportProfile: AS4, activationDate: "soon" }] },
				"endpoints[0].activationDate",
				"Pattern",
			],
		];
		for (const [body, field, code] of cases) {
			const answer = await put(`/accessPoints/${NORDLYS_TEST}/endpoints`, APP1, ENDPOINTS, body);
			expect([JSON.stringify(body), answer.status]).toEqual([JSON.stringify(body), 400]);
			expect(
				answer.body.errors.map((error: { field: string; code: string }) => [error.field, error.code]),
			).toContainEqual([field, code]);
		}
	});
});

describe("PUT /rest/api/service-providers/{identifier}/access-points", () => {
	test("ADMIN names a provider's access points: 200, its answers show them, audited, broadcast", async () => {
		const answer = await link(VIDDA, [NORDLYS_TEST, FJORDNETT]);
		expect(answer.status).toBe(200);
		expect(answer.headers["content-type"]).toBe(`${LINK};charset=UTF-8`);
		const expected = {
			identifier: VIDDA,
			title: "Vidda Regnskapssystemer AS",
			accessPoints: [{ identifier: NORDLYS_TEST }, { identifier: FJORDNETT }],
		};
		expect(answer.body).toEqual(expected);
		const read = await request(registry.url)
			.get(`${API}/service-providers/${VIDDA}`)
			.set("Accept", GET_PROVIDER)
			.set("Authorization", ADMIN)
			.expect(200);
		expect(read.body).toEqual(expected);
		const audit = await auditEvent("setServiceProviderAccessPoints", VIDDA);
		expect(audit).toMatchObject({
			resource: "serviceProvider",
			actor: { username: "admin" },
			before: { accessPoints: ["33333333-0000-4000-8000-000000000001"] },
			after: { accessPoints: [NORDLYS_TEST, FJORDNETT] },
		});
		await heardAfter(() => link(VIDDA, [NORDLYS_TEST, FJORDNETT]).expect(200), "accounts.changed", {
			serviceProvider: VIDDA,
		});
	});

	test("the demo service providers answer the access points the seed links them to", async () => {
		const page = await request(registry.url)
			.get(`${API}/service-providers?sort=title`)
			.set("Accept", "application/vnd.registry.service-providers.find.v1+json")
			.set("Authorization", ADMIN)
			.expect(200);
		expect(
			page.body.content.find((provider: { title: string }) => provider.title === "Nordlys E-faktura AS"),
		).toEqual({
			identifier: "11111111-0000-4000-8000-000000000001",
			title: "Nordlys E-faktura AS",
			accessPoints: [{ identifier: "33333333-0000-4000-8000-000000000001" }],
		});
	});

	test("an unknown access point is 400 on its field; an unknown provider 404; other roles 403; nothing changes", async () => {
		const before = (
			await request(registry.url)
				.get(`${API}/service-providers/${VIDDA}`)
				.set("Accept", GET_PROVIDER)
				.set("Authorization", ADMIN)
		).body;
		const unknown = await link(VIDDA, [FJORDNETT, UNKNOWN]);
		expect(unknown.status).toBe(400);
		expect(unknown.body.errors).toEqual([
			expect.objectContaining({
				field: "accessPoints[1].identifier",
				code: "Exists",
				objectName: "serviceProviderAccessPointsFormDTO",
				rejectedValue: UNKNOWN,
			}),
		]);
		const notUuid = await put(`/service-providers/${VIDDA}/access-points`, ADMIN, LINK, {
			accessPoints: [{ identifier: "nope" }],
		});
		expect(notUuid.status).toBe(400);
		expect(notUuid.body.errors[0]).toMatchObject({ field: "accessPoints[0].identifier", code: "Pattern" });
		expect((await link(UNKNOWN, [FJORDNETT])).status).toBe(404);
		expect((await link(VIDDA, [FJORDNETT], SP1)).status).toBe(403);
		expect((await link(VIDDA, [FJORDNETT], APP1)).status).toBe(403);
		expect((await link(VIDDA, [FJORDNETT], AUTHORITY)).status).toBe(403);
		expect(
			(
				await request(registry.url)
					.get(`${API}/service-providers/${VIDDA}`)
					.set("Accept", GET_PROVIDER)
					.set("Authorization", ADMIN)
			).body,
		).toEqual(before);
	});
});
