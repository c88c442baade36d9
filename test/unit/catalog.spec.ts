/**
 * The catalog service on an in-memory broker (spec "Document types", "Processes";
 * decisions §4, §6; docs/internals.md "Actions"). The participants service is a stub whose
 * answer to countUsingProcess each test controls.
 */
process.env.DATA_DIR = ":memory:";

import { Errors, ServiceBroker, type Service } from "moleculer";
import CatalogService from "../../services/catalog/catalog.service";
import type { CatalogChange } from "../../services/catalog/batch";
import type { Caller, DocumentType, Process } from "../../src/contract/model";
import type { Page, PageRequest } from "../../src/contract/paging";
import type { Collection, StoredDoc } from "../../src/store/types";

const ADMIN: Caller = { username: "admin", role: "ADMIN" };
const SERVICE_PROVIDER: Caller = {
	username: "sp1",
	role: "SERVICE_PROVIDER",
	serviceProvider: "11111111-0000-4000-8000-000000000001",
};
const UNKNOWN = "0f0f0f0f-0000-4000-8000-000000000000";
const PAGE: PageRequest = { page: 0, size: 10, sort: [] };

let broker: ServiceBroker;
let participantsUsing = 0;
const changes: CatalogChange[] = [];

const asAdmin = { meta: { user: ADMIN } };
const anonymous = { meta: { user: null } };

function call<T>(action: string, params: object = {}, options: object = asAdmin): Promise<T> {
	return broker.call<T, object>(`catalog.${action}`, params, options);
}

const addProcess = (body: object) => call<Process>("addProcess", { body });
const addDocumentType = (body: object) => call<DocumentType>("addDocumentType", { body });
const ref = (...identifiers: string[]) => identifiers.map((identifier) => ({ identifier }));

async function rejection(promise: Promise<unknown>): Promise<Errors.MoleculerError & { data?: unknown }> {
	try {
		await promise;
	} catch (error) {
		return error as Errors.MoleculerError;
	}
	throw new Error("expected a rejection");
}

function auditOutbox(): Collection<StoredDoc> {
	return (broker.getLocalService("catalog") as Service & { collections: { auditOutbox: Collection<StoredDoc> } })
		.collections.auditOutbox;
}

function participantsStub() {
	return { name: "participants", actions: { countUsingProcess: () => participantsUsing } };
}

beforeAll(async () => {
	broker = new ServiceBroker({ logger: false });
	broker.createService(CatalogService);
	broker.createService(participantsStub());
	broker.createService({
		name: "listener",
		events: {
			"catalog.changed"(ctx: { params: CatalogChange }) {
				changes.push(ctx.params);
			},
		},
	});
	await broker.start();
});
afterAll(() => broker.stop());
beforeEach(() => {
	participantsUsing = 0;
	changes.length = 0;
});

let capability: { identifier: string };
beforeAll(async () => {
	await call("importSeed", {
		capabilities: [{ identifier: "44444444-0000-4000-8000-000000000001", title: "Receive documents" }],
	});
	capability = { identifier: "44444444-0000-4000-8000-000000000001" };
});

