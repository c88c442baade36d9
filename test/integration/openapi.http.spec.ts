/**
 * The OpenAPI document against the real gateway (issue 9): GET /rest/api/openapi.json from a
 * running registry, then every operation of the table called once with a valid request as a
 * demo account the operation allows (docs/demo-data.md). Each real answer must have a status
 * the document lists for that operation, a Content-Type among the media types documented for
 * that status, and a body valid against the document's schema for that status and media type
 * (ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1). Request bodies sent here are checked
 * against the documented request schemas too, and error answers against the Error schema.
 *
 * The services are the truth: when an answer disagrees, src/contract/resource-schemas.ts is wrong.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import packageJson from "../../package.json";
import { loadServiceSchema, SERVICE_SCHEMAS } from "../../services";
import { openApiDocument } from "../../src/contract/openapi";
import { API_BASE, OPERATIONS, type Operation } from "../../src/contract/operations";
import { basic, demoSeed, REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SP1 = basic("sp1", "sp1-demo-password");
const SP2 = basic("sp2", "sp2-demo-password");
const APP1 = basic("app1", "app1-demo-password");
const ADMIN = basic("admin", "admin-demo-password");
const AUTHORITY = basic("authority", "authority-demo-password");

// seed/demo.json (docs/demo-data.md)
const ACCESS_POINT = "33333333-0000-4000-8000-000000000001";
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006";
const RECEIVE = "44444444-0000-4000-8000-000000000001";
const INVOICE = "66666666-0000-4000-8000-000000000001";
const NORDLYS_REGNSKAP = "77777777-0000-4000-8000-000000000001";
const NORDLYS_REGNSKAP_QI = "iso6523-actorid-upis::0192:991825827";
const INVOICE_DOCUMENT_TYPE =
	"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1";
const HAVBLIKK = "77777777-0000-4000-8000-000000000003";
const VIDDA = "11111111-0000-4000-8000-000000000003";
// Organization numbers with a valid MOD11 check digit, not in the demo data.
const NEW_ORGANIZATIONS = {
	add: "974760673",
	deleteByQi: "910079190",
	deleteByUuid: "910142542",
	transferred: "910300008",
	cancelled: "910300016",
};
const FJORDNETT = "11111111-0000-4000-8000-000000000002";
/** The demo production access point's certificate, sent back as it is (base64 DER). */
const DEMO_CERTIFICATE = (
	(demoSeed().accessPoints as { identifier: string; endpoints: { certificate: string }[] }[]).find(
		(accessPoint) => accessPoint.identifier === ACCESS_POINT,
	) as { endpoints: { certificate: string }[] }
).endpoints[0].certificate;

const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 75 00 75 00" };
const participantBody = (organizationIdentifier: string) => ({
	icd: "0192",
	organizationIdentifier,
	name: `Testorganisasjon ${organizationIdentifier} AS`,
	processes: [{ identifier: BILLING }, { identifier: INVOICE_RESPONSE }],
	contact,
});
const qi = (organizationIdentifier: string) => `iso6523-actorid-upis::0192:${organizationIdentifier}`;

/** What the steps create and later steps use. */
const state: Record<string, string> = {};

interface Call {
	authorization?: string;
	params?: Record<string, string>;
	query?: Record<string, string>;
	body?: unknown;
	/** The body is meant to be refused: the documented request schema must refuse it too. */
	invalidBody?: boolean;
}

interface Case {
	id: string;
	call: () => Call;
	/** Remembers what later steps need. */
	after?: (body: Json) => void;
}

