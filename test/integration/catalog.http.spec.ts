/**
 * Processes and document types through the real gateway (spec "Document types",
 * "Processes", endpoint table, "Errors"; decisions §4, §6, §7), on the demo seed
 * (docs/demo-data.md). Tests that change the catalog work on records they create.
 */
import request from "supertest";
import { basic, REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";

const media = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;
const UNKNOWN = "0f0f0f0f-0000-4000-8000-000000000000";
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006";
const PUNCH_OUT_HIDDEN = "55555555-0000-4000-8000-000000000010";
const EHF_RESTRICTED = "55555555-0000-4000-8000-000000000011";
const INVOICE = "66666666-0000-4000-8000-000000000001";
const INVOICE_RESPONSE_DOCUMENT = "66666666-0000-4000-8000-000000000005";
const RECEIVE = "44444444-0000-4000-8000-000000000001";

const ADMIN = basic("admin", "admin-demo-password");
const AUTHORITY = basic("authority", "authority-demo-password");
const SP1 = basic("sp1", "sp1-demo-password");
const APP1 = basic("app1", "app1-demo-password");

let registry: RunningRegistry;
beforeAll(async () => {
	registry = await startRegistry();
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

type Method = "get" | "post" | "put" | "delete";

function api(method: Method, path: string, accept: string, authorization?: string) {
	const call = request(registry.url)[method](`/rest/api${path}`).set("Accept", accept);
	return authorization ? call.set("Authorization", authorization) : call;
}

async function addProcess(body: object, authorization = ADMIN) {
	const response = await api("post", "/processes", media("processes", "add"), authorization)
		.set("Content-Type", media("processes", "add"))
		.send(body);
	expect(response.status).toBe(201);
	return response.body as { identifier: string; documentTypes: { identifier: string }[] };
}

async function addDocumentType(body: object) {
	const response = await api("post", "/document-types", media("document-types", "add"), ADMIN)
		.set("Content-Type", media("document-types", "add"))
		.send(body);
	expect(response.status).toBe(201);
	return response.body as { identifier: string };
}

const getProcess = (identifier: string, authorization?: string) =>
	api("get", `/processes/${identifier}`, media("processes", "get"), authorization);
const getDocumentType = (identifier: string, authorization?: string) =>
	api("get", `/document-types/${identifier}`, media("document-types", "get"), authorization);

describe("reading processes", () => {
	test("a process is answered with its nested capabilities, document types and dependencies resolved", async () => {
		const response = await getProcess(INVOICE_RESPONSE);
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${media("processes", "get")};charset=UTF-8`);
		expect(response.body).toEqual({
			identifier: INVOICE_RESPONSE,
			qualifiedIdentifier: "cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:invoice_response:3",
			domain: "Invoicing",
			title: "Peppol BIS Invoice Response 3.0",
			alias: "Invoice response",
			restricted: false,
			visible: true,
			capabilities: [{ identifier: RECEIVE, title: "Receive documents" }],
			documentTypes: [
				{
					identifier: INVOICE_RESPONSE_DOCUMENT,
					qualifiedIdentifier:
						"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:fdc:peppol.eu:poacc:trns:invoice_response:3::2.1",
					title: "Peppol Invoice Response transaction 3.0",
					visible: true,
				},
			],
			dependencies: [
				{
					identifier: BILLING,
					qualifiedIdentifier: "cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0",
					title: "Peppol BIS Billing 3.0",
					restricted: false,
					visible: true,
				},
			],
			requiredICDs: [],
		});
	});

	test("anonymous callers do not see a hidden process: 404 on get, absent from the page and the stream; callers with credentials see it", async () => {
		const hidden = await getProcess(PUNCH_OUT_HIDDEN);
		expect(hidden.status).toBe(404);
		expect(hidden.body).toMatchObject({
			exception: "NotFoundException",
			message: `process instance with identifier ${PUNCH_OUT_HIDDEN} cannot be found`,
		});
		expect((await getProcess(PUNCH_OUT_HIDDEN, APP1)).body).toMatchObject({
			identifier: PUNCH_OUT_HIDDEN,
			visible: false,
		});

		const anonymousPage = await api("get", "/processes?size=100", media("processes", "find"));
		const providerPage = await api("get", "/processes?size=100", media("processes", "find"), SP1);
		const identifiers = (page: request.Response) =>
			page.body.content.map((process: { identifier: string }) => process.identifier);
		expect(identifiers(anonymousPage)).not.toContain(PUNCH_OUT_HIDDEN);
		expect(identifiers(providerPage)).toContain(PUNCH_OUT_HIDDEN);
		expect(providerPage.body.totalElements - anonymousPage.body.totalElements).toBe(1);

		const stream = await api("get", "/processes", media("processes", "stream"));
		expect(stream.status).toBe(200);
		expect(stream.headers["content-type"]).toBe(`${media("processes", "stream")};charset=UTF-8`);
		expect(Array.isArray(stream.body)).toBe(true);
		expect(stream.body).toHaveLength(anonymousPage.body.totalElements);
		expect(stream.body.map((process: { identifier: string }) => process.identifier)).not.toContain(
			PUNCH_OUT_HIDDEN,
		);
	});

	test("the processes page sorts by the sample's qualifiedIdentifier.value, by domain and title, in both directions", async () => {
		const sorted = async (query: string, key: (process: Record<string, string>) => string) => {
			const response = await api("get", `/processes?size=100&${query}`, media("processes", "find"), SP1);
			expect(response.status).toBe(200);
			expect(response.body.sort).toEqual({ sorted: true, unsorted: false, empty: false });
			return response.body.content.map(key);
		};
		const values = await sorted("sort=qualifiedIdentifier.value,asc", (process) =>
			process.qualifiedIdentifier.toLowerCase(),
		);
		expect(values).toEqual([...values].sort());
		const titles = await sorted("sort=title,desc", (process) => process.title.toLowerCase());
		expect(titles).toEqual([...titles].sort().reverse());
		const domains = await sorted("sort=domain&sort=title,desc", (process) => process.domain);
		expect(domains).toEqual([...domains].sort());
	});

	test("every role and anonymous callers may read processes and document types", async () => {
		for (const authorization of [undefined, SP1, APP1, ADMIN, AUTHORITY]) {
			expect((await api("get", "/processes", media("processes", "find"), authorization)).status).toBe(200);
			expect((await api("get", "/document-types", media("document-types", "find"), authorization)).status).toBe(
				200,
			);
		}
	});
});

describe("reading document types", () => {
	test("a document type is answered with its processes, restricted ones marked", async () => {
		const response = await getDocumentType(INVOICE);
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${media("document-types", "get")};charset=UTF-8`);
		expect(response.body).toMatchObject({
			identifier: INVOICE,
			title: "Peppol BIS Billing UBL Invoice V3",
			visible: true,
		});
		expect(response.body.processes).toEqual([
			{
				identifier: BILLING,
				qualifiedIdentifier: "cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0",
				title: "Peppol BIS Billing 3.0",
				visible: true,
				restricted: false,
			},
			{
				identifier: EHF_RESTRICTED,
				qualifiedIdentifier: "cenbii-procid-ubl::urn:fdc:anskaffelser.no:2019:ehf:postaward:g3:01:1.0",
				title: "EHF Post-award G3 billing (deprecated)",
				visible: true,
				restricted: true,
			},
		]);
	});

	test("the document types page is a page envelope sortable by title", async () => {
		const response = await api("get", "/document-types?sort=title&size=2", media("document-types", "find"));
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${media("document-types", "find")};charset=UTF-8`);
		expect(response.body).toMatchObject({
			number: 0,
			size: 2,
			numberOfElements: 2,
			totalElements: 5,
			totalPages: 3,
			first: true,
			last: false,
		});
		expect(response.body.content.map((documentType: { title: string }) => documentType.title)).toEqual([
			"Peppol BIS Billing UBL Credit Note V3",
			"Peppol BIS Billing UBL Invoice V3",
		]);
	});

	test("an unknown document type is 404 saying the instance cannot be found", async () => {
		const response = await getDocumentType(UNKNOWN);
		expect(response.status).toBe(404);
		expect(response.body).toMatchObject({
			status: 404,
			exception: "NotFoundException",
			message: `document type instance with identifier ${UNKNOWN} cannot be found`,
		});
	});
});

describe("changing processes", () => {
	test("ADMIN and NETWORK_AUTHORITY may add a process (201 with the add media type); a service provider gets 403, anonymous 401", async () => {
		const body = {
			domain: "Testing",
			title: "Added over HTTP",
			capabilities: [{ identifier: RECEIVE }],
			dependencies: [{ identifier: BILLING }],
		};
		const response = await api("post", "/processes", media("processes", "add"), ADMIN)
			.set("Content-Type", media("processes", "add"))
			.send(body);
		expect(response.status).toBe(201);
		expect(response.headers["content-type"]).toBe(`${media("processes", "add")};charset=UTF-8`);
		expect(response.body).toMatchObject({
			domain: "Testing",
			title: "Added over HTTP",
			restricted: false,
			visible: true,
			capabilities: [{ identifier: RECEIVE, title: "Receive documents" }],
			dependencies: [{ identifier: BILLING, title: "Peppol BIS Billing 3.0" }],
		});
		expect((await getProcess(response.body.identifier)).body).toEqual(response.body);
		await addProcess({ domain: "Testing", title: "Added by the authority" }, AUTHORITY);
		const forbidden = await api("post", "/processes", media("processes", "add"), SP1)
			.set("Content-Type", media("processes", "add"))
			.send(body);
		expect(forbidden.status).toBe(403);
		const anonymous = await api("post", "/processes", media("processes", "add"))
			.set("Content-Type", media("processes", "add"))
			.send(body);
		expect(anonymous.status).toBe(401);
	});

	test("a process without domain is 400 with NotNull on domain of processFormDTO", async () => {
		const response = await api("post", "/processes", media("processes", "add"), ADMIN)
			.set("Content-Type", "application/json")
			.send({ title: "No domain" });
		expect(response.status).toBe(400);
		expect(response.body).toMatchObject({
			exception: "MethodArgumentNotValidException",
			message: "Validation failed for object='processFormDTO'. Error count: 1",
			errors: [
				{
					code: "NotNull",
					field: "domain",
					objectName: "processFormDTO",
					defaultMessage: "must not be null",
					rejectedValue: null,
					bindingFailure: false,
				},
			],
		});
	});

	test("a link to an unknown document type is 400 on documentTypes[0].identifier with code Exists", async () => {
		const response = await api("post", "/processes", media("processes", "add"), ADMIN)
			.set("Content-Type", media("processes", "add"))
			.send({ domain: "Testing", documentTypes: [{ identifier: UNKNOWN }] });
		expect(response.status).toBe(400);
		expect(response.body.errors).toEqual([
			expect.objectContaining({
				field: "documentTypes[0].identifier",
				code: "Exists",
				objectName: "processFormDTO",
				rejectedValue: UNKNOWN,
			}),
		]);
	});

	test("a qualified identifier another process has, in any case, is 409", async () => {
		const response = await api("post", "/processes", media("processes", "add"), ADMIN)
			.set("Content-Type", media("processes", "add"))
			.send({
				domain: "Testing",
				qualifiedIdentifier: "CENBII-PROCID-UBL::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0",
			});
		expect(response.status).toBe(409);
		expect(response.body).toMatchObject({ status: 409, exception: "ConflictException" });
	});

	test("an update answers 200 with the update media type; an unknown process is 404", async () => {
		const process = await addProcess({ domain: "Testing", title: "To update" });
		const response = await api("put", `/processes/${process.identifier}`, media("processes", "update"), AUTHORITY)
			.set("Content-Type", media("processes", "update"))
			.send({ domain: "Testing", title: "Updated", restricted: true });
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${media("processes", "update")};charset=UTF-8`);
		expect(response.body).toMatchObject({ identifier: process.identifier, title: "Updated", restricted: true });
		const unknown = await api("put", `/processes/${UNKNOWN}`, media("processes", "update"), ADMIN)
			.set("Content-Type", media("processes", "update"))
			.send({ domain: "Testing" });
		expect(unknown.status).toBe(404);
	});

	test("a process that participants use or that another process depends on cannot be deleted (409); an unused one is deleted (204, then 404)", async () => {
		const deleteProcess = (identifier: string) =>
			api("delete", `/processes/${identifier}`, media("processes", "delete"), ADMIN);
		const dependedOn = await deleteProcess(BILLING);
		expect(dependedOn.status).toBe(409);
		expect(dependedOn.body.exception).toBe("ConflictException");
		const inUse = await deleteProcess(ORDERING);
		expect(inUse.status).toBe(409);
		expect(inUse.body.message).toMatch(/participant/);

		const unused = await addProcess({ domain: "Testing", title: "Unused" });
		const deleted = await deleteProcess(unused.identifier);
		expect(deleted.status).toBe(204);
		expect(deleted.text).toBe("");
		expect((await getProcess(unused.identifier, ADMIN)).status).toBe(404);
		expect((await deleteProcess(unused.identifier)).status).toBe(404);
		expect((await api("delete", `/processes/${BILLING}`, media("processes", "delete"), SP1)).status).toBe(403);
	});
});

describe("changing document types", () => {
	test("a document type linked to a process from its side shows in the process's documentTypes, and unlinking follows", async () => {
		const process = await addProcess({ domain: "Testing", title: "Linked over HTTP" });
		const documentType = await addDocumentType({
			title: "Linked document type",
			processes: [{ identifier: process.identifier }],
		});
		expect((await getProcess(process.identifier)).body.documentTypes).toEqual([
			{ identifier: documentType.identifier, title: "Linked document type", visible: true },
		]);
		const updated = await api(
			"put",
			`/document-types/${documentType.identifier}`,
			media("document-types", "update"),
			ADMIN,
		)
			.set("Content-Type", media("document-types", "update"))
			.send({ title: "Unlinked document type", processes: [] });
		expect(updated.status).toBe(200);
		expect(updated.headers["content-type"]).toBe(`${media("document-types", "update")};charset=UTF-8`);
		expect(updated.body).toEqual({
			identifier: documentType.identifier,
			title: "Unlinked document type",
			visible: true,
			processes: [],
		});
		expect((await getProcess(process.identifier)).body.documentTypes).toEqual([]);
	});

	test("a document type without title is 400 with NotEmpty on title of documentTypeFormDTO, on add and update", async () => {
		const add = await api("post", "/document-types", media("document-types", "add"), ADMIN)
			.set("Content-Type", media("document-types", "add"))
			.send({ title: "" });
		expect(add.status).toBe(400);
		expect(add.body.errors).toEqual([
			expect.objectContaining({
				code: "NotEmpty",
				field: "title",
				objectName: "documentTypeFormDTO",
				defaultMessage: "must not be empty",
			}),
		]);
		const update = await api("put", `/document-types/${INVOICE}`, media("document-types", "update"), ADMIN)
			.set("Content-Type", media("document-types", "update"))
			.send({});
		expect(update.status).toBe(400);
		expect(update.body.errors).toEqual([
			expect.objectContaining({ code: "NotEmpty", field: "title", objectName: "documentTypeFormDTO" }),
		]);
	});

	test("a document type still linked to a process cannot be deleted (409); an unlinked one answers 204 and is gone", async () => {
		const linked = await api("delete", `/document-types/${INVOICE}`, media("document-types", "delete"), ADMIN);
		expect(linked.status).toBe(409);
		const documentType = await addDocumentType({ title: "Short-lived document type" });
		const deleted = await api(
			"delete",
			`/document-types/${documentType.identifier}`,
			media("document-types", "delete"),
			AUTHORITY,
		);
		expect(deleted.status).toBe(204);
		expect(deleted.text).toBe("");
		expect((await getDocumentType(documentType.identifier, ADMIN)).status).toBe(404);
	});

	test("a service provider may not change document types (403); an anonymous caller must authenticate (401)", async () => {
		const forbidden = await api("post", "/document-types", media("document-types", "add"), SP1)
			.set("Content-Type", media("document-types", "add"))
			.send({ title: "Nope" });
		expect(forbidden.status).toBe(403);
		const anonymous = await api("delete", `/document-types/${INVOICE}`, media("document-types", "delete"));
		expect(anonymous.status).toBe(401);
	});

	test("anonymous callers see neither a hidden document type nor hidden records nested in visible ones", async () => {
		const process = await addProcess({ domain: "Testing", title: "Visible, with hidden links" });
		const hidden = await addDocumentType({
			title: "Hidden document type",
			visible: false,
			processes: [{ identifier: process.identifier }],
		});
		expect((await getDocumentType(hidden.identifier)).status).toBe(404);
		expect((await getDocumentType(hidden.identifier, SP1)).body).toMatchObject({ visible: false });
		expect((await getProcess(process.identifier)).body.documentTypes).toEqual([]);
		expect((await getProcess(process.identifier, SP1)).body.documentTypes).toEqual([
			{ identifier: hidden.identifier, title: "Hidden document type", visible: false },
		]);
		const anonymousPage = await api("get", "/document-types?size=100", media("document-types", "find"));
		expect(
			anonymousPage.body.content.map((documentType: { identifier: string }) => documentType.identifier),
		).not.toContain(hidden.identifier);
	});
});

describe("searching the catalog (query, the registry's extension)", () => {
	const found = async (path: string, accept: string, authorization?: string) => {
		const response = await api("get", path, accept, authorization);
		expect(response.status).toBe(200);
		const items = (Array.isArray(response.body) ? response.body : response.body.content) as {
			identifier: string;
		}[];
		return items.map((item) => item.identifier);
	};
	const processes = (query: string, authorization?: string) =>
		found(`/processes?size=100&query=${encodeURIComponent(query)}`, media("processes", "find"), authorization);
	const documentTypes = (query: string, authorization?: string) =>
		found(
			`/document-types?size=100&query=${encodeURIComponent(query)}`,
			media("document-types", "find"),
			authorization,
		);

	test("title words, each starting a word of the title in any case, find processes (paged and array form) and document types", async () => {
		expect(await processes("peppol ORDERING")).toEqual([ORDERING]);
		expect(await processes("invoice+resp")).toEqual([INVOICE_RESPONSE]);
		expect(await found(`/processes?query=invoice%20response`, media("processes", "stream"))).toEqual([
			INVOICE_RESPONSE,
		]);
		expect(await documentTypes("invoice resp transaction")).toEqual([INVOICE_RESPONSE_DOCUMENT]);
		const page = await api("get", "/processes?size=1&query=peppol+bis+billing", media("processes", "find"));
		expect(page.body).toMatchObject({ totalElements: 2, numberOfElements: 1, size: 1, totalPages: 2 });
	});

	test("a qualified identifier, in any case, finds its record; a value that matches nothing answers an empty page", async () => {
		expect(await processes("CENBII-PROCID-UBL::urn:fdc:peppol.eu:poacc:bis:invoice_response:3")).toEqual([
			INVOICE_RESPONSE,
		]);
		expect(
			await documentTypes(
				"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:fdc:peppol.eu:poacc:trns:invoice_response:3::2.1",
			),
		).toEqual([INVOICE_RESPONSE_DOCUMENT]);
		const none = await api("get", "/processes?query=nonexistent", media("processes", "find"));
		expect(none.status).toBe(200);
		expect(none.body).toMatchObject({ content: [], totalElements: 0 });
	});

	test("regular-expression and operator characters are matched literally", async () => {
		expect(await processes(".*")).toEqual([]);
		expect(await processes("peppol OR ehf")).toEqual([]);
		expect(await processes("(deprecated)")).toEqual([EHF_RESTRICTED]);
		expect(await documentTypes("' OR 1=1 --")).toEqual([]);
		expect(await processes('{"$ne": null}')).toEqual([]);
	});

	test("anonymous callers never find hidden records; authenticated callers do", async () => {
		expect(await processes("punch out")).toEqual([]);
		expect(await processes("cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:punch_out:3")).toEqual([]);
		expect(await processes("punch out", SP1)).toEqual([PUNCH_OUT_HIDDEN]);
		expect(await found(`/processes?query=punch`, media("processes", "stream"))).toEqual([]);
	});

	test("a query longer than 1000 characters is 400 on the field query", async () => {
		const response = await api("get", `/document-types?query=${"x".repeat(1001)}`, media("document-types", "find"));
		expect(response.status).toBe(400);
		expect(response.body).toMatchObject({
			exception: "MethodArgumentNotValidException",
			errors: [expect.objectContaining({ field: "query" })],
		});
		expect((await api("get", `/processes?query=${"x".repeat(1001)}`, media("processes", "stream"))).status).toBe(
			400,
		);
	});
});