describe("processes", () => {
	test("an added process is answered with every field, visible true and restricted false by default, nested titles resolved", async () => {
		const billing = await addProcess({
			domain: "Invoicing",
			title: "Billing",
			qualifiedIdentifier: "cenbii-procid-ubl::billing-defaults",
		});
		const invoice = await addDocumentType({
			title: "Invoice",
			qualifiedIdentifier: "busdox-docid-qns::invoice-defaults",
		});
		const response = await addProcess({
			domain: "Invoicing",
			title: "Invoice response",
			alias: "IR",
			qualifiedIdentifier: "cenbii-procid-ubl::invoice-response-defaults",
			capabilities: [capability],
			documentTypes: ref(invoice.identifier),
			dependencies: ref(billing.identifier),
			requiredICDs: ["0192"],
		});
		expect(response).toEqual({
			identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
			qualifiedIdentifier: "cenbii-procid-ubl::invoice-response-defaults",
			domain: "Invoicing",
			title: "Invoice response",
			alias: "IR",
			restricted: false,
			visible: true,
			capabilities: [{ identifier: capability.identifier, title: "Receive documents" }],
			documentTypes: [
				{
					identifier: invoice.identifier,
					qualifiedIdentifier: "busdox-docid-qns::invoice-defaults",
					title: "Invoice",
					visible: true,
				},
			],
			dependencies: [
				{
					identifier: billing.identifier,
					qualifiedIdentifier: "cenbii-procid-ubl::billing-defaults",
					title: "Billing",
					restricted: false,
					visible: true,
				},
			],
			requiredICDs: ["0192"],
		});
		expect(await call("getProcess", { identifier: response.identifier })).toEqual(response);
	});

	test("a process without domain is refused by its params schema with NotNull on body.domain", async () => {
		const error = await rejection(addProcess({ title: "No domain" }));
		expect(error).toBeInstanceOf(Errors.ValidationError);
		expect(error.data).toEqual([expect.objectContaining({ field: "body.domain", message: "NotNull" })]);
	});

	test("linking unknown capabilities, document types or dependencies is 400 naming every position with code Exists", async () => {
		const known = await addProcess({ domain: "D", title: "Known" });
		const error = await rejection(
			addProcess({
				domain: "D",
				capabilities: ref(UNKNOWN),
				documentTypes: ref(UNKNOWN),
				dependencies: [{ identifier: known.identifier }, { identifier: UNKNOWN }],
			}),
		);
		expect(error.code).toBe(400);
		expect(error.type).toBe("MethodArgumentNotValidException");
		expect((error.data as { violations: unknown[] }).violations).toEqual([
			{
				field: "capabilities[0].identifier",
				code: "Exists",
				defaultMessage: "must reference an existing record",
				rejectedValue: UNKNOWN,
				bindingFailure: false,
			},
			{
				field: "documentTypes[0].identifier",
				code: "Exists",
				defaultMessage: "must reference an existing record",
				rejectedValue: UNKNOWN,
				bindingFailure: false,
			},
			{
				field: "dependencies[1].identifier",
				code: "Exists",
				defaultMessage: "must reference an existing record",
				rejectedValue: UNKNOWN,
				bindingFailure: false,
			},
		]);
	});

	test("a process may not depend on itself (400 on dependencies[0].identifier)", async () => {
		const process = await addProcess({ domain: "D", title: "Self" });
		const error = await rejection(
			call("updateProcess", {
				identifier: process.identifier,
				body: { domain: "D", dependencies: ref(process.identifier) },
			}),
		);
		expect(error.code).toBe(400);
		expect((error.data as { violations: { field: string }[] }).violations).toEqual([
			expect.objectContaining({ field: "dependencies[0].identifier", code: "NotSelf" }),
		]);
	});

	test("an update replaces the whole process: lists not sent become empty, flags take their defaults", async () => {
		const dependency = await addProcess({ domain: "D", title: "Dependency" });
		const process = await addProcess({
			domain: "D",
			title: "Before",
			restricted: true,
			visible: false,
			dependencies: ref(dependency.identifier),
			requiredICDs: ["0007"],
		});
		changes.length = 0;
		const updated = await call<Process>("updateProcess", {
			identifier: process.identifier,
			body: { domain: "E", title: "After" },
		});
		expect(updated).toMatchObject({
			identifier: process.identifier,
			domain: "E",
			title: "After",
			restricted: false,
			visible: true,
			dependencies: [],
			requiredICDs: [],
		});
		expect(changes).toEqual([{ resource: "process", identifier: process.identifier, operation: "update" }]);
	});

	test("two processes with the same qualified identifier, in any case, are a 409; processes without one never collide", async () => {
		await addProcess({ domain: "D", qualifiedIdentifier: "cenbii-procid-ubl::unique-one" });
		const error = await rejection(
			addProcess({ domain: "D", qualifiedIdentifier: "CENBII-PROCID-UBL::UNIQUE-ONE" }),
		);
		expect(error.code).toBe(409);
		expect(error.type).toBe("ConflictException");
		await addProcess({ domain: "D", title: "no qualified identifier 1" });
		await addProcess({ domain: "D", title: "no qualified identifier 2", qualifiedIdentifier: "" });
		const other = await addProcess({ domain: "D", qualifiedIdentifier: "cenbii-procid-ubl::unique-two" });
		const update = await rejection(
			call("updateProcess", {
				identifier: other.identifier,
				body: { domain: "D", qualifiedIdentifier: "cenbii-procid-ubl::unique-one" },
			}),
		);
		expect(update.code).toBe(409);
	});

	test("an unknown process is 404 on get, update and delete, with the instance message", async () => {
		for (const [action, params] of [
			["getProcess", { identifier: UNKNOWN }],
			["updateProcess", { identifier: UNKNOWN, body: { domain: "D" } }],
			["deleteProcess", { identifier: UNKNOWN }],
		] as const) {
			const error = await rejection(call(action, params));
			expect(error.code).toBe(404);
			expect(error.type).toBe("NotFoundException");
			expect(error.message).toBe(`process instance with identifier ${UNKNOWN} cannot be found`);
		}
	});

	test("deleting a process removes it (then 404) and broadcasts catalog.changed", async () => {
		const process = await addProcess({ domain: "D", title: "Short-lived" });
		changes.length = 0;
		await call("deleteProcess", { identifier: process.identifier });
		expect(changes).toEqual([{ resource: "process", identifier: process.identifier, operation: "delete" }]);
		expect((await rejection(call("getProcess", { identifier: process.identifier }))).code).toBe(404);
	});

	test("deleting a process another process depends on is a 409", async () => {
		const billing = await addProcess({ domain: "D", title: "Depended on" });
		await addProcess({ domain: "D", title: "Dependent", dependencies: ref(billing.identifier) });
		const error = await rejection(call("deleteProcess", { identifier: billing.identifier }));
		expect(error.code).toBe(409);
		expect(error.message).toMatch(/depend/);
	});

	test("deleting a process a participant uses is a 409 (participants.countUsingProcess)", async () => {
		const process = await addProcess({ domain: "D", title: "In use" });
		participantsUsing = 2;
		const error = await rejection(call("deleteProcess", { identifier: process.identifier }));
		expect(error.code).toBe(409);
		expect(error.message).toMatch(/2 participant/);
		expect(await call("getProcess", { identifier: process.identifier })).toMatchObject({
			identifier: process.identifier,
		});
	});

	test("without the participants service a process is not deleted: the call fails", async () => {
		const process = await addProcess({ domain: "D", title: "Unknown use" });
		await broker.destroyService(broker.getLocalService("participants"));
		try {
			const error = await rejection(call("deleteProcess", { identifier: process.identifier }));
			expect(error.name).toMatch(/^Service(NotFound|NotAvailable)Error$/);
			expect(await call("getProcess", { identifier: process.identifier })).toMatchObject({
				identifier: process.identifier,
			});
		} finally {
			broker.createService(participantsStub());
			await broker.waitForServices("participants");
		}
	});

	test("processesByIds answers full records in the order asked, hidden ones included, unknown ones left out", async () => {
		const first = await addProcess({ domain: "D", title: "First", visible: false });
		const second = await addProcess({ domain: "D", title: "Second", restricted: true });
		const answer = await call<Process[]>(
			"processesByIds",
			{ identifiers: [second.identifier, UNKNOWN, first.identifier.toUpperCase()] },
			{},
		);
		expect(answer.map((process) => [process.identifier, process.visible, process.restricted])).toEqual([
			[second.identifier, true, true],
			[first.identifier, false, false],
		]);
	});

	test("allProcesses answers every process, hidden ones included", async () => {
		const hidden = await addProcess({ domain: "D", title: "Hidden for allProcesses", visible: false });
		const all = await call<Process[]>("allProcesses", {}, {});
		expect(all.find((process) => process.identifier === hidden.identifier)).toMatchObject({
			visible: false,
			restricted: false,
		});
	});

	test("every write puts an audit record into the same store", async () => {
		const process = await addProcess({ domain: "D", title: "Audited" });
		await call("updateProcess", { identifier: process.identifier, body: { domain: "D", title: "Audited again" } });
		await call("deleteProcess", { identifier: process.identifier });
		// Records within one millisecond share `at`: compare by operation, not by order.
		const records = ((await auditOutbox().find({})) as unknown as Record<string, unknown>[]).filter(
			(record) => record.resourceId === process.identifier,
		);
		const byOperation = new Map(records.map((record) => [record.operation, record]));
		expect(records).toHaveLength(3);
		expect(byOperation.get("addProcess")).toMatchObject({
			resource: "process",
			before: null,
			after: { title: "Audited" },
		});
		expect(byOperation.get("updateProcess")).toMatchObject({
			actor: { username: "admin", role: "ADMIN" },
			before: { title: "Audited" },
			after: { title: "Audited again" },
		});
		expect(byOperation.get("deleteProcess")).toMatchObject({ before: { title: "Audited again" }, after: null });
	});
});

