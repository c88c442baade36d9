import { isUuid, isValidNorwegianOrganizationNumber, parseParticipantIdentifier } from "../../src/contract/identifiers";

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
