/**
 * Seed participants (decisions §9): upserted by (service provider, organization), every row
 * checked against the rules of an add (decisions §5–§6) and the file's other rows; any reason
 * refuses the whole section and writes nothing. A row that would not change the stored
 * participant is not written (nor audited, nor delivered), so a seed imported again changes
 * nothing.
 */
import { Conflict } from "../../src/contract/errors";
import { organizationKey, participantQualifiedIdentifier } from "../../src/contract/identifiers";
import type { Caller } from "../../src/contract/model";
import { SeedRefused } from "../../src/exchange/seed";
import type { SeedReason } from "../../src/exchange/seed-file";
import type { SeedCounts } from "../../src/exchange/upserts";
import { newRecordIdentifier } from "../../src/platform/record-identifier";
import { planChange, type PlannedChange } from "./changes";
import type { ParticipantDoc } from "./model";
import { requestedIdentifiers, type AddForm, type Participants } from "./participants";
import { organizationViolations } from "./rules";

export interface SeedParticipant extends AddForm {
	serviceProvider: string;
	identifier?: string;
}

/** A seed section with what the store and accounts already hold for it. */
interface SeedContext {
	/** Rows with the service provider identifier lower-cased. */
	rows: SeedParticipant[];
	/** Organization key of each row. */
	keys: string[];
	/** Stored participants of the organizations the rows name. */
	existing: ParticipantDoc[];
	knownProviders: Set<string>;
}

type SeedRowOutcome =
	{ reasons: SeedReason[] } | { result: "created" | "updated" | "unchanged"; change?: PlannedChange };

/**
 * What the organization's other participants will hold once the seed is imported: a row of
 * the file replaces the stored participant of the same provider.
 */
function holdingsOfOthers(seed: SeedContext, index: number): Set<string> {
	const { rows, keys, existing } = seed;
	const key = keys[index];
	const self = rows[index].serviceProvider;
	const fromFile = rows.filter((row, at) => keys[at] === key && row.serviceProvider !== self);
	const replaced = new Set(fromFile.map((row) => row.serviceProvider));
	const stored = existing.filter(
		(doc) => doc.organizationKey === key && doc.serviceProvider !== self && !replaced.has(doc.serviceProvider),
	);
	return new Set([
		...fromFile.flatMap((row) => requestedIdentifiers(row.processes)),
		...stored.flatMap((doc) => doc.processIds),
	]);
}

function seedParticipant(row: SeedParticipant, key: string, now: string): ParticipantDoc {
	return {
		identifier: row.identifier?.toLowerCase() ?? newRecordIdentifier(),
		icd: row.icd,
		organizationIdentifier: row.organizationIdentifier,
		organizationKey: key,
		qualifiedIdentifier: participantQualifiedIdentifier(row.icd, row.organizationIdentifier),
		name: row.name ?? null,
		contact: row.contact,
		processIds: requestedIdentifiers(row.processes),
		serviceProvider: row.serviceProvider,
		registrationDate: now,
		lastModificationDate: now,
		deleteDate: null,
	};
}

function sameContent(doc: ParticipantDoc, next: ParticipantDoc): boolean {
	return (
		doc.name === next.name &&
		JSON.stringify(doc.contact) === JSON.stringify(next.contact) &&
		JSON.stringify(doc.processIds) === JSON.stringify(next.processIds)
	);
}

/** One seed row: the reasons it is refused, or what it changes (nothing when the stored participant is the same). */
async function seedRow(
	participants: Participants,
	caller: Caller | null,
	seed: SeedContext,
	index: number,
): Promise<SeedRowOutcome> {
	const row = seed.rows[index];
	const key = seed.keys[index];
	const at = (field: string) => `participants[${index}]${field ? `.${field}` : ""}`;
	if (!seed.knownProviders.has(row.serviceProvider))
		return { reasons: [{ path: at("serviceProvider"), message: "names no existing service provider" }] };
	const current =
		seed.existing.find((doc) => doc.organizationKey === key && doc.serviceProvider === row.serviceProvider) ?? null;
	const requested = requestedIdentifiers(row.processes);
	const others = holdingsOfOthers(seed, index);
	const violations = [
		...organizationViolations(row.icd, row.organizationIdentifier),
		...(await participants.checkProcesses({
			icd: row.icd,
			organizationKey: key,
			requested,
			current: current?.processIds ?? [],
			self: current?.identifier ?? null,
			heldElsewhere: others,
		})),
	];
	const reasons = violations.map((violation) => ({ path: at(violation.field), message: violation.defaultMessage }));
	requested.forEach((processId, position) => {
		if (others.has(processId))
			reasons.push({
				path: at(`processes[${position}].identifier`),
				message: "is already registered for this organization by another service provider",
			});
	});
	if (reasons.length > 0) return { reasons };
	const now = new Date().toISOString();
	if (!current)
		return { result: "created", change: planChange(caller, "seed", null, seedParticipant(row, key, now)) };
	const next: ParticipantDoc = {
		...current,
		name: row.name ?? null,
		contact: row.contact,
		processIds: requested,
		lastModificationDate: now,
	};
	if (sameContent(current, next)) return { result: "unchanged" };
	return { result: "updated", change: planChange(caller, "seed", current, next) };
}

/** Seed rows → one batch; `knownProviders` are the rows' service providers that exist. */
export async function importSeedParticipants(
	participants: Participants,
	caller: Caller | null,
	seedRows: SeedParticipant[],
	knownProviders: Set<string>,
): Promise<SeedCounts> {
	const rows = seedRows.map((row) => ({ ...row, serviceProvider: row.serviceProvider.toLowerCase() }));
	const keys = rows.map((row) => organizationKey(row.icd, row.organizationIdentifier));
	const existing = await participants.collection.find({ filter: { organizationKey: { in: [...new Set(keys)] } } });
	const seed: SeedContext = { rows, keys, existing, knownProviders };
	const reasons: SeedReason[] = [];
	const changes: PlannedChange[] = [];
	const counts: SeedCounts = { created: 0, updated: 0, unchanged: 0 };
	for (const index of rows.keys()) {
		const outcome = await seedRow(participants, caller, seed, index);
		if ("reasons" in outcome) {
			reasons.push(...outcome.reasons);
			continue;
		}
		counts[outcome.result]++;
		if (outcome.change) changes.push(outcome.change);
	}
	if (reasons.length > 0) throw new SeedRefused(reasons);
	try {
		if (changes.length > 0) await participants.commit(changes);
	} catch (error) {
		// The store's unique keys still decide: a race with a concurrent add refuses the section.
		if (error instanceof Conflict) throw new SeedRefused([{ path: "participants", message: error.message }]);
		throw error;
	}
	return counts;
}