describe("document types", () => {
	test("an added document type defaults to visible and is answered with its linked processes", async () => {
		const process = await addProcess({
			domain: "D",
			title: "Linked",
			qualifiedIdentifier: "cenbii-procid-ubl::linked",
			restricted: true,
		});
		const documentType = await addDocumentType({
			title: "Order",
			qualifiedIdentifier: "busdox-docid-qns::order",
			processes: ref(process.identifier),
		});
		expect(documentType).toEqual({
			identifier: expect.any(String),
			qualifiedIdentifier: "busdox-docid-qns::order",
			title: "Order",
			visible: true,
			processes: [
				{
					identifier: process.identifier,
					qualifiedIdentifier: "cenbii-procid-ubl::linked",
					title: "Linked",
					visible: true,
					restricted: true,
				},
			],
		});
	});

	test("a document type without title is refused by its params schema with NotEmpty on body.title", async () => {
		for (const body of [{}, { title: "" }]) {
			const error = await rejection(addDocumentType(body));
			expect(error).toBeInstanceOf(Errors.ValidationError);
			expect(error.data).toEqual([expect.objectContaining({ field: "body.title", message: "NotEmpty" })]);
		}
	});

	test("a link made from the document type side shows on the process, and one made from the process side shows on the document type", async () => {
		const process = await addProcess({ domain: "D", title: "Both sides" });
		const fromDocumentType = await addDocumentType({
			title: "Linked from the document type",
			processes: ref(process.identifier),
		});
		const otherDocumentType = await addDocumentType({ title: "Linked from the process" });
		const updated = await call<Process>("updateProcess", {
			identifier: process.identifier,
			body: {
				domain: "D",
				title: "Both sides",
				documentTypes: ref(fromDocumentType.identifier, otherDocumentType.identifier),
			},
		});
		expect(updated.documentTypes.map((documentType) => documentType.identifier)).toEqual([
			fromDocumentType.identifier,
			otherDocumentType.identifier,
		]);
		const other = await call<DocumentType>("getDocumentType", { identifier: otherDocumentType.identifier });
		expect(other.processes.map((linked) => linked.identifier)).toEqual([process.identifier]);
	});

	test("updating a document type replaces its set of processes, and each process follows", async () => {
		const [first, second, third] = await Promise.all(
			["One", "Two", "Three"].map((title) => addProcess({ domain: "D", title })),
		);
		const documentType = await addDocumentType({
			title: "Relinked",
			processes: ref(first.identifier, second.identifier),
		});
		changes.length = 0;
		const updated = await call<DocumentType>("updateDocumentType", {
			identifier: documentType.identifier,
			body: { title: "Relinked", processes: ref(second.identifier, third.identifier) },
		});
		expect(updated.processes.map((process) => process.identifier).sort()).toEqual(
			[second.identifier, third.identifier].sort(),
		);
		const documentTypesOf = async (process: Process) =>
			(await call<Process>("getProcess", { identifier: process.identifier })).documentTypes.map(
				(linked) => linked.identifier,
			);
		expect(await documentTypesOf(first)).toEqual([]);
		expect(await documentTypesOf(second)).toEqual([documentType.identifier]);
		expect(await documentTypesOf(third)).toEqual([documentType.identifier]);
		expect(changes).toEqual(
			expect.arrayContaining([
				{ resource: "documentType", identifier: documentType.identifier, operation: "update" },
				{ resource: "process", identifier: first.identifier, operation: "update" },
				{ resource: "process", identifier: third.identifier, operation: "update" },
			]),
		);
		expect(changes).toHaveLength(3);
	});

	test("links made concurrently to one process from two document types are both kept", async () => {
		const process = await addProcess({ domain: "D", title: "Contended" });
		const [left, right] = await Promise.all([
			addDocumentType({ title: "Left" }),
			addDocumentType({ title: "Right" }),
		]);
		await Promise.all(
			[left, right].map((documentType) =>
				call("updateDocumentType", {
					identifier: documentType.identifier,
					body: { title: documentType.title, processes: ref(process.identifier) },
				}),
			),
		);
		const linked = (await call<Process>("getProcess", { identifier: process.identifier })).documentTypes.map(
			(documentType) => documentType.identifier,
		);
		expect(linked.sort()).toEqual([left.identifier, right.identifier].sort());
	});

	test("linking an unknown process is 400 on processes[i].identifier", async () => {
		const known = await addProcess({ domain: "D", title: "Known for document type" });
		const error = await rejection(
			addDocumentType({ title: "Bad link", processes: ref(known.identifier, UNKNOWN) }),
		);
		expect(error.code).toBe(400);
		expect((error.data as { violations: unknown[] }).violations).toEqual([
			expect.objectContaining({ field: "processes[1].identifier", code: "Exists", rejectedValue: UNKNOWN }),
		]);
	});

	test("duplicate qualified identifiers among document types are a 409", async () => {
		await addDocumentType({ title: "A", qualifiedIdentifier: "busdox-docid-qns::dup" });
		const error = await rejection(addDocumentType({ title: "B", qualifiedIdentifier: "Busdox-Docid-Qns::DUP" }));
		expect(error.code).toBe(409);
	});

	test("deleting a document type still linked to a process is a 409; unlinked it is deleted, then 404", async () => {
		const process = await addProcess({ domain: "D", title: "Holder" });
		const documentType = await addDocumentType({ title: "Held", processes: ref(process.identifier) });
		expect((await rejection(call("deleteDocumentType", { identifier: documentType.identifier }))).code).toBe(409);
		await call("updateProcess", {
			identifier: process.identifier,
			body: { domain: "D", title: "Holder", documentTypes: [] },
		});
		await call("deleteDocumentType", { identifier: documentType.identifier });
		const error = await rejection(call("getDocumentType", { identifier: documentType.identifier }));
		expect(error.code).toBe(404);
		expect(error.message).toBe(`document type instance with identifier ${documentType.identifier} cannot be found`);
	});
});

