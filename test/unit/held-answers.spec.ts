/**
 * The gateway's held answers (services/api/held-answers.ts, services/api/answer-body.ts): a held
 * answer's bytes are the full path's JSON, a fill that overlapped a notice about its
 * key is not kept, each notice forgets what it touches and nothing else, and the holding is bounded.
 */
import fc from "fast-check";
import { heldBodyOf } from "../../services/api/answer-body";
import { entityTagOf } from "../../src/contract/entity-tags";
import { HeldAnswers, type HeldAnswer } from "../../services/api/held-answers";
import type { Caller } from "../../src/contract/model";
import { parsePathValues } from "../../src/contract/negotiation";
import { OPERATIONS } from "../../src/contract/operations";

/** A held body of one part. */
const body = (text: string) => ({
	bytes: Buffer.from(text),
	length: String(text.length),
	tag: undefined,
	head: undefined,
	headType: "",
});

const lookup = OPERATIONS.find((operation) => operation.id === "findOrganizationProcesses")!;
const read = OPERATIONS.find((operation) => operation.id === "getParticipantByQualifiedIdentifier")!;
const sp: Caller = {
	username: "sp1",
	role: "SERVICE_PROVIDER",
	serviceProvider: "11111111-0000-4000-8000-000000000001",
};
const ORGANIZATION = "iso6523-actorid-upis::0192:991825827";

describe("answer bodies", () => {
	test("a held body is the answer's UTF-8 bytes with their length; one lookup answer's body is shared, a tagged one is not", () => {
		fc.assert(
			fc.property(fc.jsonValue(), (value) => {
				const held = heldBodyOf(JSON.stringify(value), true);
				expect(held.bytes.toString("utf8")).toBe(JSON.stringify(value));
				expect(held.length).toBe(String(Buffer.byteLength(JSON.stringify(value))));
				expect(held.tag).toBe(entityTagOf(JSON.stringify(value)));
			}),
			{ numRuns: 200 },
		);
		const lookup = [{ identifier: "p".repeat(200), title: "Fakturering æøå" }];
		const first = heldBodyOf(JSON.stringify(JSON.parse(JSON.stringify(lookup))), false);
		expect(heldBodyOf(JSON.stringify(JSON.parse(JSON.stringify(lookup))), false)).toBe(first);
		expect(first.tag).toBeUndefined();
		const tagged = JSON.stringify(lookup);
		expect(heldBodyOf(tagged, true)).not.toBe(heldBodyOf(tagged, true));
	});
});

