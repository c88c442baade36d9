/**
 * GET /rest/api/events (docs/decisions.md "Audit events"): who sees which audit records,
 * and the query parameters participant, operation, from and to as a store filter. Pure.
 */
import { instantBound } from "../../src/contract/dates";
import { AccessDenied, TypeMismatch } from "../../src/contract/errors";
import { isUuid, parseParticipantIdentifier } from "../../src/contract/identifiers";
import { seesEverything, type Caller } from "../../src/contract/model";
import type { Filter } from "../../src/store/types";

export interface EventsQuery {
	participant?: string;
	operation?: string;
	from?: string;
	to?: string;
}

/**
 * Which records a caller may read: a service provider those naming its provider (its
 * participants' events, both sides of a transfer); ADMIN and NETWORK_AUTHORITY all.
 */
export function eventScope(caller: Caller | null | undefined): Filter {
	if (seesEverything(caller)) return {};
	if (caller?.role === "SERVICE_PROVIDER" && caller.serviceProvider)
		return { serviceProviders: caller.serviceProvider.toLowerCase() };
	throw new AccessDenied();
}

/**
 * The store filter of a find: the caller's scope and the query parameters, ANDed.
 * `participant`: a UUID names one participant; a qualified identifier names an organization:
 * for a service provider its participant(s) of that organization (within its scope, so also
 * one it transferred away or deleted), for the others every participant of it.
 */
export function eventsFilter(caller: Caller | null | undefined, query: EventsQuery): Filter {
	const filter: Filter = { ...eventScope(caller) };
	if (query.participant !== undefined) {
		const value = query.participant.trim();
		if (isUuid(value)) {
			filter.participant = value.toLowerCase();
		} else {
			const organization = parseParticipantIdentifier(value);
			if (!organization) {
				throw new TypeMismatch(
					`Query parameter 'participant' must be a participant qualified identifier or a UUID; value: '${query.participant}'`,
				);
			}
			filter.organizationKey = organization.organizationKey;
		}
	}
	if (query.operation !== undefined) filter.operation = query.operation;
	const at: { gte?: string; lte?: string } = {};
	if (query.from !== undefined) at.gte = instantBound("from", query.from, "from");
	if (query.to !== undefined) at.lte = instantBound("to", query.to, "to");
	if (at.gte !== undefined || at.lte !== undefined) filter.at = at as Filter[string];
	return filter;
}
