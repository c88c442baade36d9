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
 *
 * Bounded per kind: at the bound the oldest lookup goes, or the oldest read of the provider
 * holding the most.
 */
import {
	NORWEGIAN_ICD,
	organizationKey as organizationKeyFor,
	type OrganizationRef,
} from "../../src/contract/identifiers";
import type { Caller } from "../../src/contract/model";
import type { PathValue } from "../../src/contract/negotiation";
import type { Operation } from "../../src/contract/operations";
import type { HeldBody } from "./answer-body";

/** A held answer: the answer's body (its JSON's bytes, services/api/answer-body.ts, with its length and tag), or "no such organization". */
export type HeldAnswer = HeldBody | { notFound: true };

/** A held answer's key: a string, or a number where one identifies the answer (`organizationKeyOf`). */
type HeldKey = string | number;

/** How many answers one kind may hold, shared by its maps (each provider's reads are a map of their own). */
class HeldBudget {
	readonly maps = new Set<HeldAnswerMap>();
	size = 0;
	constructor(readonly max: number) {}

	/** Room for one more answer: at the bound, the oldest of the largest map goes. */
	makeRoom(): void {
		if (this.size < this.max) return;
		let largest: HeldAnswerMap | undefined;
		for (const map of this.maps) if (!largest || map.size > largest.size) largest = map;
		largest?.dropOldest();
	}
}

/** Held answers of one kind (and provider), within their budget. */
class HeldAnswerMap {
	private readonly entries = new Map<HeldKey, HeldAnswer>();
	/** Fills in flight by key, each with its token: a notice about the key cancels it. */
	private readonly pending = new Map<HeldKey, number>();
	private nextToken = 1;

	constructor(private readonly budget: HeldBudget) {
		budget.maps.add(this);
	}

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
		if (!answer || this.budget.max <= 0) return;
		if (!this.entries.has(key)) {
			this.budget.makeRoom();
			this.budget.size++;
		}
		this.entries.set(key, answer);
	}

	dropOldest(): void {
		const oldest = this.entries.keys().next();
		if (!oldest.done) this.forget(oldest.value);
	}

	forget(key: HeldKey): void {
		if (this.entries.delete(key)) this.budget.size--;
		this.pending.delete(key);
	}

	clear(): void {
		this.budget.size -= this.entries.size;
		this.entries.clear();
		this.pending.clear();
	}
}

/** Which held answers a request may be answered from, and under which key. */
export interface HoldSlot {
	kind: "lookup" | "participantRead";
	/** The reading provider (lower case) of a participant read; "" for a lookup. */
	provider: string;
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
	private readonly readBudget: HeldBudget;
	/** Participant reads by provider, then by organization: the organization's key alone is the small key. */
	private readonly reads = new Map<string, HeldAnswerMap>();

	constructor(limits: HeldAnswerLimits) {
		this.lookups = new HeldAnswerMap(new HeldBudget(limits.lookups));
		this.readBudget = new HeldBudget(limits.participantReads);
	}

	/** The slot of a request (the operations table's `held` column), or null when its answer is never held. */
	slotOf(operation: Operation, caller: Caller | null, pathValues: Record<string, PathValue>): HoldSlot | null {
		if (operation.held === "lookup") {
			const organization = pathValues.qualifiedIdentifier?.organization;
			if (!organization) return null;
			return {
				kind: "lookup",
				provider: "",
				key: lookupKey(caller ? "all" : "visible", heldKeyOf(organization)),
				holdsNotFound: true,
			};
		}
		if (operation.held === "participantRead" && caller?.role === "SERVICE_PROVIDER" && caller.serviceProvider) {
			const organization = pathValues.participant?.organization;
			if (!organization) return null;
			return {
				kind: "participantRead",
				provider: caller.serviceProvider.toLowerCase(),
				key: heldKeyOf(organization),
				holdsNotFound: false,
			};
		}
		return null;
	}

