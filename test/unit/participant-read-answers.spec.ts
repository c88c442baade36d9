/**
 * The participants service's held read answers (services/participants/read-answers.ts): the
 * bytes it gives are exactly JSON.stringify of the answer it was given, whatever the
 * answer's optional parts; nothing read across a write or a clear is kept; the oldest go first.
 */
import { participantAnswer } from "../../services/participants/answers";
import type { ParticipantDoc } from "../../services/participants/model";
import { ReadAnswers } from "../../services/participants/read-answers";
import type { Participant, Process, ServiceProvider } from "../../src/contract/model";

const SP = "11111111-0000-4000-8000-000000000001";
const provider: ServiceProvider = { identifier: SP, title: "Nordlys E-faktura AS" } as ServiceProvider;
const billing = { identifier: "55555555-0000-4000-8000-000000000001", title: "Peppol BIS Billing 3.0", documentTypes: [{ identifier: "d", title: "Faktura «æøå» \u2028" }] } as unknown as Process;

function doc(organizationIdentifier: string, extra: Partial<ParticipantDoc> = {}): ParticipantDoc {
	return {
		identifier: `77777777-0000-4000-8000-${organizationIdentifier.padStart(12, "0")}`,
		serviceProvider: SP,
		icd: "0192",
		organizationIdentifier,
		organizationKey: `0192:${organizationIdentifier}`,
		qualifiedIdentifier: `iso6523-actorid-upis::0192:${organizationIdentifier}`,
		name: "Nordlys Regnskap AS",
		registrationDate: "2026-01-02T03:04:05.000Z",
		lastModificationDate: "2026-02-03T04:05:06.000Z",
		deleteDate: null,
		contact: { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" },
		processIds: [billing.identifier],
		version: 1,
		...extra,
	} as unknown as ParticipantDoc;
}

const answers: Array<[string, Participant]> = [
	["provider and processes", participantAnswer(doc("991825827"), provider, [billing])],
	["no processes listed", participantAnswer(doc("991825827"), provider, [])],
	["no name, a delete date", participantAnswer(doc("991825827", { name: null, deleteDate: "2027-01-01" } as Partial<ParticipantDoc>), provider, [billing])],
	["no provider resolved", participantAnswer(doc("991825827"), undefined, [billing])],
	["neither provider nor processes", participantAnswer(doc("991825827"))],
	["quotes and non-ASCII in its own fields", participantAnswer(doc("991825827", { name: 'Fjord "Ø" Bygg \u00e6\u00f8\u00e5 AS' } as Partial<ParticipantDoc>), provider, [billing])],
];

describe("ReadAnswers", () => {
	test.each(answers)("gives exactly the answer's JSON: %s", (_name, answer) => {
		const held = new ReadAnswers(10);
		held.remember(held.generation, SP, "0192:991825827", answer);
		expect(held.bytes(SP, "0192:991825827")?.toString("utf8")).toBe(JSON.stringify(answer));
	});

	test("is keyed by provider and organization", () => {
		const held = new ReadAnswers(10);
		held.remember(held.generation, SP, "0192:991825827", answers[0][1]);
		expect(held.bytes("11111111-0000-4000-8000-000000000002", "0192:991825827")).toBeUndefined();
		expect(held.bytes(SP, "0192:986252932")).toBeUndefined();
	});

	test("does not keep an answer read across a write or a clear", () => {
		const held = new ReadAnswers(10);
		const beforeWrite = held.generation;
		held.forget(SP, "0192:986252932"); // any participant's write
		held.remember(beforeWrite, SP, "0192:991825827", answers[0][1]);
		expect(held.bytes(SP, "0192:991825827")).toBeUndefined();
		const beforeClear = held.generation;
		held.clear();
		held.remember(beforeClear, SP, "0192:991825827", answers[0][1]);
		expect(held.size).toBe(0);
	});

	test("forget and clear drop what is held", () => {
		const held = new ReadAnswers(10);
		held.remember(held.generation, SP, "0192:991825827", answers[0][1]);
		held.remember(held.generation, SP, "0192:986252932", answers[1][1]);
		held.forget(SP, "0192:991825827");
		expect(held.bytes(SP, "0192:991825827")).toBeUndefined();
		expect(held.bytes(SP, "0192:986252932")).toBeDefined();
		held.clear();
		expect(held.size).toBe(0);
	});

	test("holds at most maxEntries, dropping the oldest first; 0 holds none", () => {
		const held = new ReadAnswers(2);
		for (const organization of ["0192:1", "0192:2", "0192:3"]) held.remember(held.generation, SP, organization, answers[0][1]);
		expect(held.size).toBe(2);
		expect(held.bytes(SP, "0192:1")).toBeUndefined();
		expect(held.bytes(SP, "0192:3")).toBeDefined();
		expect(held.holding).toBe(true);
		const none = new ReadAnswers(0);
		none.remember(none.generation, SP, "0192:1", answers[0][1]);
		expect(none.size).toBe(0);
		expect(none.holding).toBe(false); // the gateway does not try its short path then
	});
});
