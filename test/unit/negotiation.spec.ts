import {
	checkContentType,
	groupOperations,
	parsePathValues,
	pathParamsToActionParams,
	selectByAccept,
	selectByPathForm,
} from "../../src/contract/negotiation";
import { CONTRACT_OPERATIONS, OPERATIONS } from "../../src/contract/operations";

/** One path value, parsed as the gateway parses a route's. */
const parsePathValue = (text: string) => parsePathValues({ value: text }).value;

/** The operation a request addresses, as the gateway's authorization hook chooses it. */
const chooseOperation = (
	group: { operations: Parameters<typeof selectByPathForm>[0] },
	value: Parameters<typeof selectByPathForm>[1],
	accept?: string,
) => selectByAccept(selectByPathForm(group.operations, value), accept);

const group = (method: string, path: string) => {
	const found = groupOperations(OPERATIONS).find(
		(candidate) => candidate.method === method && candidate.path === path,
	);
	if (!found) throw new Error(`no group ${method} ${path}`);
	return found.operations;
};

describe("content negotiation (decisions §2)", () => {
	const participantsGet = group("GET", "/participants");

	test("the stream media type selects the array form, the find media type the paged form", () => {
		expect(
			selectByAccept(participantsGet, "application/vnd.registry.participants.stream.v1+json").operation.id,
		).toBe("streamParticipants");
		expect(
			selectByAccept(participantsGet, "application/vnd.registry.participants.find.v1+json;charset=UTF-8")
				.operation.id,
		).toBe("findParticipants");
	});

	test.each([undefined, "", "*/*", "application/*", "application/json", "application/json;charset=UTF-8"])(
		"Accept %p selects the paged default",
		(accept) => {
			expect(selectByAccept(participantsGet, accept).operation.id).toBe("findParticipants");
		},
	);

	test("parameters and q-values do not prevent a match, and the highest quality wins", () => {
		const accept =
			"application/vnd.registry.participants.find.v1+json;q=0.5, application/vnd.registry.participants.stream.v1+json;q=0.9";
		expect(selectByAccept(participantsGet, accept).operation.id).toBe("streamParticipants");
	});

	test("an Accept naming another operation's media type is 406", () => {
		expect(() => selectByAccept(participantsGet, "application/vnd.registry.processes.find.v1+json")).toThrow(
			expect.objectContaining({ code: 406, type: "HttpMediaTypeNotAcceptableException" }),
		);
		expect(() => selectByAccept(participantsGet, "text/html")).toThrow(expect.objectContaining({ code: 406 }));
	});

	test("the organization lookup accepts both spellings", () => {
		const lookup = group("GET", "/organizations/:qualifiedIdentifier/processes");
		expect(selectByAccept(lookup, "application/vnd.registry.organizations.processes.v1+json").operation.id).toBe(
			"findOrganizationProcesses",
		);
		expect(selectByAccept(lookup, "application/vnd.registry.organization.processes.v1+json").operation.id).toBe(
			"findOrganizationProcesses",
		);
	});

	test("the path form and the Accept choose the operation, each request on its own", () => {
		const participants = groupOperations(OPERATIONS).find(
			(candidate) => candidate.method === "GET" && candidate.path === "/participants/:participant",
		)!;
		const byIdentifier = parsePathValue("iso6523-actorid-upis::0192:991825827");
		const byUuid = parsePathValue("3f2504e0-4f89-41d3-9a0c-0305e82c3301");
		const stream = "application/vnd.registry.participants.stream.v1+json";
		const choices = [
			[byIdentifier, undefined],
			[byIdentifier, "application/json"],
			[byUuid, "application/json"],
			[byIdentifier, undefined],
			[byUuid, undefined],
		] as const;
		const chosen = choices.map(([value, accept]) => chooseOperation(participants, value, accept).operation.id);
		expect(chosen).toEqual(
			choices.map(
				([value, accept]) =>
					selectByAccept(selectByPathForm(participants.operations, value), accept).operation.id,
			),
		);
		expect(new Set(chosen).size).toBe(2);
		expect(() => chooseOperation(participants, byIdentifier, stream)).toThrow(
			expect.objectContaining({ code: 406 }),
		);
		expect(chooseOperation(participants, byIdentifier, "*/*").operation.id).toBe(chosen[0]);
	});

	test("Content-Type must be the operation's media type or application/json, else 415", () => {
		const add = OPERATIONS.find((operation) => operation.id === "addProcess")!;
		expect(() =>
			checkContentType(add, "application/vnd.registry.processes.add.v1+json;charset=UTF-8"),
		).not.toThrow();
		expect(() => checkContentType(add, "application/json")).not.toThrow();
		expect(() => checkContentType(add, "text/plain")).toThrow(expect.objectContaining({ code: 415 }));
		expect(() => checkContentType(add, undefined)).toThrow(expect.objectContaining({ code: 415 }));
		expect(() => checkContentType(add, "application/vnd.registry.processes.update.v1+json")).toThrow(
			expect.objectContaining({ code: 415 }),
		);
	});
});