	get(slot: HoldSlot): HeldAnswer | undefined {
		return slot.kind === "lookup" ? this.lookups.get(slot.key) : this.reads.get(slot.provider)?.get(slot.key);
	}

	begin(slot: HoldSlot): number {
		return this.map(slot).begin(slot.key);
	}

	settle(slot: HoldSlot, token: number, answer: HeldAnswer | null): void {
		this.map(slot).settle(slot.key, token, answer);
	}

	get size(): { lookups: number; participantReads: number } {
		return { lookups: this.lookups.size, participantReads: this.readBudget.size };
	}

	/** A lookup node applied a change of the organization (every organization when none is named). */
	lookupChanged(organizationKey: string | undefined): void {
		if (organizationKey === undefined) return this.lookups.clear();
		const key = organizationKeyOf(organizationKey);
		this.lookups.forget(lookupKey("all", key));
		this.lookups.forget(lookupKey("visible", key));
	}

	/** A participant changed: its owners' reads of it (every read when its owners are not named). */
	participantChanged(organizationKey: string | undefined, serviceProviders: string[] | undefined): void {
		if (organizationKey === undefined || !serviceProviders) return this.clearReads();
		const key = organizationKeyOf(organizationKey);
		for (const serviceProvider of serviceProviders) this.reads.get(serviceProvider.toLowerCase())?.forget(key);
	}

	/** A process or document type changed: every answer embeds them. */
	catalogChanged(): void {
		this.clear();
	}

	/** An account or service provider changed: participant reads embed the provider's title. */
	accountsChanged(): void {
		this.clearReads();
	}

	clear(): void {
		this.lookups.clear();
		this.clearReads();
	}

	private clearReads(): void {
		for (const map of this.reads.values()) map.clear();
	}

	private map(slot: HoldSlot): HeldAnswerMap {
		if (slot.kind === "lookup") return this.lookups;
		let reads = this.reads.get(slot.provider);
		if (!reads) this.reads.set(slot.provider, (reads = new HeldAnswerMap(this.readBudget)));
		return reads;
	}
}

/** How a numbered organization's key begins ("0192:"). */
const NUMBERED_KEY_PREFIX = organizationKeyFor(NORWEGIAN_ICD, "");

/**
 * An organization's key among held answers, from its organization key (a notice's). A Norwegian
 * organization (ICD 0192, nine digits) is keyed by its number: among 100,000 held organizations a
 * number is found without hashing a string or reading the stored key, in half the time of a string
 * key (docs/performance.md, eighth round). Any other organization by its organization key.
 */
function organizationKeyOf(organizationKey: string): HeldKey {
	const number = organizationKey.startsWith(NUMBERED_KEY_PREFIX)
		? nineDigitsAt(organizationKey, NUMBERED_KEY_PREFIX.length)
		: -1;
	return number >= 0 ? number : organizationKey;
}

/**
 * The same key for an organization parsed from a request's path. Its number is read from the
 * identifier itself: the joined organization key is a fresh concatenation, which V8 would flatten
 * (in its runtime) before reading a digit of it.
 */
function heldKeyOf(organization: OrganizationRef): HeldKey {
	const number = organization.icd === NORWEGIAN_ICD ? nineDigitsAt(organization.organizationIdentifier, 0) : -1;
	return number >= 0 ? number : organization.organizationKey;
}

/** A held lookup's key: the organization's, with the visibility in the sign of a number or the prefix of a string. */
function lookupKey(visibility: "all" | "visible", key: HeldKey): HeldKey {
	if (typeof key === "number") return visibility === "visible" ? key : -1 - key;
	return `${visibility}\u0000${key}`;
}

/** The number written by the nine digits that end `text` from `start` (at most 999,999,999), else -1. */
function nineDigitsAt(text: string, start: number): number {
	if (text.length !== start + 9) return -1;
	let number = 0;
	for (let index = start; index < text.length; index++) {
		const digit = text.charCodeAt(index) - 48;
		if (digit < 0 || digit > 9) return -1;
		number = number * 10 + digit;
	}
	return number;
}
