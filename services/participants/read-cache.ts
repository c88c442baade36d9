/**
 * The participant read's cache (`participants.get`, Moleculer's cacher: in memory in one process,
 * Redis in a cluster). A read is cached per caller (role and provider) and participant, as
 * addressed: its organization key or its UUID. A committed change drops the reads of that
 * participant by every caller who may see it (its owners before and after, ADMIN and
 * NETWORK_AUTHORITY), so the next read is the new state; a catalog or provider change drops them
 * all. A read that started before a change and stored its answer after the drop (a cluster only)
 * lives until the TTL ends: decisions §11's second.
 */
import { parseParticipantIdentifier } from "../../src/contract/identifiers";
import type { RegistryMeta } from "../../src/platform/context";
import type { ParticipantChange } from "../../src/platform/channels";

export const READ_CACHE_ACTION = "participants.get";
export const READ_CACHE_TTL_SECONDS = 1;

function readKey(role: string, serviceProvider: string, participant: string): string {
	return `${READ_CACHE_ACTION}:${role}|${serviceProvider.toLowerCase()}|${participant}`;
}

/** Moleculer's `cache.keygen` of participants.get: the caller, and the participant as addressed. */
export function participantReadCacheKey(
	_action: string,
	params: { identifier?: string; qualifiedIdentifier?: string },
	meta: unknown,
): string {
	const { user } = meta as RegistryMeta;
	const organization = params.qualifiedIdentifier ? parseParticipantIdentifier(params.qualifiedIdentifier) : null;
	const participant = organization?.organizationKey ?? params.qualifiedIdentifier ?? params.identifier ?? "";
	return readKey(user?.role ?? "", user?.serviceProvider ?? "", participant);
}

/** Every cached read a change of the participant may have made stale. */
export function participantReadsOf(change: ParticipantChange): string[] {
	const reads = [readKey("ADMIN", "", change.participant), readKey("NETWORK_AUTHORITY", "", change.participant)];
	for (const owner of change.serviceProviders ?? [])
		reads.push(
			readKey("SERVICE_PROVIDER", owner, change.organizationKey),
			readKey("SERVICE_PROVIDER", owner, change.participant),
		);
	return reads;
}