describe("visibility", () => {
	let hiddenProcess: Process;
	let hiddenDocumentType: DocumentType;
	let visibleProcess: Process;

	beforeAll(async () => {
		hiddenDocumentType = await addDocumentType({ title: "zz hidden document type", visible: false });
		hiddenProcess = await addProcess({ domain: "Hidden", title: "zz hidden process", visible: false });
		visibleProcess = await addProcess({
			domain: "Visible",
			title: "zz visible process",
			documentTypes: ref(hiddenDocumentType.identifier),
			dependencies: ref(hiddenProcess.identifier),
		});
		await call("updateDocumentType", {
			identifier: hiddenDocumentType.identifier,
			body: {
				title: "zz hidden document type",
				visible: false,
				processes: ref(visibleProcess.identifier, hiddenProcess.identifier),
			},
		});
	});

	test("anonymous callers get 404 for a hidden process or document type; authenticated callers see them", async () => {
		expect((await rejection(call("getProcess", { identifier: hiddenProcess.identifier }, anonymous))).code).toBe(
			404,
		);
		expect(
			(await rejection(call("getDocumentType", { identifier: hiddenDocumentType.identifier }, anonymous))).code,
		).toBe(404);
		expect(
			await call("getProcess", { identifier: hiddenProcess.identifier }, { meta: { user: SERVICE_PROVIDER } }),
		).toMatchObject({ visible: false });
		expect(
			await call(
				"getDocumentType",
				{ identifier: hiddenDocumentType.identifier },
				{ meta: { user: SERVICE_PROVIDER } },
			),
		).toMatchObject({ visible: false });
	});

	test("anonymous finds and the stream leave hidden records out and count without them", async () => {
		const everything: PageRequest = { page: 0, size: 1000, sort: [] };
		const anonymousPage = await call<Page<Process>>("findProcesses", { pageRequest: everything }, anonymous);
		const authenticatedPage = await call<Page<Process>>(
			"findProcesses",
			{ pageRequest: everything },
			{ meta: { user: SERVICE_PROVIDER } },
		);
		expect(anonymousPage.content.every((process) => process.visible)).toBe(true);
		expect(authenticatedPage.totalElements - anonymousPage.totalElements).toBe(
			authenticatedPage.content.filter((process) => !process.visible).length,
		);
		expect(authenticatedPage.content.some((process) => process.identifier === hiddenProcess.identifier)).toBe(true);
		const stream = await call<Process[]>("streamProcesses", {}, anonymous);
		expect(stream.map((process) => process.identifier)).not.toContain(hiddenProcess.identifier);
		expect(stream).toHaveLength(anonymousPage.totalElements);
		const documentTypes = await call<Page<DocumentType>>(
			"findDocumentTypes",
			{ pageRequest: everything },
			anonymous,
		);
		expect(documentTypes.content.map((documentType) => documentType.identifier)).not.toContain(
			hiddenDocumentType.identifier,
		);
	});

	test("anonymous callers do not see hidden records nested in visible ones", async () => {
		const seenAnonymously = await call<Process>("getProcess", { identifier: visibleProcess.identifier }, anonymous);
		expect(seenAnonymously.documentTypes).toEqual([]);
		expect(seenAnonymously.dependencies).toEqual([]);
		const seenByProvider = await call<Process>(
			"getProcess",
			{ identifier: visibleProcess.identifier },
			{ meta: { user: SERVICE_PROVIDER } },
		);
		expect(seenByProvider.documentTypes.map((documentType) => documentType.identifier)).toEqual([
			hiddenDocumentType.identifier,
		]);
		expect(seenByProvider.dependencies.map((dependency) => dependency.identifier)).toEqual([
			hiddenProcess.identifier,
		]);
		const documentType = await call<DocumentType>(
			"getDocumentType",
			{ identifier: hiddenDocumentType.identifier },
			{ meta: { user: SERVICE_PROVIDER } },
		);
		expect(documentType.processes.map((process) => process.identifier).sort()).toEqual(
			[visibleProcess.identifier, hiddenProcess.identifier].sort(),
		);
	});
});

