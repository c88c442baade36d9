/**
 * One participant of a process replacement job (docs/decisions.md "Bulk jobs"): its new process
 * list is the old one with `from` replaced by `to` (or only without `from` when it holds `to`
 * already), checked with the rules an update uses, and written like an update, as the audited
 * change `replaceProcess` (services/participants/changes.ts), at the participant's version.
 */
import { RegistryError, type Violation } from "../../src/contract/errors";
import { planChange } from "./changes";
import { claimIdentifier, type ParticipantDoc } from "./model";
import type { Participants } from "./participants";
import type { JobProcess, ProcessReplacementJobDoc, ProcessReplacementResultDoc } from "./process-replacement-model";

export type Swap = Pick<ProcessReplacementResultDoc, "participant" | "outcome" | "reason">;

/** `from` replaced by `to` in place; when `to` is held already, `from` only removed. */
export function replacedProcesses(processIds: readonly string[], from: string, to: string): string[] {
	if (processIds.includes(to)) return processIds.filter((id) => id !== from);
	return processIds.map((id) => (id === from ? to : id));
}

function label(process: JobProcess): string {
	return process.qualifiedIdentifier ?? process.identifier;
}

/** The rules' violations as one reason, each naming the process it is about. */
function refusalOf(violations: Violation[], requested: string[]): string {
	return violations
		.map((violation) => {
			const index = /^processes\[(\d+)\]/.exec(violation.field);
			const process = index ? requested[Number(index[1])] : undefined;
			return `${violation.code}${process ? ` (${process})` : ""}: ${violation.defaultMessage}`;
		})
		.join("; ");
}

function participantOf(doc: ParticipantDoc): Swap["participant"] {
	return {
		identifier: doc.identifier,
		qualifiedIdentifier: doc.qualifiedIdentifier,
		...(doc.name ? { name: doc.name } : {}),
	};
}

/** A 409 the change met: another provider claimed `to` for the organization meanwhile, or the version race was lost too often. */
function isConflict(error: unknown): error is RegistryError {
	return (
		(error as { code?: unknown; type?: unknown } | null)?.code === 409 &&
		(error as { type?: unknown }).type === "ConflictException"
	);
}

/**
 * The outcome for one participant (null when it is gone): UNCHANGED when it no longer holds
 * `from`; REFUSED with the rules' reason (or the claim another provider holds); WOULD_REPLACE in a
 * dry run; else REPLACED once committed, which delivers it like any change (lookup, channel, notices).
 */
export async function swapProcess(
	participants: Participants,
	job: ProcessReplacementJobDoc,
	participant: string,
): Promise<Swap | null> {
	const from = job.from.identifier;
	const to = job.to.identifier;
	let seen: ParticipantDoc | null = null;
	try {
		return await participants.exclusive(participant, async () => {
			const before = await participants.collection.get(participant);
			seen = before;
			if (!before) return null;
			const answer = (outcome: Swap["outcome"], reason?: string): Swap => ({
				participant: participantOf(before),
				outcome,
				...(reason ? { reason } : {}),
			});
			if (!before.processIds.includes(from)) return answer("UNCHANGED", `It no longer holds ${label(job.from)}`);
			const requested = replacedProcesses(before.processIds, from, to);
			const violations = await participants.checkProcesses({
				icd: before.icd,
				organizationKey: before.organizationKey,
				requested,
				current: before.processIds,
				self: before.identifier,
			});
			if (violations.length > 0) return answer("REFUSED", refusalOf(violations, requested));
			const claim = await participants.claims.get(claimIdentifier(before.organizationKey, to));
			if (claim && claim.participant !== before.identifier) {
				return answer(
					"REFUSED",
					`Process ${label(job.to)} is already registered for organization ${before.qualifiedIdentifier} by another service provider`,
				);
			}
			const note = before.processIds.includes(to)
				? `It held ${label(job.to)} already; ${label(job.from)} removed`
				: undefined;
			if (job.dryRun) return answer("WOULD_REPLACE", note);
			const after: ParticipantDoc = {
				...before,
				processIds: requested,
				lastModificationDate: new Date().toISOString(),
			};
			await participants.commit([planChange(job.actor, "replaceProcess", before, after)]);
			return answer("REPLACED", note);
		});
	} catch (error) {
		const last = seen as ParticipantDoc | null;
		if (!isConflict(error) || !last) throw error;
		return { participant: participantOf(last), outcome: "REFUSED", reason: error.message };
	}
}