/** One valid request per operation of the table, in an order where each finds what it needs. */
const CASES: Case[] = [
	{ id: "findAccessPoints", call: () => ({ authorization: APP1, query: { sort: "title", size: "2" } }) },
	{ id: "getAccessPoint", call: () => ({ authorization: SP1, params: { accessPoint: ACCESS_POINT } }) },
	// A dry run over the demo participants holding Billing: it changes nothing, and its results are read at the end.
	{
		id: "startProcessReplacement",
		call: () => ({ authorization: ADMIN, body: { from: BILLING, to: ORDERING, dryRun: true } }),
		after: (body) => (state.job = body.identifier),
	},
	{ id: "findDocumentTypes", call: () => ({ authorization: SP1, query: { sort: "title,DESC" } }) },
	{ id: "getDocumentType", call: () => ({ authorization: APP1, params: { identifier: INVOICE } }) },
	{
		id: "addDocumentType",
		call: () => ({
			authorization: ADMIN,
			body: {
				title: "Catalogue",
				qualifiedIdentifier:
					"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Catalogue-2::Catalogue##urn:fdc:peppol.eu:poacc:trns:catalogue:3::2.1",
				visible: true,
				processes: [{ identifier: ORDERING }],
			},
		}),
		after: (body) => (state.documentType = body.identifier),
	},
	{
		id: "updateDocumentType",
		call: () => ({
			authorization: AUTHORITY,
			params: { identifier: state.documentType },
			body: { title: "Catalogue 3.0", visible: false, processes: [] },
		}),
	},
	{ id: "deleteDocumentType", call: () => ({ authorization: ADMIN, params: { identifier: state.documentType } }) },
	{
		id: "findOrganizationProcesses",
		call: () => ({ authorization: APP1, params: { qualifiedIdentifier: NORDLYS_REGNSKAP_QI } }),
	},
	{
		id: "getNetworkState",
		call: () => ({ authorization: ADMIN, params: { qualifiedIdentifier: NORDLYS_REGNSKAP_QI } }),
	},
	{
		id: "addParticipant",
		call: () => ({ authorization: SP1, body: participantBody(NEW_ORGANIZATIONS.add) }),
		after: (body) => (state.participant = body.identifier),
	},
	{
		id: "updateParticipant",
		call: () => ({
			authorization: SP1,
			params: { participant: qi(NEW_ORGANIZATIONS.add) },
			body: {
				processes: [{ identifier: BILLING }, { identifier: ORDERING }],
				contact: { ...contact, name: "Ola Nordmann" },
				deleteDate: "2099-12-31",
			},
		}),
	},
	{ id: "streamParticipants", call: () => ({ authorization: SP1, query: { processes: "true", query: "Nordlys" } }) },
	{
		id: "findParticipants",
		call: () => ({ authorization: SP1, query: { processes: "true", sort: "name", page: "0", size: "10" } }),
	},
	{
		id: "getParticipantByQualifiedIdentifier",
		call: () => ({ authorization: SP1, params: { participant: qi(NEW_ORGANIZATIONS.add) } }),
	},
	{ id: "getParticipant", call: () => ({ authorization: ADMIN, params: { participant: HAVBLIKK } }) },
	{
		id: "getParticipantProcessesByQualifiedIdentifier",
		call: () => ({ authorization: SP1, params: { participant: NORDLYS_REGNSKAP_QI } }),
	},
	{
		id: "getParticipantProcesses",
		call: () => ({ authorization: AUTHORITY, params: { participant: NORDLYS_REGNSKAP } }),
	},
	{
		id: "transferParticipant",
		call: () => ({
			authorization: SP1,
			params: { participant: qi(NEW_ORGANIZATIONS.add), serviceProviderIdentifier: VIDDA },
		}),
	},
	{
		id: "deleteParticipantByQualifiedIdentifier",
		call: () => ({ authorization: SP1, params: { participant: qi(NEW_ORGANIZATIONS.deleteByQi) } }),
	},
	{
		id: "deleteParticipant",
		call: () => ({ authorization: ADMIN, params: { participant: state.participantToDelete } }),
	},
	{ id: "streamProcesses", call: () => ({ authorization: SP1 }) },
	{
		id: "findProcesses",
		call: () => ({ authorization: APP1, query: { sort: "domain,title", size: "5", page: "1" } }),
	},
	{ id: "getProcess", call: () => ({ authorization: SP1, params: { identifier: INVOICE_RESPONSE } }) },
	{
		id: "addProcess",
		call: () => ({
			authorization: AUTHORITY,
			body: {
				domain: "Catalogue",
				title: "Peppol BIS Catalogue 3.0",
				alias: "Catalogue",
				qualifiedIdentifier: "cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:catalogue_wo_response:3",
				visible: true,
				restricted: false,
				capabilities: [{ identifier: RECEIVE }],
				documentTypes: [{ identifier: INVOICE }],
				dependencies: [{ identifier: BILLING }],
				requiredICDs: ["0192"],
			},
		}),
		after: (body) => (state.process = body.identifier),
	},
	{
		id: "updateProcess",
		call: () => ({
			authorization: ADMIN,
			params: { identifier: state.process },
			body: { domain: "Catalogue", title: "Peppol BIS Catalogue 3.1", visible: false },
		}),
	},
	{ id: "deleteProcess", call: () => ({ authorization: ADMIN, params: { identifier: state.process } }) },
	{ id: "findEvents", call: () => ({ authorization: SP1, query: { sort: "at,DESC", size: "5" } }) },
	{ id: "exportParticipants", call: () => ({ authorization: ADMIN }) },
	{ id: "findChanges", call: () => ({ authorization: AUTHORITY, query: { after: "0", limit: "50" } }) },
	{ id: "followChanges", call: () => ({ authorization: SP1, query: { after: "0" } }) },
	{
		id: "startTransfer",
		call: () => ({
			authorization: SP1,
			body: {
				participant: qi(NEW_ORGANIZATIONS.transferred),
				serviceProviderIdentifier: FJORDNETT,
				effectiveDate: new Date().toISOString().slice(0, 10),
				validDays: 14,
			},
		}),
		after: (body) => {
			state.transfer = body.identifier;
			state.transferKey = body.key;
		},
	},
	{
		id: "findTransfers",
		call: () => ({ authorization: SP2, query: { state: "PENDING", sort: "createdDate,DESC", size: "5" } }),
	},
	{ id: "getTransfer", call: () => ({ authorization: AUTHORITY, params: { identifier: state.transfer } }) },
	{
		id: "completeTransfer",
		call: () => ({ authorization: SP2, params: { identifier: state.transfer }, body: { key: state.transferKey } }),
	},
	{ id: "cancelTransfer", call: () => ({ authorization: SP1, params: { identifier: state.transferToCancel } }) },
	{
		id: "findProcessReplacements",
		call: () => ({ authorization: AUTHORITY, query: { sort: "startedDate", size: "5" } }),
	},
	{ id: "getProcessReplacement", call: () => ({ authorization: ADMIN, params: { identifier: state.job } }) },
	{
		id: "findProcessReplacementResults",
		call: () => ({
			authorization: AUTHORITY,
			params: { identifier: state.job },
			query: { outcome: "WOULD_REPLACE", size: "50" },
		}),
	},
	{ id: "getOwnAccount", call: () => ({ authorization: SP1 }) },
	{ id: "findAccounts", call: () => ({ authorization: ADMIN, query: { sort: "username", size: "5" } }) },
	{
		id: "addAccount",
		call: () => ({
			authorization: ADMIN,
			body: {
				username: "openapi-test-account",
				password: "openapi-test-password",
				role: "SERVICE_PROVIDER",
				serviceProvider: FJORDNETT,
			},
		}),
		after: (body) => (state.account = body.identifier),
	},
	{ id: "getAccount", call: () => ({ authorization: ADMIN, params: { identifier: state.account } }) },
	{
		id: "resetPassword",
		call: () => ({
			authorization: ADMIN,
			params: { identifier: state.account },
			body: { password: "another-openapi-password" },
		}),
	},
	{
		id: "setOAuthClient",
		call: () => ({
			authorization: ADMIN,
			params: { username: "openapi-test-account" },
			body: { oauthClientId: "openapi-test-client" },
		}),
	},
	{ id: "disableAccount", call: () => ({ authorization: ADMIN, params: { identifier: state.account } }) },
	{ id: "findServiceProviders", call: () => ({ authorization: ADMIN, query: { sort: "title,DESC", size: "5" } }) },
	{
		id: "addServiceProvider",
		call: () => ({ authorization: ADMIN, body: { title: "OpenAPI Test Provider" } }),
		after: (body) => (state.serviceProvider = body.identifier),
	},
	{ id: "getServiceProvider", call: () => ({ authorization: ADMIN, params: { identifier: state.serviceProvider } }) },
	{
		id: "setServiceProviderAccessPoints",
		call: () => ({
			authorization: ADMIN,
			params: { identifier: state.serviceProvider },
			body: { accessPoints: [{ identifier: ACCESS_POINT }] },
		}),
	},
	...(["peppol", "bdxr"] as const).flatMap((format) => [
		{ id: `${format}ServiceGroup`, call: () => ({ params: { participant: NORDLYS_REGNSKAP_QI } }) },
		{
			id: `${format}ServiceMetadata`,
			call: () => ({ params: { participant: NORDLYS_REGNSKAP_QI, documentType: INVOICE_DOCUMENT_TYPE } }),
		},
	]),
	{ id: "businessCard", call: () => ({ params: { participant: NORDLYS_REGNSKAP_QI } }) },
	{
		id: "setAccessPointEndpoints",
		call: () => ({
			authorization: APP1,
			params: { accessPoint: ACCESS_POINT },
			body: {
				endpoints: [
					{
						url: "https://as4.nordlys-ap.example/as4",
						transportProfile: {
							title: "Peppol AS4 profile v2",
							value: "peppol-transport-as4-v2_0",
							certificateTypes: ["Peppol AP"],
						},
						certificate: DEMO_CERTIFICATE,
						activationDate: "2026-01-01",
						description: "Nordlys production AS4 endpoint",
						technicalContactUrl: "https://nordlys-ap.example/support",
					},
				],
			},
		}),
	},
];

