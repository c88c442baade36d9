/**
 * What the console says of an organization's network state (console/src/network.ts): each state
 * of GET /rest/api/network/{qualifiedIdentifier} in words, the SML's fault when failing, "not
 * configured" for off. test/integration/console.browser.spec.ts sees the same words in the page.
 */
import { describeDelivery, shownTime } from "../../console/src/network";

test("registered says since when, in UTC as the registry keeps it", () => {
	expect(describeDelivery({ state: "registered", message: null, at: "2026-12-04T16:37:19.123Z" }, "SML")).toEqual({
		label: "Registered",
		color: "#1f6f33",
		detail: "Since 2026-12-04 16:37:19 UTC.",
	});
	expect(describeDelivery({ state: "registered", message: null, at: null }, "SML").detail).toBe("");
});

test("failing shows the SML's own message and when it was last tried", () => {
	const fault = "[ERR-106] The participant identifier 'iso6523-actorid-upis::0192:991825827' is already registered";
	expect(describeDelivery({ state: "failing", message: fault, at: "2026-12-04T10:00:00Z" }, "SML")).toEqual({
		label: "Failing",
		color: "red.9",
		detail: `${fault} (last tried 2026-12-04 10:00:00 UTC)`,
	});
	expect(describeDelivery({ state: "failing", message: null, at: null }, "Directory").detail).toBe(
		"The Directory refused the last call.",
	);
});

test("pending shows what the delivery waits for, or that it is yet to be sent", () => {
	expect(describeDelivery({ state: "pending", message: "retrying after a timeout", at: null }, "SML").detail).toBe(
		"retrying after a timeout",
	);
	expect(describeDelivery({ state: "pending", message: null, at: null }, "SML")).toEqual({
		label: "Pending",
		color: "#8f3b00",
		detail: "Waiting to be sent to the SML.",
	});
});

test("off is said plainly as not configured, naming what is missing", () => {
	expect(describeDelivery({ state: "off", message: null, at: null }, "SML")).toEqual({
		label: "Not configured",
		color: "gray.8",
		detail: "This registry has no SML configured.",
	});
	expect(describeDelivery({ state: "off", message: null, at: null }, "Directory").detail).toBe(
		"This registry has no Directory configured.",
	);
});

test("a time the console cannot read is shown as given; none as nothing", () => {
	expect(shownTime("yesterday")).toBe("yesterday");
	expect(shownTime(null)).toBe("");
});
