/**
 * The lookup's read model (architecture "Lookup"): per organization, the processes each of
 * its participants holds, with the participant's version. Pure functions: applying a
 * change, rebuilding from the participants, and turning a model into the answer.
 */
import type { BusinessEntity } from "../../src/contract/business-card";
import type { ParticipantChange } from "../../src/platform/channels";
import type { Process } from "../../src/contract/model";
import type { ModelSpec, StoredDoc } from "../../src/store/types";

export interface Holder {
	processes: string[];
	version: number;
	/** The participant's service provider: its access points are the processes' endpoints in the SMP answers. */
	serviceProvider?: string;
	/** The participant's incarnation: a later one (re-created with the same identifier) wins whatever its version. */
	incarnation?: string;
	/**
	 * A deleted participant stays as a tombstone so that an older change delivered late
	 * (channels redeliver, and nothing orders two nodes' messages) cannot bring it back.
	 */
	deleted?: boolean;
	/** What its business card shows (decisions §14); absent in a model written before, until a rebuild fills it in. */
	name?: string;
	registrationDate?: string;
	icd?: string;
	organizationIdentifier?: string;
}

export interface OrganizationProcessesDoc extends StoredDoc {
	/** The organization key (`icd:organizationidentifier`, case-folded). */
	identifier: string;
	version?: number;
	/**
	 * The version the store gives the write that records the announcement (Redis marked, every node
	 * told) of the model's last change: below `version` while a change is written but not announced.
	 */
	announcedVersion?: number;
	holders: Record<string, Holder>;
}

export const ORGANIZATION_PROCESSES_MODEL: ModelSpec = {
	collection: "organizationProcesses",
	fields: {},
	indexes: [],
};

/**
 * The model after a change, or null when the change is not newer than what is known for
 * that participant (a redelivery or a late message): applying is idempotent.
 */
export function applyChange(
	doc: OrganizationProcessesDoc | null,
	change: ParticipantChange,
): OrganizationProcessesDoc | null {
	const known = doc?.holders[change.participant];
	if (known && !isNewer(change, known)) return null;
	const incarnation = change.incarnation ? { incarnation: change.incarnation } : {};
	const holder: Holder = change.deleted
		? { processes: [], version: change.version, deleted: true, ...incarnation }
		: {
				processes: [...change.processes],
				version: change.version,
				...(change.serviceProvider ? { serviceProvider: change.serviceProvider } : {}),
				...incarnation,
				// A holder with only some of them shows in no card (businessEntitiesOf): nothing to check here.
				name: change.name,
				registrationDate: change.registrationDate,
				icd: change.icd,
				organizationIdentifier: change.organizationIdentifier,
			};
	return {
		identifier: change.organizationKey,
		...(doc?.version !== undefined ? { version: doc.version } : {}),
		holders: { ...(doc?.holders ?? {}), [change.participant]: holder },
	};
}

/**
 * Is the change newer than what is known of its participant: a later incarnation, or a later
 * version of the same? The same version naming the service provider, or carrying the card facts,
 * that a model written before holders had them lacks counts as newer, so a rebuild fills them in.
 */
function isNewer(change: ParticipantChange, known: Holder): boolean {
	const [changed, held] = [change.incarnation ?? "", known.incarnation ?? ""];
	if (changed !== held) return changed > held;
	if (change.version === known.version)
		return (
			!known.deleted &&
			((!known.serviceProvider && !!change.serviceProvider) || (!hasCardFacts(known) && hasCardFacts(change)))
		);
	return change.version > known.version;
}

type CardFacts = Pick<Holder, "name" | "registrationDate" | "icd" | "organizationIdentifier">;

function hasCardFacts(facts: CardFacts): facts is Required<CardFacts> {
	return (
		typeof facts.name === "string" &&
		typeof facts.registrationDate === "string" &&
		typeof facts.icd === "string" &&
		typeof facts.organizationIdentifier === "string"
	);
}

/**
 * The business entities of the organization's live participants (decisions §14), null when it
 * has none (404). A holder whose card facts a model written before them lacks is left out until
 * a rebuild fills them in.
 */
export function businessEntitiesOf(doc: OrganizationProcessesDoc | null): BusinessEntity[] | null {
	if (!doc) return null;
	const entities: BusinessEntity[] = [];
	let live = false;
	for (const participant in doc.holders) {
		const holder = doc.holders[participant];
		if (holder.deleted) continue;
		live = true;
		if (hasCardFacts(holder)) {
			const { name, registrationDate, icd, organizationIdentifier } = holder;
			entities.push({ name, registrationDate, icd, organizationIdentifier });
		}
	}
	return live ? entities : null;
}

