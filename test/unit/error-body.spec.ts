/**
 * The error body's `errors[].rejectedValue` is a string or null, as the contract types it
 * (decisions §8): a client generated from the contract can read every error.
 */
import { fieldError, rejectedValueText } from "../../src/contract/error-body";

describe("rejectedValue (decisions §8)", () => {
	test.each([
		["a string as itself", "abc", "abc"],
		["an empty string as itself", "", ""],
		["missing as null", undefined, null],
		["null as null", null, null],
		["a number as its JSON text", 42, "42"],
		["a boolean as its JSON text", false, "false"],
		["an array as its JSON text", [], "[]"],
		["an object as its JSON text", { a: 1 }, '{"a":1}'],
	])("%s", (_what, value, expected) => {
		expect(rejectedValueText(value)).toBe(expected);
		expect(
			fieldError("processFormDTO", {
				field: "title",
				code: "Type",
				defaultMessage: "must be a string",
				rejectedValue: value,
			}).rejectedValue,
		).toBe(expected);
	});
});