/** The first event of a Server-Sent Events answer, read until it arrives; the stream is then closed. */
async function firstEvent(response: Response): Promise<{ id: string; event: string; data: string }> {
	const reader = (response.body as ReadableStream<Uint8Array>).getReader();
	const decoder = new TextDecoder();
	let text = "";
	try {
		for (;;) {
			const { value, done } = await reader.read();
			if (done) throw new Error(`the stream ended without an event: ${text}`);
			text += decoder.decode(value, { stream: true });
			const block = text.split("\n\n").find((part) => part.includes("\ndata: "));
			if (block) {
				const field = (name: string) =>
					(block.split("\n").find((line) => line.startsWith(`${name}: `)) ?? "").slice(name.length + 2);
				return { id: field("id"), event: field("event"), data: field("data") };
			}
		}
	} finally {
		await reader.cancel();
	}
}

/** Is the operation's action defined by one of the registry's services? */
function served(operation: Operation): boolean {
	const [service, action] = operation.action.split(".");
	if (!SERVICE_SCHEMAS[service]) return false;
	const schema = loadServiceSchema(service) as { actions?: Json; mixins?: { actions?: Json }[] };
	return [schema, ...(schema.mixins ?? [])].some((part) => part.actions && action in part.actions);
}

const operationById = new Map(OPERATIONS.map((operation) => [operation.id, operation]));