describe("held answers", () => {
	test("the lookup is held per visibility and organization, a participant read per provider and organization", () => {
		const held = new HeldAnswers({ lookups: 10, participantReads: 10 });
		expect(held.slotOf(lookup, null, parsePathValues({ qualifiedIdentifier: ORGANIZATION }))?.key).not.toBe(
			held.slotOf(lookup, sp, parsePathValues({ qualifiedIdentifier: ORGANIZATION }))?.key,
		);
		expect(
			held.slotOf(lookup, null, parsePathValues({ qualifiedIdentifier: ORGANIZATION.toUpperCase() }))?.key,
		).toBe(held.slotOf(lookup, null, parsePathValues({ qualifiedIdentifier: ORGANIZATION }))?.key);
		expect(held.slotOf(read, sp, parsePathValues({ participant: ORGANIZATION }))?.kind).toBe("participantRead");
		expect(
			held.slotOf(read, { username: "admin", role: "ADMIN" }, parsePathValues({ participant: ORGANIZATION })),
		).toBeNull();
		expect(
			held.slotOf(
				OPERATIONS.find((operation) => operation.id === "findProcesses")!,
				null,
				{},
			),
		).toBeNull();
	});

	test("a fill that overlapped a notice about its key is not kept; one after it is", () => {
		const held = new HeldAnswers({ lookups: 10, participantReads: 10 });
		const slot = held.slotOf(lookup, null, parsePathValues({ qualifiedIdentifier: ORGANIZATION }))!;
		const token = held.begin(slot);
		held.lookupChanged("0192:991825827");
		held.settle(slot, token, body("stale"));
		expect(held.get(slot)).toBeUndefined();
		held.settle(slot, held.begin(slot), body("fresh"));
		expect(held.get(slot)).toEqual(body("fresh"));
	});

	test("each notice forgets what it touches and nothing else", () => {
		const held = new HeldAnswers({ lookups: 10, participantReads: 10 });
		const anonymous = held.slotOf(lookup, null, parsePathValues({ qualifiedIdentifier: ORGANIZATION }))!;
		const other = held.slotOf(
			lookup,
			null,
			parsePathValues({ qualifiedIdentifier: "iso6523-actorid-upis::0192:923609016" }),
		)!;
		const mine = held.slotOf(read, sp, parsePathValues({ participant: ORGANIZATION }))!;
		const fill = () => [anonymous, other, mine].forEach((slot) => held.settle(slot, held.begin(slot), body("x")));
		fill();
		held.lookupChanged("0192:991825827");
		expect([held.get(anonymous), held.get(other), held.get(mine)].map(Boolean)).toEqual([false, true, true]);
		fill();
		held.participantChanged("0192:991825827", ["11111111-0000-4000-8000-000000000002"]);
		expect(held.get(mine)).toBeDefined();
		held.participantChanged("0192:991825827", [sp.serviceProvider as string]);
		expect([held.get(anonymous), held.get(mine)].map(Boolean)).toEqual([true, false]);
		fill();
		held.accountsChanged();
		expect([held.get(anonymous), held.get(mine)].map(Boolean)).toEqual([true, false]);
		fill();
		held.catalogChanged();
		expect([held.get(anonymous), held.get(other), held.get(mine)].map(Boolean)).toEqual([false, false, false]);
	});

	test("lookup keys never collide across visibilities, ICDs and identifier lengths, and a change forgets exactly its organization", () => {
		const admin: Caller = { username: "admin", role: "ADMIN" };
		const organizations = fc.oneof(
			fc.stringMatching(/^[0-9]{9}$/).map((number) => `0192:${number}`),
			fc.stringMatching(/^[0-9]{8,10}$/).map((number) => `0192:${number}`),
			fc.stringMatching(/^[0-9]{9}$/).map((number) => `0007:${number}`),
			fc.stringMatching(/^[0-9a-z]{1,12}$/).map((identifier) => `9908:${identifier}`),
		);
		fc.assert(
			fc.property(fc.uniqueArray(organizations, { minLength: 2, maxLength: 8 }), (keys) => {
				const held = new HeldAnswers({ lookups: 100, participantReads: 10 });
				const slots = keys.flatMap((key) =>
					[null, admin].map((caller) =>
						held.slotOf(
							lookup,
							caller,
							parsePathValues({ qualifiedIdentifier: `iso6523-actorid-upis::${key}` }),
						)!,
					),
				);
				expect(new Set(slots.map((slot) => slot.key)).size).toBe(slots.length);
				slots.forEach((slot, index) => held.settle(slot, held.begin(slot), body(String(index))));
				held.lookupChanged(keys[0]);
				const textOf = (answer: HeldAnswer | undefined) =>
					answer && "bytes" in answer ? answer.bytes.toString() : null;
				expect(slots.map((slot) => textOf(held.get(slot)))).toEqual(
					slots.map((_, index) => (index < 2 ? null : String(index))),
				);
			}),
			{ numRuns: 300 },
		);
	});

	test("is bounded: the oldest filled goes first", () => {
		const held = new HeldAnswers({ lookups: 2, participantReads: 2 });
		const slots = ["991825827", "923609016", "986252932"].map((number) =>
			held.slotOf(
				lookup,
				null,
				parsePathValues({ qualifiedIdentifier: `iso6523-actorid-upis::0192:${number}` }),
			)!,
		);
		for (const slot of slots) held.settle(slot, held.begin(slot), body("x"));
		expect(slots.map((slot) => Boolean(held.get(slot)))).toEqual([false, true, true]);
	});

	test("participant reads share one bound across providers: the largest provider's oldest read goes first", () => {
		const held = new HeldAnswers({ lookups: 10, participantReads: 3 });
		const provider = (serviceProvider: string): Caller => ({
			username: serviceProvider,
			role: "SERVICE_PROVIDER",
			serviceProvider,
		});
		const readOf = (caller: Caller, number: string) =>
			held.slotOf(read, caller, parsePathValues({ participant: `iso6523-actorid-upis::0192:${number}` }))!;
		const [a, b] = [
			provider("AAAAAAAA-0000-4000-8000-000000000001"),
			provider("bbbbbbbb-0000-4000-8000-000000000002"),
		];
		const slots = [readOf(a, "991825827"), readOf(a, "923609016"), readOf(b, "991825827")];
		for (const slot of slots) held.settle(slot, held.begin(slot), body("x"));
		expect(held.size.participantReads).toBe(3);
		const later = readOf(b, "986252932");
		held.settle(later, held.begin(later), body("y"));
		expect([...slots, later].map((slot) => Boolean(held.get(slot)))).toEqual([false, true, true, true]);
		expect(held.size.participantReads).toBe(3);
		// A provider is known by its identifier in any case; a change forgets only the named provider's read.
		held.participantChanged("0192:991825827", ["aaaaaaaa-0000-4000-8000-000000000001"]);
		expect(Boolean(held.get(readOf(b, "991825827")))).toBe(true);
		held.participantChanged("0192:923609016", ["AAAAAAAA-0000-4000-8000-000000000001"]);
		expect(Boolean(held.get(slots[1]))).toBe(false);
		expect(held.size.participantReads).toBe(2);
	});
});
