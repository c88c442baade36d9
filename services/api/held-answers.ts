/**
 * Answers the gateway holds for its two hottest reads (docs/internals.md "Held answers"): the
 * organization lookup (per visibility and organization, 404s included) and a service
 * provider's read of its participant by qualified identifier (per provider and organization).
 * The gateway's alias handler consults them after authorization and the rate limit, and fills them from the
 * full path's own answer bytes, so a held answer is what the full path answers.
 *
 * Never stale: every process hears every change as a notice (src/platform/notices.ts) and the
 * gateway forgets what a change touches. A fill whose call overlapped a notice about its key
 * is not kept (`begin`/`settle`), and the callee answers only once it has heard every notice
 * the gateway had heard when it called (HEARD_NOTICES_META).
 */
import type { Caller } from "../../src/contract/model";
import type { PathValue } from "../../src/contract/negotiation";
import type { Operation } from "../../src/contract/operations";
import type { HeldBody } from "./answer-body";

/** A held answer: the answer's body (its JSON's bytes, services/api/answer-body.ts, with its length and tag), or "no such organization". */
export type HeldAnswer = HeldBody | { notFound: true };

/** A held answer's key: a string, or a number where one identifies the answer (`lookupKey`). */
type HeldKey = string | number;

/** One kind of held answer, bounded (the oldest filled go first). */
class HeldAnswerMap {
	private readonly entries = new Map<HeldKey, HeldAnswer>();
	/** Fills in flight by key, each with its token: a notice about the key cancels it. */
	private readonly pending = new Map<HeldKey, number>();
	private nextToken = 1;

	constructor(private readonly maxEntries: number) {}

	get size(): number {
		return this.entries.size;
	}

	get(key: HeldKey): HeldAnswer | undefined {
		return this.entries.get(key);
	}

	begin(key: HeldKey): number {
		const token = this.nextToken++;
		this.pending.set(key, token);
		return token;
	}

	settle(key: HeldKey, token: number, answer: HeldAnswer | null): void {
		if (this.pending.get(key) !== token) return;
		this.pending.delete(key);
		if (!answer || this.maxEntries <= 0) return;
		if (!this.entries.has(key) && this.entries.size >= this.maxEntries)
			this.entries.delete(this.entries.keys().next().value as HeldKey);
		this.entries.set(key, answer);
	}

	forget(key: HeldKey): void {
		this.entries.delete(key);
		this.pending.delete(key);
	}

	clear(): void {
		this.entries.clear();
		this.pending.clear();
	}
}

/** Which held answers a request may be answered from, and under which key. */
export interface HoldSlot {
	kind: "lookup" | "participantRead";
	key: HeldKey;
	/** Whether a 404 is held too (the lookup's "no participant for this organization"). */
	holdsNotFound: boolean;
}

export interface HeldAnswerLimits {
	lookups: number;
	participantReads: number;
}

export class HeldAnswers {
	private readonly lookups: HeldAnswerMap;
	private readonly participantReads: HeldAnswerMap;

	constructor(limits: HeldAnswerLimits) {
		this.lookups = new HeldAnswerMap(limits.lookups);
		this.participantReads = new HeldAnswerMap(limits.participantReads);
	}

	/** The slot of a request (the operations table's `held` column), or null when its answer is never held. */
	slotOf(operation: Operation, caller: Caller | null, pathValues: Record<string, PathValue>): HoldSlot | null {
		if (operation.held === "lookup") {
			const organization = pathValues.qualifiedIdentifier?.organization;
			if (!organization) return null;
			return {
				kind: "lookup",
				key: lookupKey(caller ? "all" : "visible", organization.organizationKey),
				holdsNotFound: true,
			};
		}
		if (operation.held === "participantRead" && caller?.role === "SERVICE_PROVIDER" && caller.serviceProvider) {
			const organization = pathValues.participant?.organization;
			if (!organization) return null;
			return {
				kind: "participantRead",
				key: readKey(caller.serviceProvider, organization.organizationKey),
				holdsNotFound: false,
			};
		}
		return null;
	}

	get(slot: HoldSlot): HeldAnswer | undefined {
		return this.map(slot).get(slot.key);
	}

	begin(slot: HoldSlot): number {
		return this.map(slot).begin(slot.key);
	}

	settle(slot: HoldSlot, token: number, answer: HeldAnswer | null): void {
		this.map(slot).settle(slot.key, token, answer);
	}

	get size(): { lookups: number; participantReads: number } {
		return { lookups: this.lookups.size, participantReads: this.participantReads.size };
	}

	/** A lookup node applied a change of the organization (every organization when none is named). */
	lookupChanged(organizationKey: string | undefined): void {
		if (organizationKey === undefined) return this.lookups.clear();
		this.lookups.forget(lookupKey("all", organizationKey));
		this.lookups.forget(lookupKey("visible", organizationKey));
	}

	/** A participant changed: its owners' reads of it (every read when its owners are not named). */
	participantChanged(organizationKey: string | undefined, serviceProviders: string[] | undefined): void {
		if (organizationKey === undefined || !serviceProviders) return this.participantReads.clear();
		for (const serviceProvider of serviceProviders)
			this.participantReads.forget(readKey(serviceProvider, organizationKey));
	}

	/** A process or document type changed: every answer embeds them. */
	catalogChanged(): void {
		this.lookups.clear();
		this.participantReads.clear();
	}

	/** An account or service provider changed: participant reads embed the provider's title. */
	accountsChanged(): void {
		this.participantReads.clear();
	}

	clear(): void {
		this.lookups.clear();
		this.participantReads.clear();
	}

	private map(slot: HoldSlot): HeldAnswerMap {
		return slot.kind === "lookup" ? this.lookups : this.participantReads;
	}
}

/**
 * A held lookup's key. A Norwegian organization (ICD 0192, nine digits) is keyed by its number,
 * the visibility in the sign: among 100,000 held organizations a number is found without hashing
 * a string or reading the stored key, half the time of a string key (docs/performance.md, eighth
 * round). Any other organization by its visibility and key.
 */
function lookupKey(visibility: "all" | "visible", organizationKey: string): HeldKey {
	const number = organizationNumberOf(organizationKey);
	if (number >= 0) return visibility === "visible" ? number : -1 - number;
	return `${visibility}\u0000${organizationKey}`;
}

/** The number of an organization key "0192:" + nine digits (a small integer: at most 999,999,999), else -1. */
function organizationNumberOf(organizationKey: string): number {
	if (organizationKey.length !== 14 || !organizationKey.startsWith("0192:")) return -1;
	let number = 0;
	for (let index = 5; index < 14; index++) {
		const digit = organizationKey.charCodeAt(index) - 48;
		if (digit < 0 || digit > 9) return -1;
		number = number * 10 + digit;
	}
	return number;
}

function readKey(serviceProvider: string, organizationKey: string): string {
	return `${serviceProvider.toLowerCase()}\u0000${organizationKey}`;
}