// ---------------------------------------------------------------- the document and ajv

let registry: RunningRegistry;
let document: Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const DOCUMENT_ID = "openapi.json";
/**
 * The same document with every object of its component schemas closed
 * (`additionalProperties: false`): a real answer must not carry fields the document does
 * not describe. (The served document stays open, so clients tolerate additions.)
 */
const CLOSED_ID = "openapi.closed.json";
const compiled = new Map<string, ValidateFunction>();

function closed(node: unknown): unknown {
	if (Array.isArray(node)) return node.map(closed);
	if (!node || typeof node !== "object") return node;
	const out: Json = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closed(value)]));
	const types = ([] as unknown[]).concat(out.type ?? []);
	if (types.includes("object") && out.properties && out.additionalProperties === undefined)
		out.additionalProperties = false;
	return out;
}

/** A schema from the document, compiled with its `#/components/…` references into the (closed) document. */
function validatorFor(schema: Json, into = DOCUMENT_ID): ValidateFunction {
	const text = JSON.stringify(schema);
	let validate = compiled.get(`${into} ${text}`);
	if (!validate) {
		validate = ajv.compile(JSON.parse(text.replaceAll('"$ref":"#/', `"$ref":"${into}#/`)));
		compiled.set(`${into} ${text}`, validate);
	}
	return validate;
}