describe("participant path forms (spec rule 2, decisions §5)", () => {
	const participantGet = group("GET", "/participants/:participant");

	test("a qualified identifier selects the qualified row, a UUID the UUID row", () => {
		expect(
			selectByPathForm(participantGet, parsePathValue("iso6523-actorid-upis::0192:991825827")).map((op) => op.id),
		).toEqual(["getParticipantByQualifiedIdentifier"]);
		expect(
			selectByPathForm(participantGet, parsePathValue("6f1c1a4e-2f0b-4c55-9a43-1b2c3d4e5f60")).map((op) => op.id),
		).toEqual(["getParticipant"]);
	});

	test("the scheme is case-insensitive", () => {
		expect(selectByPathForm(participantGet, parsePathValue("ISO6523-ACTORID-UPIS::0192:991825827"))).toHaveLength(
			1,
		);
	});

	test.each(["abc", "iso6523-actorid-upis::12345:1", "other::0192:1", "iso6523-actorid-upis::0192:", "1234"])(
		"%p is 400",
		(value) => {
			expect(() => selectByPathForm(participantGet, parsePathValue(value))).toThrow(
				expect.objectContaining({ code: 400 }),
			);
		},
	);

	test("transfer takes only a qualified identifier", () => {
		const transfer = group("PUT", "/participants/:participant/transfer/:serviceProviderIdentifier");
		expect(() => selectByPathForm(transfer, parsePathValue("6f1c1a4e-2f0b-4c55-9a43-1b2c3d4e5f60"))).toThrow(
			expect.objectContaining({ code: 400 }),
		);
	});

	test("UUID path parameters are checked and lower-cased", () => {
		const get = OPERATIONS.find((operation) => operation.id === "getProcess")!;
		expect(
			pathParamsToActionParams(get, parsePathValues({ identifier: "6F1C1A4E-2F0B-4C55-9A43-1B2C3D4E5F60" })),
		).toEqual({ identifier: "6f1c1a4e-2f0b-4c55-9a43-1b2c3d4e5f60" });
		expect(() => pathParamsToActionParams(get, parsePathValues({ identifier: "not-a-uuid" }))).toThrow(
			expect.objectContaining({ code: 400, type: "MethodArgumentTypeMismatchException" }),
		);
	});
});

describe("the operations table", () => {
	test("holds the 25 operations of the contract, and every id is unique", () => {
		expect(CONTRACT_OPERATIONS).toHaveLength(25);
		expect(new Set(OPERATIONS.map((operation) => operation.id)).size).toBe(OPERATIONS.length);
	});

	test("operations sharing a method and path differ by media type or path form, and one is the default", () => {
		for (const { operations } of groupOperations(OPERATIONS)) {
			if (operations.length < 2) continue;
			const forms = new Set(
				operations.map((operation) => `${operation.mediaTypes[0]}|${operation.pathForm ?? ""}`),
			);
			expect(forms.size).toBe(operations.length);
			if (!operations[0].pathForm) expect(operations.filter((operation) => operation.isDefault)).toHaveLength(1);
		}
	});
});

describe("the answer's media type", () => {
	const lookup = OPERATIONS.find((operation) => operation.id === "findOrganizationProcesses")!;

	const mediaTypeFor = (accept: string | undefined) => selectByAccept([lookup], accept).mediaType;

	test("echoes the spelling the Accept asked for, and the first spelling otherwise", () => {
		expect(mediaTypeFor("application/vnd.registry.organization.processes.v1+json")).toBe(
			"application/vnd.registry.organization.processes.v1+json",
		);
		expect(mediaTypeFor("application/vnd.registry.organizations.processes.v1+json;charset=UTF-8")).toBe(
			"application/vnd.registry.organizations.processes.v1+json",
		);
		expect(mediaTypeFor("*/*")).toBe("application/vnd.registry.organizations.processes.v1+json");
		expect(mediaTypeFor(undefined)).toBe("application/vnd.registry.organizations.processes.v1+json");
		expect(selectByAccept([lookup], "*/*").contentType).toBe(
			"application/vnd.registry.organizations.processes.v1+json;charset=UTF-8",
		);
	});
});