describe("finds", () => {
	test("the page envelope follows the request: page, size, sort flags, offset", async () => {
		const page = await call<Page<Process>>("findProcesses", {
			pageRequest: { page: 1, size: 2, sort: [{ field: "title", direction: "asc" }] },
		});
		expect(page).toMatchObject({
			number: 1,
			size: 2,
			numberOfElements: 2,
			first: false,
			sort: { sorted: true, unsorted: false, empty: false },
		});
		expect(page.pageable).toEqual({
			sort: { sorted: true, unsorted: false, empty: false },
			pageNumber: 1,
			pageSize: 2,
			offset: 2,
			paged: true,
			unpaged: false,
		});
		expect(page.totalPages).toBe(Math.ceil(page.totalElements / 2));
	});

	test("processes sort by title descending, case-insensitively, and pages never overlap", async () => {
		const sort = [{ field: "title", direction: "desc" }];
		const all = await call<Page<Process>>("findProcesses", { pageRequest: { page: 0, size: 1000, sort } });
		const titles = all.content.map((process) => (process.title ?? "").toLowerCase());
		expect(titles).toEqual([...titles].sort().reverse());
		const paged: string[] = [];
		for (let page = 0; page * 3 < all.totalElements; page++) {
			paged.push(
				...(await call<Page<Process>>("findProcesses", { pageRequest: { page, size: 3, sort } })).content.map(
					(process) => process.identifier,
				),
			);
		}
		expect(paged).toEqual(all.content.map((process) => process.identifier));
	});

	test("document types sort by qualifiedIdentifier; without a pageRequest the first page of 10 is answered", async () => {
		const page = await call<Page<DocumentType>>("findDocumentTypes", {
			pageRequest: { ...PAGE, size: 1000, sort: [{ field: "qualifiedIdentifier", direction: "asc" }] },
		});
		expect(page.sort.sorted).toBe(true);
		const defaulted = await call<Page<DocumentType>>("findDocumentTypes", {});
		expect(defaulted).toMatchObject({ number: 0, size: 10, sort: { sorted: false } });
	});

	test("a sort field that is not a store field of the resource is refused", async () => {
		const error = await rejection(
			call("findProcesses", { pageRequest: { page: 0, size: 10, sort: [{ field: "alias", direction: "asc" }] } }),
		);
		expect(error).toBeInstanceOf(Errors.ValidationError);
	});
});