function expectValid(schema: Json, value: unknown, what: string, { allowUndocumentedFields = false } = {}): void {
	const show = (validate: ValidateFunction) =>
		`${JSON.stringify(validate.errors, null, 2)}\nvalue: ${JSON.stringify(value, null, 2).slice(0, 4000)}`;
	const validate = validatorFor(schema);
	if (!validate(value)) throw new Error(`${what} does not match the document:\n${show(validate)}`);
	if (allowUndocumentedFields) return;
	const strict = validatorFor(schema, CLOSED_ID);
	if (!strict(value)) throw new Error(`${what} has fields the document does not describe:\n${show(strict)}`);
}

/** Follows a `#/components/...` reference inside the document. */
function deref(value: Json): Json {
	if (typeof value?.$ref !== "string") return value;
	return value.$ref
		.slice(2)
		.split("/")
		.reduce((node: Json, part: string) => node[part.replace(/~1/g, "/").replace(/~0/g, "~")], document);
}

/** The document's path and operation object for a row of the table (by operationId). */
function documented(id: string): { path: string; method: string; entry: Json } {
	for (const [path, methods] of Object.entries(document.paths as Json)) {
		for (const [method, entry] of Object.entries(methods as Json)) {
			if (
				String((entry as Json).operationId)
					.split("_or_")
					.includes(id)
			)
				return { path, method, entry: entry as Json };
		}
	}
	throw new Error(`operation ${id} is not in the served document`);
}

const essence = (contentType: string | null) => (contentType ?? "").split(";")[0].trim().toLowerCase();

interface Answer {
	status: number;
	contentType: string | null;
	text: string;
}

/** Builds the request from the documented path and parameters, sends it, and checks the answer against the document. */
async function callDocumented(id: string, call: Call, accept: string): Promise<Answer & { urlPath: string }> {
	const { path, method, entry } = documented(id);
	const parameters = (entry.parameters ?? []) as Json[];
	const pathNames = parameters.filter((parameter) => parameter.in === "path").map((parameter) => parameter.name);
	expect(Object.keys(call.params ?? {}).sort()).toEqual([...pathNames].sort());
	for (const name of Object.keys(call.query ?? {})) {
		expect(parameters.filter((parameter) => parameter.in === "query").map((parameter) => parameter.name)).toContain(
			name,
		);
	}
	const url = new URL(
		registry.url +
			path.replace(/\{([A-Za-z]+)\}/g, (_all, name: string) => encodeURIComponent((call.params ?? {})[name])),
	);
	for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.append(name, value);

	const headers: Record<string, string> = { Accept: accept };
	if (call.authorization) headers.Authorization = call.authorization;
	let body: string | undefined;
	if (call.body !== undefined) {
		const contentType = accept; // an operation with a body has one media type, for both directions
		const requestSchema = entry.requestBody?.content?.[contentType]?.schema;
		expect(requestSchema).toBeDefined();
		if (call.invalidBody) expect(validatorFor(requestSchema)(call.body)).toBe(false);
		else expectValid(requestSchema, call.body, `request body of ${id}`, { allowUndocumentedFields: true });
		headers["Content-Type"] = contentType;
		body = JSON.stringify(call.body);
	}
	const response = await fetch(url, { method: method.toUpperCase(), headers, body });
	return {
		urlPath: url.pathname,
		status: response.status,
		contentType: response.headers.get("content-type"),
		text: await response.text(),
	};
}

