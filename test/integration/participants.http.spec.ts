/**
 * Every participant operation through real HTTP (spec "Participants", "Endpoint table",
 * "Errors"; decisions §4–§7): each role, each rule's error, and the page envelope with
 * sort and paging. Runs against the one-process registry and again against the cluster.
 */
import request from "supertest";
import {
	demoAccount,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";
import { organizationNumberSource } from "../support/bulk";
import { LOOK_ALIKES, PLAIN_GLN } from "../support/look-alikes";

const MEDIA = (operation: string) => `application/vnd.registry.participants.${operation}.v1+json`;
const BASE = "/rest/api/participants";

const SP3 = "11111111-0000-4000-8000-000000000003";
const UNKNOWN_PROVIDER = "11111111-0000-4000-8000-0000000000ff";
const BILLING = "55555555-0000-4000-8000-000000000001";
const SELF_BILLING = "55555555-0000-4000-8000-000000000002";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const ORDER_ONLY = "55555555-0000-4000-8000-000000000004";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006"; // depends on BILLING
const CATALOGUE = "55555555-0000-4000-8000-000000000007";
const DEPRECATED_EHF = "55555555-0000-4000-8000-000000000011"; // restricted
const EHF_ORDERING = "55555555-0000-4000-8000-000000000012"; // requiredICDs 0192
const NORDLYS = "77777777-0000-4000-8000-000000000001"; // sp1's, 0192:991825827
const HAVBLIKK = "77777777-0000-4000-8000-000000000003"; // sp2's, 0192:986252932

const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const refs = (...ids: string[]) => ids.map((identifier) => ({ identifier }));
const qid = (icd: string, organization: string) => `iso6523-actorid-upis::${icd}:${organization}`;

let registry: RunningRegistry;
let sp1: string;
let sp2: string;
let admin: string;
let authority: string;
let app: string;
let SP1: string;
let SP2: string;

beforeAll(async () => {
	registry = await startRegistry();
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	admin = demoAuth("ADMIN");
	authority = demoAuth("NETWORK_AUTHORITY");
	app = demoAuth("ACCESS_POINT_PROVIDER");
	SP1 = demoAccount("SERVICE_PROVIDER", 0).serviceProvider as string;
	SP2 = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

/** A fresh valid Norwegian organization number (MOD11) per call. */
const organizationNumber = organizationNumberSource(20_000_000);

const path = (value: string, suffix = "") => `${BASE}/${encodeURIComponent(value)}${suffix}`;

function post(auth: string | null, body: unknown) {
	const req = request(registry.url).post(BASE).set("Accept", MEDIA("add")).set("Content-Type", MEDIA("add"));
	return (auth ? req.set("Authorization", auth) : req).send(body as object);
}

async function addOrganization(auth: string, processes: string[], extra: object = {}) {
	const organizationIdentifier = organizationNumber();
	const response = await post(auth, {
		icd: "0192",
		organizationIdentifier,
		name: "Testfirma AS",
		processes: refs(...processes),
		contact,
		...extra,
	});
	expect(response.status).toBe(201);
	return response.body as {
		identifier: string;
		qualifiedIdentifier: string;
		organizationIdentifier: string;
		lastModificationDate: string;
	};
}

function get(auth: string | null, value: string, operation = "get", suffix = "") {
	const req = request(registry.url).get(path(value, suffix)).set("Accept", MEDIA(operation));
	return auth ? req.set("Authorization", auth) : req;
}

function put(auth: string, value: string, body: unknown) {
	return request(registry.url)
		.put(path(value))
		.set("Authorization", auth)
		.set("Accept", MEDIA("update"))
		.set("Content-Type", MEDIA("update"))
		.send(body as object);
}

function remove(auth: string, value: string) {
	return request(registry.url).delete(path(value)).set("Authorization", auth).set("Accept", MEDIA("delete"));
}

function transfer(auth: string, value: string, serviceProvider: string) {
	return request(registry.url)
		.put(path(value, `/transfer/${serviceProvider}`))
		.set("Authorization", auth)
		.set("Accept", MEDIA("transfer"));
}

function find(auth: string, query: string, operation: "find" | "stream" = "find") {
	return request(registry.url).get(`${BASE}${query}`).set("Authorization", auth).set("Accept", MEDIA(operation));
}

const today = () => new Date().toISOString().slice(0, 10);

function expectViolation(body: Record<string, unknown>, objectName: string, field: string, code: string) {
	expect(body).toMatchObject({ status: 400, exception: "MethodArgumentNotValidException" });
	expect(body.message).toMatch(new RegExp(`^Validation failed for object='${objectName}'\\. Error count: \\d+$`));
	expect(body.errors).toEqual(
		expect.arrayContaining([
			expect.objectContaining({
				objectName,
				field,
				code,
				codes: [`${code}.${objectName}.${field}`, `${code}.${field}`, code],
				bindingFailure: false,
			}),
		]),
	);
}

describe("POST /participants (add)", () => {
	test("a service provider adds a participant: 201 with the media type, dates, provider and processes", async () => {
		const organizationIdentifier = organizationNumber();
		const response = await post(sp1, {
			icd: "0192",
			organizationIdentifier,
			name: "Solbakken AS",
			processes: refs(BILLING, INVOICE_RESPONSE),
			contact,
		});
		expect(response.status).toBe(201);
		expect(response.headers["content-type"]).toBe(`${MEDIA("add")};charset=UTF-8`);
		expect(response.body).toMatchObject({
			qualifiedIdentifier: qid("0192", organizationIdentifier),
			icd: "0192",
			organizationIdentifier,
			name: "Solbakken AS",
			registrationDate: today(),
			lastModificationDate: today(),
			contact,
			provider: { identifier: SP1 },
		});
		expect(response.body).not.toHaveProperty("deleteDate");
		expect(response.body.processes.map((process: { identifier: string }) => process.identifier)).toEqual([
			BILLING,
			INVOICE_RESPONSE,
		]);
		expect(response.body.processes[0]).toMatchObject({
			qualifiedIdentifier: expect.any(String),
			domain: expect.any(String),
			capabilities: expect.any(Array),
			documentTypes: expect.any(Array),
		});
	});

	test.each([
		["ADMIN", () => admin, 403],
		["NETWORK_AUTHORITY", () => authority, 403],
		["ACCESS_POINT_PROVIDER", () => app, 403],
		["anonymous", () => null, 401],
	])("%s may not add", async (_role, auth, status) => {
		const response = await post(auth(), {
			icd: "0192",
			organizationIdentifier: organizationNumber(),
			processes: [],
			contact,
		});
		expect(response.status).toBe(status);
	});

	test("a missing contact is 400 NotNull on addParticipantFormDTO.contact", async () => {
		const response = await post(sp1, { icd: "0192", organizationIdentifier: organizationNumber(), processes: [] });
		expect(response.status).toBe(400);
		expectViolation(response.body, "addParticipantFormDTO", "contact", "NotNull");
	});

	test("form checks: icd up to 4 digits, organizationIdentifier 1–35, email, phone number", async () => {
		const response = await post(sp1, {
			icd: "12345",
			organizationIdentifier: "x".repeat(36),
			processes: [],
			contact: { name: "A", email: "not-an-email", phoneNumber: "12" },
		});
		expect(response.status).toBe(400);
		for (const [field, code] of [
			["icd", "Pattern"],
			["organizationIdentifier", "Size"],
			["contact.email", "Email"],
			["contact.phoneNumber", "Phone"],
		]) {
			expectViolation(response.body, "addParticipantFormDTO", field, code);
		}
	});

	test.each([
		[
			"an unknown process",
			{ processes: refs(BILLING, "55555555-0000-4000-8000-0000000000ff") },
			"processes[1].identifier",
			"Exists",
		],
		["a restricted process", { processes: refs(DEPRECATED_EHF) }, "processes[0].identifier", "Restricted"],
		[
			"a process without its dependency",
			{ processes: refs(INVOICE_RESPONSE) },
			"processes[0].identifier",
			"Dependency",
		],
		[
			"an ICD the process does not allow",
			{ icd: "0007", organizationIdentifier: "5560360793", processes: refs(EHF_ORDERING) },
			"processes[0].identifier",
			"RequiredICD",
		],
		[
			"an invalid MOD11 number for ICD 0192",
			{ organizationIdentifier: "991825828", processes: [] },
			"organizationIdentifier",
			"OrganizationNumber",
		],
	])("%s is 400 with that field and code", async (_name, override, field, code) => {
		const response = await post(sp1, {
			icd: "0192",
			organizationIdentifier: organizationNumber(),
			contact,
			...override,
		});
		expect(response.status).toBe(400);
		expectViolation(response.body, "addParticipantFormDTO", field, code);
	});

	test("a service provider adding an organization it already has gets 409", async () => {
		const response = await post(sp1, {
			icd: "0192",
			organizationIdentifier: "991825827",
			processes: refs(CATALOGUE),
			contact,
		});
		expect(response.status).toBe(409);
		expect(response.body).toMatchObject({ status: 409, exception: "ConflictException" });
	});

	test("a process already registered for the organization by another provider is 409", async () => {
		const response = await post(sp2, {
			icd: "0192",
			organizationIdentifier: "991825827",
			processes: refs(BILLING),
			contact,
		});
		expect(response.status).toBe(409);
		expect(response.body.exception).toBe("ConflictException");
	});

	test("another provider registers the same organization for other processes: 201", async () => {
		const response = await post(sp2, {
			icd: "0192",
			organizationIdentifier: "991825827",
			processes: refs(ORDER_ONLY),
			contact,
		});
		expect(response.status).toBe(201);
		expect(response.body.provider.identifier).toBe(SP2);
	});
});

describe("organization identifiers a reader cannot tell apart (decisions §5)", () => {
	const GLN = qid("0088", PLAIN_GLN);
	const glnBody = (organizationIdentifier: string) => ({
		icd: "0088",
		organizationIdentifier,
		name: "Lookalike ApS",
		processes: refs(CATALOGUE),
		contact,
	});

	beforeAll(async () => {
		// sp1 receives CATALOGUE for the plain GLN; a look-alike would let sp2 claim it too.
		const response = await post(sp1, glnBody(PLAIN_GLN));
		expect(response.status).toBe(201);
		expect(response.body.qualifiedIdentifier).toBe(GLN);
	});

	test("a plain GLN (ICD 0088) is registered, read back and looked up", async () => {
		expect((await get(sp1, GLN)).body.organizationIdentifier).toBe(PLAIN_GLN);
		const lookup = await request(registry.url)
			.get(`/rest/api/organizations/${encodeURIComponent(GLN)}/processes`)
			.set("Accept", "application/vnd.registry.organizations.processes.v1+json");
		expect(lookup.status).toBe(200);
		expect(lookup.body.map((process: { identifier: string }) => process.identifier)).toEqual([CATALOGUE]);
	});

	test.each(LOOK_ALIKES)(
		"an organization identifier with %s is 400 Pattern on organizationIdentifier, and nothing is registered",
		async (_name, lookAlike) => {
			const response = await post(sp2, glnBody(lookAlike));
			expect(response.status).toBe(400);
			expectViolation(response.body, "addParticipantFormDTO", "organizationIdentifier", "Pattern");
			expect(response.body.errors).toContainEqual(
				expect.objectContaining({ field: "organizationIdentifier", rejectedValue: lookAlike }),
			);
			const found = await find(sp2, `?size=1000`);
			expect(found.body.content.map((item: { icd: string }) => item.icd)).not.toContain("0088");
		},
	);

	test.each(LOOK_ALIKES)(
		"a path value whose organization identifier has %s is 400 on every path",
		async (_name, lookAlike) => {
			const value = qid("0088", lookAlike);
			const responses = [
				await get(sp1, value),
				await get(sp1, value, "processes", "/processes"),
				await put(sp1, value, { processes: refs(CATALOGUE), contact }),
				await remove(sp1, value),
				await transfer(sp1, value, SP3),
				await request(registry.url)
					.get(`/rest/api/organizations/${encodeURIComponent(value)}/processes`)
					.set("Accept", "application/vnd.registry.organizations.processes.v1+json"),
			];
			for (const response of responses) {
				expect(response.status).toBe(400);
				expect(response.body).toMatchObject({ status: 400, exception: "MethodArgumentTypeMismatchException" });
			}
			// The plain participant is untouched: still sp1's, with its process.
			const plain = await get(sp1, GLN, "processes", "/processes");
			expect(plain.body.map((process: { identifier: string }) => process.identifier)).toEqual([CATALOGUE]);
		},
	);
});

describe("GET /participants/{qualifiedIdentifier|identifier}", () => {
	test("a service provider gets its participant by qualified identifier, percent-encoded or not, any scheme case", async () => {
		for (const url of [
			path(qid("0192", "991825827")),
			`${BASE}/iso6523-actorid-upis::0192:991825827`,
			path("ISO6523-ACTORID-UPIS::0192:991825827"),
		]) {
			const response = await request(registry.url).get(url).set("Authorization", sp1).set("Accept", MEDIA("get"));
			expect(response.status).toBe(200);
			expect(response.headers["content-type"]).toBe(`${MEDIA("get")};charset=UTF-8`);
			expect(response.body).toMatchObject({ identifier: NORDLYS, provider: { identifier: SP1 } });
			expect(response.body.processes.length).toBeGreaterThan(0);
		}
	});

	test("another provider's organization by qualified identifier is 404 with the organization message", async () => {
		const response = await get(sp2, qid("0192", "923609016"));
		expect(response.status).toBe(404);
		expect(response.body).toMatchObject({
			exception: "NotFoundException",
			message: `organization for qualified identifier ${qid("0192", "923609016")} cannot be found`,
		});
	});

	test("by UUID: the owner, ADMIN and NETWORK_AUTHORITY read it; another provider gets 404 as if absent", async () => {
		for (const auth of [sp1, admin, authority]) expect((await get(auth, NORDLYS)).status).toBe(200);
		const foreign = await get(sp2, NORDLYS);
		expect(foreign.status).toBe(404);
		expect(foreign.body.exception).toBe("NotFoundException");
		expect(JSON.stringify(foreign.body)).not.toContain("Nordlys");
		expect((await get(sp2, "77777777-0000-4000-8000-0000000000ff")).status).toBe(404);
	});

	test("by qualified identifier only SERVICE_PROVIDER is allowed: 403 for ADMIN, 401 anonymous", async () => {
		expect((await get(admin, qid("0192", "991825827"))).status).toBe(403);
		expect((await get(null, NORDLYS)).status).toBe(401);
		expect((await get(app, NORDLYS)).status).toBe(403);
	});

	test("a path value that is neither a qualified identifier nor a UUID is 400", async () => {
		const response = await get(sp1, "not-a-participant");
		expect(response.status).toBe(400);
		expect(response.body.exception).toBe("MethodArgumentTypeMismatchException");
	});

	test("the processes sub-path answers the participant's processes by either form", async () => {
		const byQid = await get(sp1, qid("0192", "991825827"), "processes", "/processes");
		expect(byQid.status).toBe(200);
		expect(byQid.headers["content-type"]).toBe(`${MEDIA("processes")};charset=UTF-8`);
		expect(byQid.body.map((process: { identifier: string }) => process.identifier)).toEqual([
			BILLING,
			INVOICE_RESPONSE,
		]);
		const byUuid = await get(authority, NORDLYS, "processes", "/processes");
		expect(byUuid.body).toEqual(byQid.body);
		expect((await get(sp2, NORDLYS, "processes", "/processes")).status).toBe(404);
	});
});

describe("PUT /participants/{qualifiedIdentifier} (update)", () => {
	test("update replaces processes and contact; the answer lists exactly the submitted processes", async () => {
		const created = await addOrganization(sp1, [BILLING, ORDERING]);
		const newContact = { name: "Ola Nordmann", email: "ola@example.no", phoneNumber: "+47 91 23 45 67" };
		const response = await put(sp1, created.qualifiedIdentifier, {
			processes: refs(SELF_BILLING),
			contact: newContact,
			icd: "9999",
		});
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${MEDIA("update")};charset=UTF-8`);
		expect(response.body).toMatchObject({
			identifier: created.identifier,
			icd: "0192",
			contact: newContact,
			lastModificationDate: today(),
		});
		expect(response.body.processes.map((process: { identifier: string }) => process.identifier)).toEqual([
			SELF_BILLING,
		]);
	});

	test("a request without contact is 400 NotNull on updateParticipantFormDTO.contact", async () => {
		const response = await put(sp1, qid("0192", "991825827"), { processes: refs(BILLING, INVOICE_RESPONSE) });
		expect(response.status).toBe(400);
		expectViolation(response.body, "updateParticipantFormDTO", "contact", "NotNull");
	});

	test("the process rules apply to an update: a dependency dropped is 400", async () => {
		const response = await put(sp1, qid("0192", "991825827"), { processes: refs(INVOICE_RESPONSE), contact });
		expect(response.status).toBe(400);
		expectViolation(response.body, "updateParticipantFormDTO", "processes[0].identifier", "Dependency");
	});

	test("another provider's organization cannot be updated: 404; ADMIN may not update: 403", async () => {
		expect((await put(sp2, qid("0192", "923609016"), { processes: [], contact })).status).toBe(404);
		expect((await put(admin, qid("0192", "923609016"), { processes: [], contact })).status).toBe(403);
	});

	test("an update taking a process another provider holds for the organization is 409", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		const second = await post(sp2, {
			icd: "0192",
			organizationIdentifier: created.organizationIdentifier,
			processes: refs(ORDERING),
			contact,
		});
		expect(second.status).toBe(201);
		const response = await put(sp2, second.body.qualifiedIdentifier, {
			processes: refs(ORDERING, BILLING),
			contact,
		});
		expect(response.status).toBe(409);
	});

	test("deleteDate: a future date is kept and answered, today is 400, null clears it", async () => {
		const created = await addOrganization(sp1, []);
		const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
		const refused = await put(sp1, created.qualifiedIdentifier, { processes: [], contact, deleteDate: today() });
		expect(refused.status).toBe(400);
		expectViolation(refused.body, "updateParticipantFormDTO", "deleteDate", "Future");
		const scheduled = await put(sp1, created.qualifiedIdentifier, { processes: [], contact, deleteDate: tomorrow });
		expect(scheduled.body.deleteDate).toBe(tomorrow);
		const cleared = await put(sp1, created.qualifiedIdentifier, { processes: [], contact, deleteDate: null });
		expect(cleared.body).not.toHaveProperty("deleteDate");
	});

	test("the sweeper removes a participant once its deleteDate has arrived", async () => {
		const created = await addOrganization(sp1, []);
		const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
		await put(sp1, created.qualifiedIdentifier, { processes: [], contact, deleteDate: tomorrow });
		await registry.broker.call("participants.sweep", { today: tomorrow });
		expect((await get(sp1, created.qualifiedIdentifier)).status).toBe(404);
	});
});

describe("DELETE /participants/{qualifiedIdentifier|identifier}", () => {
	test("delete by qualified identifier is 204 with no body, then 404", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		const response = await remove(sp1, created.qualifiedIdentifier);
		expect(response.status).toBe(204);
		expect(response.text).toBe("");
		expect((await get(sp1, created.qualifiedIdentifier)).status).toBe(404);
		expect((await remove(sp1, created.qualifiedIdentifier)).status).toBe(404);
	});

	test("delete by UUID: the owner and ADMIN may; NETWORK_AUTHORITY is 403; another provider is 404", async () => {
		const mine = await addOrganization(sp1, []);
		expect((await remove(sp2, mine.identifier)).status).toBe(404);
		expect((await remove(authority, mine.identifier)).status).toBe(403);
		expect((await remove(sp1, mine.identifier)).status).toBe(204);
		const other = await addOrganization(sp2, []);
		expect((await remove(admin, other.identifier)).status).toBe(204);
		expect((await get(admin, other.identifier)).status).toBe(404);
	});

	test("ADMIN may not delete by qualified identifier (SERVICE_PROVIDER only): 403", async () => {
		expect((await remove(admin, qid("0192", "986252932"))).status).toBe(403);
		expect((await get(admin, HAVBLIKK)).status).toBe(200);
	});
});

describe("PUT /participants/{qualifiedIdentifier}/transfer/{serviceProviderIdentifier}", () => {
	test("a transfer is 200 with no body; the participant moves and lastModificationDate moves", async () => {
		const created = await addOrganization(sp1, [CATALOGUE]);
		const response = await transfer(sp1, created.qualifiedIdentifier, SP2);
		expect(response.status).toBe(200);
		expect(response.text === "" || response.text === "null").toBe(true);
		expect((await get(sp1, created.qualifiedIdentifier)).status).toBe(404);
		const moved = await get(sp2, created.qualifiedIdentifier);
		expect(moved.status).toBe(200);
		expect(moved.body).toMatchObject({
			identifier: created.identifier,
			provider: { identifier: SP2 },
			lastModificationDate: today(),
		});
	});

	test("to the caller's own provider is 400", async () => {
		const response = await transfer(sp1, qid("0192", "991825827"), SP1);
		expect(response.status).toBe(400);
	});

	test("to an unknown provider is 404", async () => {
		const response = await transfer(sp1, qid("0192", "991825827"), UNKNOWN_PROVIDER);
		expect(response.status).toBe(404);
		expect(response.body.exception).toBe("NotFoundException");
	});

	test("to a provider that already has the organization is 409", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		expect(
			(
				await post(sp2, {
					icd: "0192",
					organizationIdentifier: created.organizationIdentifier,
					processes: [],
					contact,
				})
			).status,
		).toBe(201);
		expect((await transfer(sp1, created.qualifiedIdentifier, SP2)).status).toBe(409);
	});

	test("of another provider's organization is 404; by ADMIN is 403; by UUID path is 400", async () => {
		expect((await transfer(sp2, qid("0192", "923609016"), SP3)).status).toBe(404);
		expect((await transfer(admin, qid("0192", "923609016"), SP3)).status).toBe(403);
		expect((await transfer(sp1, NORDLYS, SP3)).status).toBe(400);
	});
});

describe("GET /participants (find and stream)", () => {
	test("the paged form is the default: a page envelope whose items carry the provider and no processes", async () => {
		const response = await request(registry.url).get(BASE).set("Authorization", sp1);
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${MEDIA("find")};charset=UTF-8`);
		expect(response.body).toMatchObject({
			number: 0,
			size: 10,
			first: true,
			sort: { sorted: false, unsorted: true, empty: true },
			pageable: { pageNumber: 0, pageSize: 10, offset: 0, paged: true, unpaged: false },
		});
		expect(response.body.content.length).toBeGreaterThan(0);
		for (const item of response.body.content) {
			expect(item.provider).toEqual({ identifier: SP1, title: expect.any(String) });
			expect(item).not.toHaveProperty("processes");
		}
	});

	test("the stream form answers an array; processes=true adds each participant's processes", async () => {
		const response = await find(sp2, "?processes=true", "stream");
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${MEDIA("stream")};charset=UTF-8`);
		expect(Array.isArray(response.body)).toBe(true);
		expect(
			response.body.every(
				(item: { provider: { identifier: string }; processes: unknown[] }) =>
					item.provider.identifier === SP2 && Array.isArray(item.processes),
			),
		).toBe(true);
		expect((await find(sp2, "?processes=maybe", "stream")).status).toBe(400);
	});

	test("a service provider finds only its own participants; ADMIN and NETWORK_AUTHORITY all; others 403/401", async () => {
		const own = await find(sp1, "?size=1000", "find");
		const all = await find(authority, "?size=1000", "find");
		expect(
			own.body.content.every((item: { provider: { identifier: string } }) => item.provider.identifier === SP1),
		).toBe(true);
		expect(all.body.totalElements).toBeGreaterThan(own.body.totalElements);
		expect((await find(admin, "", "stream")).status).toBe(200);
		expect((await find(app, "", "stream")).status).toBe(403);
		expect((await request(registry.url).get(BASE)).status).toBe(401);
	});

	test("sort and paging: consecutive pages neither overlap nor skip, and the envelope reports them", async () => {
		const total = (await find(admin, "?size=1000")).body.totalElements as number;
		const seen: string[] = [];
		const names: string[] = [];
		for (let page = 0; page * 3 < total; page++) {
			const response = await find(admin, `?sort=name,desc&page=${page}&size=3`);
			expect(response.status).toBe(200);
			expect(response.body).toMatchObject({
				number: page,
				size: 3,
				totalElements: total,
				totalPages: Math.ceil(total / 3),
				first: page === 0,
				last: (page + 1) * 3 >= total,
				sort: { sorted: true, unsorted: false, empty: false },
			});
			expect(response.body.pageable).toMatchObject({ pageNumber: page, pageSize: 3, offset: page * 3 });
			seen.push(...response.body.content.map((item: { identifier: string }) => item.identifier));
			names.push(...response.body.content.map((item: { name?: string }) => (item.name ?? "").toLowerCase()));
		}
		expect(new Set(seen).size).toBe(total);
		expect(names).toEqual([...names].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0)));
	});

	test("the sortable names include qualifiedIdentifier.value; an unknown one is 400", async () => {
		const response = await find(admin, "?sort=qualifiedIdentifier.value&sort=registrationDate,DESC&size=1000");
		expect(response.status).toBe(200);
		const values = response.body.content.map((item: { qualifiedIdentifier: string }) =>
			item.qualifiedIdentifier.toLowerCase(),
		);
		expect(values).toEqual([...values].sort());
		const unknown = await find(admin, "?sort=contact");
		expect(unknown.status).toBe(400);
		expect(unknown.body.exception).toBe("MethodArgumentTypeMismatchException");
	});

	test("query: an organization number, or icd:number, matches that participant; name words match word starts", async () => {
		for (const query of ["991825827", "0192:991825827"]) {
			const response = await find(sp1, `?query=${encodeURIComponent(query)}`);
			expect(response.body.content.map((item: { identifier: string }) => item.identifier)).toEqual([NORDLYS]);
		}
		const words = await find(sp1, "?query=nordlys+regn", "stream");
		expect(words.body.map((item: { identifier: string }) => item.identifier)).toEqual([NORDLYS]);
		const middle = await find(sp1, "?query=ordlys", "stream");
		expect(middle.body).toEqual([]);
	});

	test("query characters are data: a pattern matches nothing, and another provider's organization number finds nothing", async () => {
		expect((await find(sp1, `?query=${encodeURIComponent(".*")}`, "stream")).body).toEqual([]);
		expect((await find(sp1, `?query=${encodeURIComponent("%")}`, "stream")).body).toEqual([]);
		expect((await find(sp2, "?query=923609016", "stream")).body).toEqual([]);
	});

	test("bad paging values are 400", async () => {
		for (const query of ["?page=-1", "?size=0", "?size=abc"]) expect((await find(admin, query)).status).toBe(400);
	});
});
