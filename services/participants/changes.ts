/**
 * The writes of one participant change, in the one store batch that makes it (docs/internals.md
 * "Participants and lookup: details"): the participant, the process claims that make "one
 * provider per organization and process" a store rule, the audit record, and the change for the
 * lookup and the other processes (the change outbox), and the organization for the SML and the
 * Directory (the network outbox). Uniqueness is decided by the store's keys
 * inside that batch, never by a read before the write; a change to an existing participant
 * carries its version, so concurrent ones serialize or retry.
 */
import { calendarDate } from "../../src/contract/dates";
import { Conflict } from "../../src/contract/errors";
import type { Caller } from "../../src/contract/model";
import { auditWrite } from "../../src/platform/audit";
import type { ParticipantChange } from "../../src/platform/channels";
import { newRecordIdentifier } from "../../src/platform/record-identifier";
import type { DuplicateKey } from "../../src/store/errors";
import type { Collection, WriteOp } from "../../src/store/types";
import {
	claimDoc,
	claimIdentifier,
	CHANGE_OUTBOX_MODEL,
	NETWORK_OUTBOX_MODEL,
	PARTICIPANTS_MODEL,
	PROCESS_CLAIMS_MODEL,
	type NetworkOutboxDoc,
	type ParticipantChangeOutboxDoc,
	type ParticipantDoc,
	type ProcessClaimDoc,
} from "./model";
import { participantReference } from "./answers";
import { processChanges } from "./rules";

/** One participant change: the writes of its batch (its outbox entry is delivered once they commit). */
export interface PlannedChange {
	ops: WriteOp[];
	before: ParticipantDoc | null;
	/** The participant as stored after the change (its new version), null for a removal. */
	after: ParticipantDoc | null;
}

/**
 * The writes of one change. A removal first replaces the participant at its expected version:
 * a delete of a row that is already gone would otherwise succeed silently, and two racing
 * deletes must answer 204 once and 404 once.
 */
export function planChange(
	caller: Caller | null,
	operation: string,
	before: ParticipantDoc | null,
	after: ParticipantDoc | null,
): PlannedChange {
	if (after) after = { ...after, incarnation: before ? before.incarnation : newRecordIdentifier() };
	const subject = (after ?? before) as ParticipantDoc;
	const participants = PARTICIPANTS_MODEL.collection;
	const claims = PROCESS_CLAIMS_MODEL.collection;
	const ops: WriteOp[] = [];
	let version: number;
	if (!before && after) {
		version = 1;
		ops.push({ kind: "insert", collection: participants, doc: after });
		for (const processId of after.processIds)
			ops.push({ kind: "insert", collection: claims, doc: claimDoc(after, processId) });
	} else if (before && after) {
		version = (before.version ?? 1) + 1;
		ops.push({ kind: "replace", collection: participants, doc: after, expectedVersion: before.version });
		const { added, removed } = processChanges(before.processIds, after.processIds);
		for (const processId of removed)
			ops.push({
				kind: "delete",
				collection: claims,
				identifier: claimIdentifier(before.organizationKey, processId),
			});
		for (const processId of added)
			ops.push({ kind: "insert", collection: claims, doc: claimDoc(after, processId) });
	} else if (before) {
		version = (before.version ?? 1) + 1;
		ops.push({ kind: "replace", collection: participants, doc: before, expectedVersion: before.version });
		ops.push({ kind: "delete", collection: participants, identifier: before.identifier, expectedVersion: version });
		ops.push({ kind: "deleteWhere", collection: claims, filter: { participant: before.identifier } });
	} else {
		throw new Error("a participant change needs a before or an after image");
	}
	const image = after ? { ...after, version } : null;
	const serviceProviders: string[] = [];
	for (const owner of [before?.serviceProvider, after?.serviceProvider])
		if (owner && !serviceProviders.includes(owner)) serviceProviders.push(owner);
	const feed = { version, record: image ? participantReference(image) : null };
	ops.push(
		auditWrite(caller, {
			operation,
			resource: "participant",
			resourceId: subject.identifier,
			serviceProviders,
			before,
			after: image,
			change: feed,
		}),
	);
	const change: ParticipantChange = {
		participant: subject.identifier,
		incarnation: subject.incarnation ?? "",
		organizationKey: subject.organizationKey,
		processes: after ? after.processIds : [],
		version,
		deleted: !after,
		serviceProviders,
		...(after ? { serviceProvider: after.serviceProvider, ...cardFactsOf(after) } : {}),
	};
	const outbox: ParticipantChangeOutboxDoc = {
		identifier: newRecordIdentifier(),
		at: new Date().toISOString(),
		change,
	};
	ops.push({ kind: "insert", collection: CHANGE_OUTBOX_MODEL.collection, doc: outbox });
	const network: NetworkOutboxDoc = {
		identifier: newRecordIdentifier(),
		at: outbox.at,
		organizationKey: subject.organizationKey,
	};
	ops.push({ kind: "insert", collection: NETWORK_OUTBOX_MODEL.collection, doc: network });
	return { ops, before, after: image };
}

/** What a participant's business card shows, as its change and the lookup rebuild's read carry it (decisions §14). */
export function cardFactsOf(
	participant: ParticipantDoc,
): Required<Pick<ParticipantChange, "name" | "registrationDate" | "icd" | "organizationIdentifier">> {
	return {
		name: participant.name ?? "",
		registrationDate: calendarDate(participant.registrationDate),
		icd: participant.icd,
		organizationIdentifier: participant.organizationIdentifier,
	};
}

/** The 409 a refused batch answers: which rule its unique key stands for (a read after the refusal, for the message only). */
export async function conflictOf(
	error: DuplicateKey,
	changes: PlannedChange[],
	claims: Collection<ProcessClaimDoc>,
): Promise<Conflict> {
	const subject = changes.length === 1 ? changes[0].after : null;
	const organization = subject ? `organization ${subject.qualifiedIdentifier}` : "an organization of the request";
	if (error.collection === PARTICIPANTS_MODEL.collection) {
		const provider = subject ? `Service provider ${subject.serviceProvider}` : "A service provider";
		return new Conflict(`${provider} already has a participant for ${organization}`);
	}
	if (error.collection === PROCESS_CLAIMS_MODEL.collection && subject) {
		const held = await claims.getMany(subject.processIds.map((id) => claimIdentifier(subject.organizationKey, id)));
		const taken = held.filter((claim) => claim.participant !== subject.identifier).map((claim) => claim.processId);
		return new Conflict(
			`Process ${taken.join(", ") || "(one of the request)"} is already registered for ${organization} by another service provider`,
		);
	}
	return new Conflict(
		`A process of the request is already registered for ${organization} by another service provider`,
	);
}

/** `participants.organizationCards`: a participant's card facts and who owns it. */
export type OrganizationCardEntry = ReturnType<typeof cardFactsOf> & { participant: string; serviceProvider: string };