/** The real answer is one the document describes for that operation: status, media type, body. */
function expectDocumentedAnswer(id: string, answer: Answer): Json | Json[] | undefined {
	const { entry } = documented(id);
	const response = deref(entry.responses[String(answer.status)]);
	if (!response)
		throw new Error(
			`${id} answered ${answer.status}, a status the document does not list for it: ${answer.text.slice(0, 500)}`,
		);
	const content = response.content as Json | undefined;
	if (!content) {
		// A documented answer without content (204, transfer's 200) has no body.
		expect(answer.text).toBe("");
		return undefined;
	}
	expect(Object.keys(content)).toContain(essence(answer.contentType));
	const schema = content[essence(answer.contentType)].schema as Json;
	if (essence(answer.contentType) === "application/x-ndjson") {
		const lines = answer.text.split("\n").filter((line) => line !== "");
		lines.forEach((line, index) =>
			expectValid(schema, JSON.parse(line), `${id} ${answer.status} line ${index + 1}`),
		);
		return lines.map((line) => JSON.parse(line));
	}
	// An XML answer (the SMP lookups, the business card) is documented as a string: test/integration/smp.http.spec.ts and businesscard.http.spec.ts check its shape.
	if (essence(answer.contentType).endsWith("/xml")) {
		expectValid(schema, answer.text, `${id} ${answer.status}`);
		return undefined;
	}
	const parsed = JSON.parse(answer.text);
	expectValid(schema, parsed, `${id} ${answer.status} ${essence(answer.contentType)}`);
	return parsed;
}

