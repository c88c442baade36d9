/**
 * The participant rules of decisions §5–§7, as pure functions: what a request may hold
 * (processes that exist, fit the ICD, are not newly restricted, bring their dependencies),
 * how a `query` is read, and the calendar dates answered. The participants service feeds
 * them what it read from the catalog and the store; they compute, they never fetch.
 */
import type { Violation } from "../../src/contract/errors";
import { organizationIdentifierFault, organizationKey } from "../../src/contract/identifiers";
import { DEFAULT_MESSAGES } from "../../src/contract/validation";
import { searchWords } from "../../src/contract/search";

/** What the rules need to know about a process: the catalog's Process is one (absent fields: none). */
export interface ProcessFacts {
	identifier: string;
	restricted?: boolean;
	requiredICDs?: string[];
	dependencies?: { identifier: string; qualifiedIdentifier?: string }[];
}

export interface ProcessRuleInput {
	/** The participant's ICD. */
	icd: string;
	/** Process identifiers in the order the request lists them. */
	requested: string[];
	/** Every process the catalog knows among `requested` (and their dependencies need not be here). */
	known: Map<string, ProcessFacts>;
	/** Processes the participant already holds: restricted ones and ICD limits are not re-checked for them. */
	current: string[];
	/** Processes other participants of the same organization hold (they satisfy dependencies). */
	heldByOthers: ReadonlySet<string>;
}

function violation(field: string, code: string, rejectedValue: unknown, detail?: string): Violation {
	const text = DEFAULT_MESSAGES[code] ?? code;
	return {
		field,
		code,
		defaultMessage: detail ? `${text}: ${detail}` : text,
		rejectedValue: rejectedValue ?? null,
		bindingFailure: false,
	};
}

/**
 * Violations of the process list, in request order (decisions §6). A repeated identifier is
 * `Unique`; an unknown one `Exists`. `RequiredICD` and `Restricted` apply to processes the
 * participant does not hold yet (the spec: the ICD list decides who may *add* a process; a
 * deprecated one already held may stay). `Dependency` applies to the whole new list: the
 * organization must hold every dependency, in this list or through another participant.
 */
export function processViolations(input: ProcessRuleInput): Violation[] {
	const { icd, requested, known, heldByOthers } = input;
	const current = new Set(input.current);
	const wanted = new Set(requested);
	const seen = new Set<string>();
	const violations: Violation[] = [];
	for (const [index, identifier] of requested.entries()) {
		const field = `processes[${index}].identifier`;
		if (seen.has(identifier)) {
			violations.push(violation(field, "Unique", identifier));
			continue;
		}
		seen.add(identifier);
		const facts = known.get(identifier);
		if (!facts) {
			violations.push(violation(field, "Exists", identifier));
			continue;
		}
		const isNew = !current.has(identifier);
		const requiredICDs = facts.requiredICDs ?? [];
		if (isNew && requiredICDs.length > 0 && !requiredICDs.includes(icd)) {
			violations.push(
				violation(field, "RequiredICD", identifier, `ICD ${icd} is not one of ${requiredICDs.join(", ")}`),
			);
		}
		if (isNew && facts.restricted === true) violations.push(violation(field, "Restricted", identifier));
		for (const dependency of facts.dependencies ?? []) {
			if (!wanted.has(dependency.identifier) && !heldByOthers.has(dependency.identifier)) {
				violations.push(
					violation(field, "Dependency", identifier, dependency.qualifiedIdentifier ?? dependency.identifier),
				);
			}
		}
	}
	return violations;
}

/** Organization identifier rules (decisions §5: printable US-ASCII for every ICD, MOD11 for 0192). */
export function organizationViolations(icd: string, organizationIdentifier: string): Violation[] {
	const fault = organizationIdentifierFault(icd, organizationIdentifier);
	return fault ? [violation("organizationIdentifier", fault, organizationIdentifier)] : [];
}

function isCalendarDate(value: string): boolean {
	if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
	const parsed = new Date(`${value}T00:00:00Z`);
	return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}

/**
 * The update request's optional `deleteDate` (this project's extension for scheduled
 * removal): null clears it; a date must exist on the calendar and lie after today (UTC),
 * because a date that has arrived is swept at once and DELETE is the way to remove now.
 */
export function deleteDateViolations(deleteDate: string | null | undefined, today: string): Violation[] {
	if (deleteDate === undefined || deleteDate === null) return [];
	if (!isCalendarDate(deleteDate)) return [violation("deleteDate", "Pattern", deleteDate)];
	if (deleteDate <= today) return [violation("deleteDate", "Future", deleteDate)];
	return [];
}

/** A participant is due for the sweeper once its deleteDate has arrived. */
export function isDue(deleteDate: string | null | undefined, today: string): boolean {
	return typeof deleteDate === "string" && deleteDate <= today;
}

/**
 * How a participant `query` may be read (decisions §7). The service tries the organization
 * readings first (exact, case-insensitive) and falls back to the name words only when they
 * match nothing. Words are data: the store matches them literally as word prefixes.
 */
export interface ParticipantQuery {
	/** `icd:organizationIdentifier` given: the organization key to match. */
	organizationKey?: string;
	/** A bare value that may be an organization identifier (any ICD). */
	organizationIdentifier?: string;
	/** Name words, each of which must start a word of the name. */
	words: string[];
}

export function readParticipantQuery(query: string | undefined): ParticipantQuery | null {
	const text = (query ?? "").trim();
	if (text === "") return null;
	const words = searchWords(text);
	const qualified = /^(\d{1,4}):(.{1,35})$/.exec(text);
	if (qualified) return { organizationKey: organizationKey(qualified[1], qualified[2]), words };
	if (text.length <= 35 && !/\s/.test(text)) return { organizationIdentifier: text, words };
	return { words };
}

/** Which processes an update adds and removes (the claims to insert and to release). */
export function processChanges(
	before: readonly string[],
	after: readonly string[],
): { added: string[]; removed: string[] } {
	const old = new Set(before);
	const next = new Set(after);
	return { added: [...next].filter((id) => !old.has(id)), removed: [...old].filter((id) => !next.has(id)) };
}
