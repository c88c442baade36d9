/**
 * The console's error mapping (console/src/errors.ts): the API's `errors[]` at the form fields
 * they belong to, a plain sentence per status, and the wait of a 429. The pages show exactly
 * what these functions return (test/integration/console.browser.spec.ts sees it in the browser).
 */
import { describeFailure, fieldErrors, formFieldOf, pathErrors, retryAfterSeconds } from "../../console/src/errors";

/** A 400 body as the registry answers an add participant with several broken fields. */
const refused = {
	status: 400,
	error: "Bad Request",
	message: "Validation failed for object='addParticipantFormDTO'. Error count: 4",
	errors: [
		{
			field: "contact.phoneNumber",
			code: "Phone",
			defaultMessage: "must be a valid phone number",
			objectName: "addParticipantFormDTO",
		},
		{
			field: "organizationIdentifier",
			code: "OrganizationNumber",
			defaultMessage: "must be a valid organization number for this ICD",
		},
		{
			field: "processes[1].identifier",
			code: "Restricted",
			defaultMessage: "the process is restricted (deprecated) and cannot be added",
		},
		{ field: "processes[0]", code: "Dependency", defaultMessage: "a required dependency process is missing" },
	],
};

test("every field error lands at its form field; array entries at the list's field, several joined", () => {
	expect(fieldErrors(refused.errors)).toEqual({
		"contact.phoneNumber": "Not a valid phone number (e.g. +47 22 33 44 55)",
		organizationIdentifier: "Not a valid organization number for this ICD (the check digit does not match)",
		processes:
			"This process is restricted (deprecated) and cannot be added; A process this one depends on is missing: add it too",
	});
	expect(formFieldOf("processes[12].identifier")).toBe("processes");
	expect(formFieldOf("contact.email")).toBe("contact.email");
});

test("a code the console has no words for falls back to the registry's default message, then to the code", () => {
	expect(fieldErrors([{ field: "title", code: "SomethingNew", defaultMessage: "is odd" }])).toEqual({
		title: "is odd",
	});
	expect(fieldErrors([{ field: "title", code: "SomethingNew" }])).toEqual({ title: "SomethingNew" });
	expect(fieldErrors(undefined)).toEqual({});
});

test("a 400 with errors[] says fields need attention and carries them; other statuses carry none", () => {
	expect(describeFailure(400, refused)).toEqual({
		status: 400,
		message: "Some fields need attention.",
		fields: fieldErrors(refused.errors),
		paths: pathErrors(refused.errors),
	});
	expect(describeFailure(400, { message: "Unreadable JSON" })).toEqual({
		status: 400,
		message: "Unreadable JSON",
		fields: {},
	});
	expect(describeFailure(409, { message: "account x already exists", errors: refused.errors }).fields).toEqual({});
});

test("401, 403, 412 and 503 are said plainly; 404 and 409 keep the registry's message", () => {
	expect(describeFailure(401, {}).message).toMatch(/^Wrong username or password/);
	expect(describeFailure(403, {}).message).toBe("Your role may not do this.");
	expect(describeFailure(412, {}).message).toMatch(/^Someone else changed this record/);
	expect(describeFailure(503, undefined).message).toMatch(/not available/);
	expect(describeFailure(404, { message: "participant x cannot be found" }).message).toBe(
		"participant x cannot be found",
	);
	expect(describeFailure(409, { message: "a job is running" }).message).toBe("a job is running");
	expect(describeFailure(418, "not json").message).toBe("The registry answered 418.");
});

test("a 429 tells how long to wait, from Retry-After in seconds or as a date", () => {
	expect(describeFailure(429, {}, "37")).toEqual({
		status: 429,
		message: "Too many attempts. Try again in 37 seconds.",
		retryAfterSeconds: 37,
		fields: {},
	});
	expect(describeFailure(429, {}, "1").message).toBe("Too many attempts. Try again in 1 second.");
	expect(describeFailure(429, {}, null)).toEqual({
		status: 429,
		message: "Too many attempts. Try again later.",
		fields: {},
	});
	const now = Date.parse("2026-01-01T00:00:00Z");
	expect(retryAfterSeconds("Thu, 01 Jan 2026 00:01:30 GMT", now)).toBe(90);
	expect(retryAfterSeconds("soon", now)).toBeUndefined();
	// Only a 429 waits: a Retry-After on another status is not a lockout.
	expect(describeFailure(503, {}, "5").retryAfterSeconds).toBeUndefined();
});

test("a list's field errors are also kept at their exact paths, for forms that edit each item", () => {
	expect(
		pathErrors([
			{ field: "endpoints[1].certificate", code: "CertificateExpired" },
			{ field: "endpoints[1].certificate", code: "Size" },
			{ field: "endpoints[0].url", code: "Pattern" },
		]),
	).toEqual({
		"endpoints[1].certificate": "This certificate has expired; Too short or too long",
		"endpoints[0].url": "Not in the expected format",
	});
});