describe("search (query)", () => {
	const everything: PageRequest = { page: 0, size: 1000, sort: [] };
	let freight: Process;
	let hiddenFreight: Process;
	let literal: Process;
	let waybill: DocumentType;

	beforeAll(async () => {
		freight = await addProcess({
			domain: "Logistics",
			title: "Freight Forwarding Instruction",
			qualifiedIdentifier: "search::Freight:1.0",
		});
		hiddenFreight = await addProcess({ domain: "Logistics", title: "Freight hidden booking", visible: false });
		literal = await addProcess({
			domain: "Logistics",
			title: "Rate (.*) plan",
			qualifiedIdentifier: "search::(.*)+[a-z]",
		});
		waybill = await addDocumentType({
			title: "Electronic Waybill Notice",
			qualifiedIdentifier: "search::waybill##2.1",
		});
	});

	const processIds = async (query: string, options: object = asAdmin) =>
		(await call<Page<Process>>("findProcesses", { pageRequest: everything, query }, options)).content.map(
			(process) => process.identifier,
		);

	test("words (split on + and spaces) must each start a word of the title, case-insensitively, on the page, its count and the stream", async () => {
		expect(await processIds("FREIGHT forw")).toEqual([freight.identifier]);
		expect(await processIds("freight+instr")).toEqual([freight.identifier]);
		expect(
			(await call<Page<Process>>("findProcesses", { pageRequest: everything, query: "freight forw" }))
				.totalElements,
		).toBe(1);
		expect(await processIds("reight")).toEqual([]);
		expect(await processIds("freight nothing")).toEqual([]);
		expect(
			(await call<Process[]>("streamProcesses", { query: "forwarding" })).map((process) => process.identifier),
		).toEqual([freight.identifier]);
		const documentTypes = await call<Page<DocumentType>>("findDocumentTypes", {
			pageRequest: everything,
			query: "waybill elec",
		});
		expect(documentTypes.content.map((documentType) => documentType.identifier)).toEqual([waybill.identifier]);
	});

	test("a value equal to a qualified identifier, in any case, matches that record", async () => {
		expect(await processIds("SEARCH::freight:1.0")).toEqual([freight.identifier]);
		const documentTypes = await call<Page<DocumentType>>("findDocumentTypes", {
			pageRequest: everything,
			query: "search::WAYBILL##2.1",
		});
		expect(documentTypes.content.map((documentType) => documentType.identifier)).toEqual([waybill.identifier]);
	});

	test("pattern and operator characters are data: they match literally or not at all", async () => {
		expect(await processIds(".*")).toEqual([]);
		expect(await processIds("%")).toEqual([]);
		expect(await processIds('"freight" OR rate')).toEqual([]);
		expect(await processIds("search::(.*)+[a-z]")).toEqual([literal.identifier]);
		expect(await processIds("search::(.*)+[a-Z]")).toEqual([literal.identifier]);
		expect(await processIds("search::.*")).toEqual([]);
	});

	test("anonymous callers never find hidden records, by words or by qualified identifier", async () => {
		expect(await processIds("freight", { meta: { user: SERVICE_PROVIDER } })).toEqual(
			expect.arrayContaining([freight.identifier, hiddenFreight.identifier]),
		);
		expect(await processIds("freight", anonymous)).toEqual([freight.identifier]);
		expect(
			(await call<Process[]>("streamProcesses", { query: "freight" }, anonymous)).map(
				(process) => process.identifier,
			),
		).toEqual([freight.identifier]);
		const hiddenType = await addDocumentType({
			title: "Hidden manifest",
			qualifiedIdentifier: "search::manifest",
			visible: false,
		});
		expect(
			(
				await call<Page<DocumentType>>(
					"findDocumentTypes",
					{ pageRequest: everything, query: "search::manifest" },
					anonymous,
				)
			).totalElements,
		).toBe(0);
		expect(
			(
				await call<Page<DocumentType>>(
					"findDocumentTypes",
					{ pageRequest: everything, query: "manifest" },
					anonymous,
				)
			).totalElements,
		).toBe(0);
		expect(
			(
				await call<Page<DocumentType>>("findDocumentTypes", { pageRequest: everything, query: "manifest" })
			).content.map((d) => d.identifier),
		).toEqual([hiddenType.identifier]);
	});

	test("a blank query finds everything; an over-long one is refused by the params schema", async () => {
		const all = await call<Page<Process>>("findProcesses", { pageRequest: everything });
		expect(
			(await call<Page<Process>>("findProcesses", { pageRequest: everything, query: "  " })).totalElements,
		).toBe(all.totalElements);
		expect(
			await rejection(call("findProcesses", { pageRequest: everything, query: "x".repeat(1001) })),
		).toBeInstanceOf(Errors.ValidationError);
		expect(await rejection(call("findDocumentTypes", { query: "x".repeat(1001) }))).toBeInstanceOf(
			Errors.ValidationError,
		);
	});
});

