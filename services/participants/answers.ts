/**
 * Stored participant → the spec's Participant (spec "Participant"): dates as UTC calendar
 * dates, `deleteDate` only when set, `provider` and `processes` when resolved.
 */
import type { Participant, Process, ServiceProvider } from "../../src/contract/model";
import { calendarDate } from "../../src/contract/dates";
import type { ParticipantDoc } from "./model";

export function participantAnswer(doc: ParticipantDoc, provider?: ServiceProvider, processes?: Process[]): Participant {
	return {
		identifier: doc.identifier,
		qualifiedIdentifier: doc.qualifiedIdentifier,
		icd: doc.icd,
		organizationIdentifier: doc.organizationIdentifier,
		...(doc.name !== null && doc.name !== undefined ? { name: doc.name } : {}),
		registrationDate: calendarDate(doc.registrationDate),
		lastModificationDate: calendarDate(doc.lastModificationDate),
		...(doc.deleteDate ? { deleteDate: doc.deleteDate } : {}),
		contact: doc.contact,
		...(provider ? { provider: { identifier: provider.identifier, title: provider.title } } : {}),
		...(processes ? { processes } : {}),
	};
}

/** The stored processes of a participant, resolved, in its order; ones the catalog no longer has are left out. */
export function processesOf(doc: ParticipantDoc, resolved: Map<string, Process>): Process[] {
	const processes: Process[] = [];
	for (const id of doc.processIds) {
		const process = resolved.get(id);
		if (process) processes.push(process);
	}
	return processes;
}

/**
 * The participant as the change feed carries it (src/platform/audit.ts FeedChange): the answer's
 * fields with its provider and processes as references, so a renamed provider or process is a
 * change of that record alone.
 */
export function participantReference(doc: ParticipantDoc): Omit<Participant, "provider" | "processes"> & {
	provider: { identifier: string };
	processes: { identifier: string }[];
} {
	const processes: { identifier: string }[] = [];
	for (const identifier of doc.processIds) processes.push({ identifier });
	return { ...participantAnswer(doc), provider: { identifier: doc.serviceProvider }, processes };
}
