import {
	isUuid,
	isValidNorwegianOrganizationNumber,
	organizationIdentifierFault,
	parseParticipantIdentifier,
} from "../../src/contract/identifiers";
import { LOOK_ALIKES, PLAIN_GLN } from "../support/look-alikes";

describe("participant qualified identifiers (decisions §5)", () => {
	test("splits scheme, ICD and organization identifier, folding case for the key", () => {
		expect(parseParticipantIdentifier("iso6523-actorid-upis::0088:ABC123")).toEqual({
			icd: "0088",
			organizationIdentifier: "ABC123",
			organizationKey: "0088:abc123",
		});
	});

	test.each([
		"0192:991825827",
		"iso6523-actorid-upis:0192:991825827",
		"iso6523-actorid-upis::01920:1",
		`iso6523-actorid-upis::0192:${"1".repeat(36)}`,
	])("%p is not a participant identifier", (value) => {
		expect(parseParticipantIdentifier(value)).toBeNull();
	});
});

describe("organization identifiers are printable US-ASCII for every ICD (decisions §5)", () => {
	test("a plain GLN (ICD 0088) is valid and parses", () => {
		expect(organizationIdentifierFault("0088", PLAIN_GLN)).toBeNull();
		expect(parseParticipantIdentifier(`iso6523-actorid-upis::0088:${PLAIN_GLN}`)?.organizationIdentifier).toBe(
			PLAIN_GLN,
		);
	});

	test.each(LOOK_ALIKES)("%s is a Pattern fault and no qualified identifier", (_name, lookAlike) => {
		for (const icd of ["0088", "0007", "9908"]) {
			expect(organizationIdentifierFault(icd, lookAlike)).toBe("Pattern");
			expect(parseParticipantIdentifier(`iso6523-actorid-upis::${icd}:${lookAlike}`)).toBeNull();
		}
	});

	test.each([
		["a DEL", "\u007f"],
		["a tab", "\t"],
		["an accented letter", "\u00e9"],
		["an emoji", "\u{1f600}"],
	])("a value holding %s is refused", (_name, character) => {
		expect(organizationIdentifierFault("0088", `579${character}0000435968`)).toBe("Pattern");
	});

	test("every printable US-ASCII character but space is allowed; MOD11 still applies to 0192", () => {
		const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, index) => String.fromCharCode(0x21 + index));
		for (const character of printable) expect(organizationIdentifierFault("0088", `x${character}`)).toBeNull();
		expect(organizationIdentifierFault("0192", "991825828")).toBe("OrganizationNumber");
		expect(organizationIdentifierFault("0192", "991825827")).toBeNull();
	});
});

describe("Norwegian organization numbers (ICD 0192, MOD11)", () => {
	test.each(["991825827", "923609016", "986252932", "745707327"])("%s is valid", (value) => {
		expect(isValidNorwegianOrganizationNumber(value)).toBe(true);
	});

	test.each(["991825828", "12345678", "9918258270", "abcdefghi"])("%s is not", (value) => {
		expect(isValidNorwegianOrganizationNumber(value)).toBe(false);
	});
});

describe("record UUIDs in a path (spec rule 2)", () => {
	test.each(["3f2b8c1e-9d4a-4e6b-8a7c-1b2c3d4e5f60", "3F2B8C1E-9D4A-4E6B-8A7C-1B2C3D4E5F60"])(
		"%s is a UUID",
		(value) => {
			expect(isUuid(value)).toBe(true);
		},
	);

	test.each([
		// 36 characters, as every Norwegian participant's qualified identifier is.
		"iso6523-actorid-upis::0192:991825827",
		"3f2b8c1e-9d4a-4e6b-8a7c-1b2c3d4e5f6g",
		"3f2b8c1e9-d4a-4e6b-8a7c-1b2c3d4e5f60",
		"3f2b8c1e-9d4a-4e6b-8a7c-1b2c3d4e5f6",
	])("%s is not", (value) => {
		expect(isUuid(value)).toBe(false);
	});
});