describe("seed import", () => {
	const P1 = "55555555-0000-4000-8000-0000000000a1";
	const P2 = "55555555-0000-4000-8000-0000000000a2";
	const D1 = "66666666-0000-4000-8000-0000000000a1";
	const C1 = "44444444-0000-4000-8000-0000000000a1";
	const seed = {
		capabilities: [{ identifier: C1, title: "Seeded capability" }],
		processes: [
			{
				identifier: P1,
				domain: "Seed",
				title: "Seed billing",
				qualifiedIdentifier: "cenbii-procid-ubl::seed-billing",
				capabilities: ref(C1),
			},
			{ identifier: P2, domain: "Seed", title: "Seed response", dependencies: ref(P1), documentTypes: ref(D1) },
		],
		documentTypes: [{ identifier: D1, title: "Seed invoice", processes: ref(P1) }],
	};

	test("links stated on either side of the file are both stored, and a second import changes nothing", async () => {
		const first = await call("importSeed", seed);
		expect(first).toEqual({
			capabilities: { created: 1, updated: 0, unchanged: 0 },
			processes: { created: 2, updated: 0, unchanged: 0 },
			documentTypes: { created: 1, updated: 0, unchanged: 0 },
		});
		const documentType = await call<DocumentType>("getDocumentType", { identifier: D1 });
		expect(documentType.processes.map((process) => process.identifier).sort()).toEqual([P1, P2]);
		const response = await call<Process>("getProcess", { identifier: P2 });
		expect(response.dependencies.map((process) => process.identifier)).toEqual([P1]);
		const audits = await auditOutbox().count();
		changes.length = 0;
		const second = await call("importSeed", seed);
		expect(second).toEqual({
			capabilities: { created: 0, updated: 0, unchanged: 1 },
			processes: { created: 0, updated: 0, unchanged: 2 },
			documentTypes: { created: 0, updated: 0, unchanged: 1 },
		});
		expect(await auditOutbox().count()).toBe(audits);
		expect(changes).toEqual([]);
	});

	test("a changed seed record is updated in place, by identifier", async () => {
		await call("importSeed", seed);
		const changed = {
			...seed,
			processes: [{ ...seed.processes[0], title: "Seed billing, renamed" }, seed.processes[1]],
		};
		expect(await call("importSeed", changed)).toMatchObject({
			processes: { created: 0, updated: 1, unchanged: 1 },
		});
		expect(await call("getProcess", { identifier: P1 })).toMatchObject({ title: "Seed billing, renamed" });
	});

	test("a bad section is refused whole with every reason, and nothing is written", async () => {
		const count = (await call<Page<Process>>("findProcesses", { pageRequest: PAGE })).totalElements;
		const error = await rejection(
			call("importSeed", {
				processes: [
					{ identifier: "55555555-0000-4000-8000-0000000000b1", domain: "Fine" },
					{ identifier: "not-a-uuid", title: "No domain", dependencies: ref(UNKNOWN) },
				],
			}),
		);
		expect(error.code).toBe(400);
		expect((error.data as { reasons: { path: string }[] }).reasons.map((reason) => reason.path)).toEqual([
			"processes[1].identifier",
			"processes[1].domain",
			"processes[1].dependencies[0].identifier",
		]);
		expect((await call<Page<Process>>("findProcesses", { pageRequest: PAGE })).totalElements).toBe(count);
	});
});

