/**
 * How a delivery to the SML or the Directory ends, applied to an organization's document:
 * done, failed (retried with back-off, parked once it has failed for `parkAfterMs`), or waiting
 * (the Directory waits for the lookup nodes to answer the new card). Pure.
 */
import { due, failing, parked, type Delivery, type NetworkOrganizationDoc, type Target } from "./model";

export type Outcome =
	| { kind: "done"; present: boolean; card?: string }
	| { kind: "failed"; message: string }
	| { kind: "waiting"; message: string };

export interface RetryPolicy {
	firstDelayMs: number;
	maxDelayMs: number;
	/** Failing this long parks the delivery until an operator replays it (decisions §14: a day). */
	parkAfterMs: number;
	/** How soon a waiting delivery looks again. */
	waitMs: number;
}

export type DeliveryState = "registered" | "pending" | "failing" | "off";

export function retryDelayMs(attempts: number, policy: RetryPolicy): number {
	return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.max(0, attempts - 1));
}

/**
 * The document after an outcome. `claimedDue` is the due time the delivery claimed it with: a
 * document that no longer has it was asked for again meanwhile (a newer change), so its due time
 * stays and the next run checks again.
 */
export function settle(
	doc: NetworkOrganizationDoc,
	target: Target,
	outcome: Outcome,
	claimedDue: string | null,
	now: Date,
	policy: RetryPolicy,
): NetworkOrganizationDoc {
	const at = now.toISOString();
	const askedAgain = doc[due(target)] !== claimedDue;
	const previous = doc[target];
	let delivery: Delivery;
	let nextDue: string | null;
	let isFailing = false;
	let isParked = false;
	if (outcome.kind === "done") {
		delivery = { present: outcome.present, attempts: 0, failingSince: null, message: null, at };
		if (outcome.card !== undefined || previous.card !== undefined) delivery.card = outcome.card ?? previous.card;
		nextDue = null;
	} else if (outcome.kind === "waiting") {
		delivery = { ...previous, message: outcome.message };
		nextDue = new Date(now.getTime() + policy.waitMs).toISOString();
		isFailing = doc[failing(target)];
	} else {
		const attempts = previous.attempts + 1;
		const failingSince = previous.failingSince ?? at;
		delivery = { ...previous, attempts, failingSince, message: outcome.message, at };
		isFailing = true;
		isParked = now.getTime() - Date.parse(failingSince) >= policy.parkAfterMs;
		nextDue = isParked ? null : new Date(now.getTime() + retryDelayMs(attempts, policy)).toISOString();
	}
	return {
		...doc,
		[target]: delivery,
		[due(target)]: askedAgain ? doc[due(target)] : nextDue,
		[failing(target)]: isFailing,
		[parked(target)]: isParked && !askedAgain,
	};
}

/** Neither target holds the organization and nothing is due: its document can go. */
export function isGone(doc: NetworkOrganizationDoc): boolean {
	return (["sml", "directory"] as const).every(
		(target) => doc[due(target)] === null && !doc[parked(target)] && doc[target].present !== true,
	);
}

/** The state the API and the console show for one target. */
export function stateOf(doc: NetworkOrganizationDoc | null, target: Target, configured: boolean): DeliveryState {
	if (!configured) return "off";
	if (!doc) return "pending";
	if (doc[parked(target)] || doc[failing(target)]) return "failing";
	if (doc[due(target)] !== null) return "pending";
	return doc[target].present ? "registered" : "pending";
}
