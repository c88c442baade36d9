/**
 * What the console says of an organization's place in the network (decisions §14, the answer of
 * GET /rest/api/network/{qualifiedIdentifier}): one label per delivery state, the SML's message
 * when it fails, and "not configured" when SML_URL or DIRECTORY_URL is unset. Pure, so that
 * test/unit/console-network.spec.ts checks it without a browser.
 */

export type DeliveryState = "registered" | "pending" | "failing" | "off";

/** One delivery target's state as the API answers it (NetworkDelivery). */
export interface Delivery {
	state: DeliveryState;
	message: string | null;
	at: string | null;
}

export interface DeliveryDescription {
	/** A word or two for the badge. */
	label: string;
	/** The sentence beside it: when, what failed, what it waits for; empty when there is nothing to add. */
	detail: string;
	/** A colour keeping WCAG AA contrast (4.5:1) with the badge's white text: Mantine's green-9 and yellow-9 do not. */
	color: string;
}

const LABELS: Record<DeliveryState, { label: string; color: string }> = {
	registered: { label: "Registered", color: "#1f6f33" },
	pending: { label: "Pending", color: "#8f3b00" },
	failing: { label: "Failing", color: "red.9" },
	off: { label: "Not configured", color: "gray.8" },
};

/** `2026-12-04T16:37:19.123Z` → `2026-12-04 16:37:19 UTC`: the time as the registry keeps it, without the browser's zone. */
export function shownTime(at: string | null): string {
	if (!at) return "";
	const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(at);
	return match ? `${match[1]} ${match[2]} UTC` : at;
}

/** `target` is "SML" or "Directory": it names what is not configured or what answered. */
export function describeDelivery(delivery: Delivery, target: string): DeliveryDescription {
	const { label, color } = LABELS[delivery.state] ?? { label: delivery.state, color: "gray.8" };
	const when = shownTime(delivery.at);
	switch (delivery.state) {
		case "registered":
			return { label, color, detail: when ? `Since ${when}.` : "" };
		case "pending":
			return { label, color, detail: delivery.message ?? `Waiting to be sent to the ${target}.` };
		case "failing":
			return {
				label,
				color,
				detail: `${delivery.message ?? `The ${target} refused the last call.`}${when ? ` (last tried ${when})` : ""}`,
			};
		case "off":
			return { label, color, detail: `This registry has no ${target} configured.` };
		default:
			return { label, color, detail: delivery.message ?? "" };
	}
}