beforeAll(async () => {
	registry = await startRegistry();
	const response = await fetch(`${registry.url}${API_BASE}/openapi.json`);
	expect(response.status).toBe(200);
	expect(essence(response.headers.get("content-type"))).toBe("application/json");
	document = (await response.json()) as Json;
	ajv.addSchema(document, DOCUMENT_ID);
	ajv.addSchema(
		{ ...document, components: { ...document.components, schemas: closed(document.components.schemas) } },
		CLOSED_ID,
	);

	const create = async (path: string, mediaType: string, authorization: string, body: unknown) => {
		const created = await fetch(`${registry.url}${API_BASE}${path}`, {
			method: "POST",
			headers: { Authorization: authorization, Accept: mediaType, "Content-Type": mediaType },
			body: JSON.stringify(body),
		});
		expect(created.status).toBe(201);
		return ((await created.json()) as { identifier: string }).identifier;
	};
	// Participants the delete steps remove (sp1's own, one addressed by qualified identifier, one
	// by UUID); the second has no name, so the finds show an optional field left out.
	const addParticipant = "application/vnd.registry.participants.add.v1+json";
	state.participantToDeleteByQi = await create(
		"/participants",
		addParticipant,
		SP1,
		participantBody(NEW_ORGANIZATIONS.deleteByQi),
	);
	const { name: _name, ...nameless } = participantBody(NEW_ORGANIZATIONS.deleteByUuid);
	state.participantToDelete = await create("/participants", addParticipant, SP1, nameless);
	// Participants to transfer: one the transfer steps start and complete, one with a transfer to cancel.
	await create("/participants", addParticipant, SP1, participantBody(NEW_ORGANIZATIONS.transferred));
	const toCancel = await create("/participants", addParticipant, SP1, participantBody(NEW_ORGANIZATIONS.cancelled));
	state.transferToCancel = await create("/transfers", "application/vnd.registry.transfers.start.v1+json", SP1, {
		participant: toCancel,
		serviceProviderIdentifier: FJORDNETT,
	});
	// A process and a document type with only their required fields, for the finds to show.
	await create("/processes", "application/vnd.registry.processes.add.v1+json", ADMIN, { domain: "Minimal" });
	await create("/document-types", "application/vnd.registry.document-types.add.v1+json", ADMIN, { title: "Minimal" });
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

describe("the served document", () => {
	test("is the generated document of this registry's version", () => {
		expect(document).toEqual(openApiDocument(packageJson.version));
	});

	test("the checks are not vacuous: a wrong type, a missing field and an undocumented field are caught", async () => {
		const participant = documented("getParticipant").entry.responses["200"].content[
			"application/vnd.registry.participants.get.v1+json"
		].schema as Json;
		const answer = await fetch(`${registry.url}${API_BASE}/participants/${NORDLYS_REGNSKAP}`, {
			headers: { Authorization: ADMIN },
		});
		const real = (await answer.json()) as Json;
		expect(() => expectValid(participant, real, "real")).not.toThrow();
		expect(() => expectValid(participant, { ...real, registrationDate: 20240101 }, "wrong type")).toThrow(
			/does not match/,
		);
		expect(() => expectValid(participant, { ...real, identifier: undefined }, "missing")).toThrow(/does not match/);
		expect(() =>
			expectValid(participant, { ...real, contact: { ...real.contact, fax: "+47 00" } }, "extra"),
		).toThrow(/does not describe/);
	});

	test("HEAD answers the GET's headers, its length included, without the body", async () => {
		const get = await fetch(`${registry.url}${API_BASE}/openapi.json`);
		const body = await get.arrayBuffer();
		const head = await fetch(`${registry.url}${API_BASE}/openapi.json`, { method: "HEAD" });
		expect(head.status).toBe(200);
		expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
		expect(head.headers.get("content-length")).toBe(String(body.byteLength));
		expect((await head.arrayBuffer()).byteLength).toBe(0);
	});

	test("every operation of the table has a request case here, and nothing else", () => {
		expect(CASES.map((entry) => entry.id).sort()).toEqual(OPERATIONS.map((operation) => operation.id).sort());
	});
});

describe("every operation, called as an allowed demo account, answers as documented", () => {
	for (const entry of CASES) {
		const operation = operationById.get(entry.id);
		if (!operation) continue; // reported by the coverage test above
		if (!served(operation)) {
			// An operation of the table whose action no service defines yet: reported, not hidden.
			test.skip(`${entry.id}: action ${operation.action} is not implemented by any service yet`, () => undefined);
			continue;
		}
		if (operation.response?.eventStream) {
			test(`${entry.id}: ${operation.method} ${operation.path} → ${operation.status}, events as documented`, async () => {
				const call = entry.call();
				const { path, entry: documentedEntry } = documented(entry.id);
				const url = new URL(registry.url + path);
				for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.append(name, value);
				const response = await fetch(url, {
					headers: { Accept: operation.mediaTypes[0], Authorization: call.authorization as string },
				});
				expect(response.status).toBe(operation.status);
				expect(essence(response.headers.get("content-type"))).toBe(operation.mediaTypes[0]);
				const event = await firstEvent(response);
				const schema = deref(documentedEntry.responses[String(operation.status)]).content[
					operation.mediaTypes[0]
				].schema as Json;
				expect(event.event).toBe(operation.response?.schema.toLowerCase());
				expectValid(deref(schema["x-event-data"] as Json), JSON.parse(event.data), `${entry.id} event data`);
				expect(Number(event.id)).toBe(JSON.parse(event.data).sequence);
			});
			continue;
		}
		test(`${entry.id}: ${operation.method} ${operation.path} → ${operation.status}`, async () => {
			const call = entry.call();
			const who = call.authorization
				? Buffer.from(call.authorization.slice(6), "base64").toString().split(":")[0]
				: "anonymous";
			const answer = await callDocumented(entry.id, call, operation.mediaTypes[0]);
			if (answer.status !== operation.status)
				throw new Error(`${entry.id} as ${who} answered ${answer.status}: ${answer.text.slice(0, 800)}`);
			const body = expectDocumentedAnswer(entry.id, answer);
			if (operation.status !== 204 && operation.response) {
				expect(essence(answer.contentType)).toBe(operation.mediaTypes[0]);
				if (operation.response.paged) expect((body as Json).content.length).toBeGreaterThan(0);
				if (operation.response.array || operation.response.ndjson)
					expect((body as Json[]).length).toBeGreaterThan(0);
			}
			entry.after?.(body as Json);
		});
	}

	test("the second media type of the organization lookup answers as documented too", async () => {
		const operation = operationById.get("findOrganizationProcesses") as Operation;
		const answer = await callDocumented(
			"findOrganizationProcesses",
			{ params: { qualifiedIdentifier: NORDLYS_REGNSKAP_QI } },
			operation.mediaTypes[1],
		);
		expect(answer.status).toBe(200);
		expectDocumentedAnswer("findOrganizationProcesses", answer);
	});
});

describe("error answers validate against the Error schema", () => {
	const cases: { name: string; id: string; status: number; call: () => Call; accept?: string }[] = [
		{
			name: "validation failure (errors[])",
			id: "addDocumentType",
			status: 400,
			call: () => ({ authorization: ADMIN, body: {}, invalidBody: true }),
		},
		{
			name: "bad credentials",
			id: "findProcesses",
			status: 401,
			call: () => ({ authorization: basic("sp1", "wrong") }),
		},
		{ name: "no credentials", id: "findAccessPoints", status: 401, call: () => ({}) },
		{
			name: "a role the operation does not allow",
			id: "addParticipant",
			status: 403,
			call: () => ({ authorization: APP1, body: participantBody("910182137") }),
		},
		{
			name: "unknown identifier",
			id: "getProcess",
			status: 404,
			call: () => ({ params: { identifier: "0f0f0f0f-0000-4000-8000-000000000000" } }),
		},
		{
			name: "Accept names no media type of the operation",
			id: "getProcess",
			status: 406,
			call: () => ({ params: { identifier: BILLING } }),
			accept: "text/csv",
		},
		{
			name: "a process still in use",
			id: "deleteProcess",
			status: 409,
			call: () => ({ authorization: ADMIN, params: { identifier: BILLING } }),
		},
		{ name: "bad paging", id: "findProcesses", status: 400, call: () => ({ query: { sort: "nonsense" } }) },
	];

	test.each(cases.map((entry) => [entry.name, entry] as const))("%s", async (_name, entry) => {
		const operation = operationById.get(entry.id) as Operation;
		const call = entry.call();
		const accept = entry.accept ?? operation.mediaTypes[0];
		const answer = await callDocumented(entry.id, call, accept);
		expect(answer.status).toBe(entry.status);
		const body = expectDocumentedAnswer(entry.id, answer) as Json;
		// The documented answer for an error status is the Error schema itself.
		expect(
			deref(deref(documented(entry.id).entry.responses[String(entry.status)]).content["application/json"].schema),
		).toBe(document.components.schemas.Error);
		expect(body.status).toBe(entry.status);
		expect(body.path).toBe(answer.urlPath);
		if (entry.status === 400 && entry.id === "addDocumentType") {
			expect(body.errors).toEqual(
				expect.arrayContaining([
					expect.objectContaining({ objectName: "documentTypeFormDTO", field: "title", code: "NotEmpty" }),
				]),
			);
		}
	});

	test("a body that is not the operation's media type is a documented 415 with the Error schema", async () => {
		const { entry } = documented("addProcess");
		const response = await fetch(`${registry.url}${API_BASE}/processes`, {
			method: "POST",
			headers: {
				Authorization: ADMIN,
				Accept: "application/vnd.registry.processes.add.v1+json",
				"Content-Type": "text/plain",
			},
			body: "domain=x",
		});
		expect(response.status).toBe(415);
		const answer = {
			status: response.status,
			contentType: response.headers.get("content-type"),
			text: await response.text(),
		};
		expect(Object.keys(entry.responses)).toContain("415");
		expectDocumentedAnswer("addProcess", answer);
	});
});