describe("read cache", () => {
	let cached: ServiceBroker;
	beforeAll(async () => {
		cached = new ServiceBroker({ logger: false, cacher: "Memory", nodeID: "cached" });
		cached.createService(CatalogService);
		cached.createService(participantsStub());
		await cached.start();
	});
	afterAll(() => cached.stop());

	test("anonymous and authenticated answers are cached apart, and a change drops them", async () => {
		const hidden = await cached.call<Process, object>(
			"catalog.addProcess",
			{ body: { domain: "D", title: "Cached hidden", visible: false } },
			asAdmin,
		);
		const count = async (options: object) =>
			(await cached.call<Process[], object>("catalog.streamProcesses", {}, options)).length;
		expect(await count(anonymous)).toBe(0);
		expect(await count({ meta: { user: SERVICE_PROVIDER } })).toBe(1);
		expect(await count(anonymous)).toBe(0);
		await cached.call(
			"catalog.updateProcess",
			{ identifier: hidden.identifier, body: { domain: "D", title: "Now visible", visible: true } },
			asAdmin,
		);
		expect(await count(anonymous)).toBe(1);
		expect(
			await cached.call<Process, object>("catalog.getProcess", { identifier: hidden.identifier }, anonymous),
		).toMatchObject({ title: "Now visible" });
	});

	test("answers are cached per query: a second query is not served the first one's answer", async () => {
		await cached.call("catalog.addProcess", { body: { domain: "D", title: "Cached parcel" } }, asAdmin);
		const titles = async (query: string) =>
			(await cached.call<Process[], object>("catalog.streamProcesses", { query }, anonymous)).map(
				(process) => process.title,
			);
		expect(await titles("parcel")).toEqual(["Cached parcel"]);
		expect(await titles("now")).toEqual(["Now visible"]);
		expect(await titles("parcel")).toEqual(["Cached parcel"]);
	});
});