/**
 * The model of one organization after a rebuild read its participants' current state: each
 * holder at the newer of the known and the read version, and a live holder the participants no
 * longer have removed (a tombstone one version on). Null when nothing changes: a change applied
 * meanwhile by another node is never overwritten by an older read.
 */
export function mergeParticipantSets(
	doc: OrganizationProcessesDoc | null,
	organizationKey: string,
	sets: Omit<ParticipantChange, "deleted">[],
): OrganizationProcessesDoc | null {
	let next = doc;
	for (const set of sets) next = applyChange(next, { ...set, deleted: false }) ?? next;
	const read = new Set(sets.map((set) => set.participant));
	for (const [participant, holder] of Object.entries(doc?.holders ?? {}))
		if (!holder.deleted && !read.has(participant))
			next = applyChange(next, {
				participant,
				...(holder.incarnation ? { incarnation: holder.incarnation } : {}),
				organizationKey,
				processes: [],
				version: holder.version + 1,
				deleted: true,
			});
	return next === doc ? null : next;
}

/** Does the model hold a live participant that `sets` (a rebuild's read of the organization) does not? */
export function holdersMissingFrom(
	doc: OrganizationProcessesDoc,
	sets: Omit<ParticipantChange, "deleted">[] | undefined,
): boolean {
	const read = new Set((sets ?? []).map((set) => set.participant));
	return Object.entries(doc.holders).some(([participant, holder]) => !holder.deleted && !read.has(participant));
}

/**
 * The processes the organization's live participants hold, each with the service provider of its
 * holder (decisions §6: one per organization and process); null when it has no live participant.
 */
export function heldProcesses(doc: OrganizationProcessesDoc | null): Map<string, string | undefined> | null {
	if (!doc) return null;
	const held = new Map<string, string | undefined>();
	let live = false;
	for (const participant in doc.holders) {
		const holder = doc.holders[participant];
		if (holder.deleted) continue;
		live = true;
		for (const id of holder.processes) if (!held.has(id)) held.set(id, holder.serviceProvider);
	}
	return live ? held : null;
}

/**
 * The answer: the processes the organization's participants hold, as full Process objects in a
 * stable order (qualified identifier, then identifier); null when it has no participant (404).
 * Processes the catalog no longer has are left out; anonymous callers see only visible ones,
 * without their hidden document types and dependencies (decisions §4).
 */
export function organizationAnswer(
	doc: OrganizationProcessesDoc | null,
	catalog: ReadonlyMap<string, Process>,
	anonymous: boolean,
): Process[] | null {
	const held = heldProcesses(doc);
	if (!held) return null;
	const answer: Process[] = [];
	for (const id of held.keys()) {
		const process = catalog.get(id);
		if (!process) continue;
		if (!anonymous) answer.push(process);
		else if (process.visible !== false) answer.push(visiblePartsOf(process));
	}
	return answer.sort(byQualifiedIdentifier);
}

/** A visible process as anonymous callers see it: without its hidden document types and dependencies. */
export function visiblePartsOf(process: Process): Process {
	return {
		...process,
		documentTypes: onlyVisible(process.documentTypes),
		dependencies: onlyVisible(process.dependencies),
	};
}

function onlyVisible<T extends { visible?: boolean }>(items: T[]): T[] {
	const shown: T[] = [];
	for (const item of items) if (item.visible !== false) shown.push(item);
	return shown;
}

function byQualifiedIdentifier(a: Process, b: Process): number {
	return (
		(a.qualifiedIdentifier ?? "").localeCompare(b.qualifiedIdentifier ?? "") ||
		a.identifier.localeCompare(b.identifier)
	);
}

/** A participant change the lookup could not apply after its retries, kept for an operator to replay (docs/operations.md). */
export interface ParkedChangeDoc extends StoredDoc {
	at: string;
	/** The channel's message as received (a malformed one too). */
	change: unknown;
	error: string;
}

export const PARKED_CHANGES_MODEL: ModelSpec = {
	collection: "parkedParticipantChanges",
	fields: { at: { kind: "string" } },
	indexes: [{ name: "at", fields: ["at"] }],
};
