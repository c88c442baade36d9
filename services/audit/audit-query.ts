/**
 * GET /rest/api/events (docs/decisions.md "Audit events"): who sees which audit records,
 * and the query parameters participant, operation, from and to as a store filter. Pure.
 */
import { instantBound } from "../../src/contract/dates";
import { AccessDenied, TypeMismatch } from "../../src/contract/errors";
import { isUuid, parseParticipantIdentifier } from "../../src/contract/identifiers";
import type { Caller } from "../../src/contract/model";
import type { AuditRecord } from "../../src/platform/audit";
import type { Filter } from "../../src/store/types";

export interface EventsQuery {
	participant?: string;
	operation?: string;
	from?: string;
	to?: string;
}

/**
 * The audit trail of participants and the catalog: what NETWORK_AUTHORITY reads (decisions §4).
 * A list of what it may see, not of what it may not: the records of accounts and service
 * providers' credentials, and any resource added later, stay ADMIN's.
 */
export const NETWORK_AUTHORITY_RESOURCES: readonly AuditRecord["resource"][] = [
	"participant",
	"transfer",
	"process",
	"documentType",
	"capability",
];

/**
 * Which records a caller may read, in the audit trail and the change feed alike: a service
 * provider those naming its provider (its participants' events, both sides of a transfer);
 * NETWORK_AUTHORITY those of participants and the catalog; ADMIN all.
 */
export function eventScope(caller: Caller | null | undefined): Filter {
	if (caller?.role === "ADMIN") return {};
	if (caller?.role === "NETWORK_AUTHORITY") return { resource: { in: [...NETWORK_AUTHORITY_RESOURCES] } };
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
