/**
 * GET /rest/api/events (docs/decisions.md "Audit events"): who sees which audit records,
 * and the query parameters participant, operation, from and to as a store filter. Pure.
 */
import { RegistryError, TypeMismatch } from "../../src/contract/errors";
import { isUuid, parseParticipantIdentifier } from "../../src/contract/identifiers";
import type { Caller } from "../../src/contract/model";
import type { Filter } from "../../src/store/types";

export interface EventsQuery {
	participant?: string;
	operation?: string;
	from?: string;
	to?: string;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/i;

function validCalendarDate(text: string): boolean {
	const match = DATE.exec(text);
	if (!match) return false;
	const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
	return Number(match[1]) >= 1 && date.toISOString().slice(0, 10) === text;
}

function mismatch(name: string, value: string): TypeMismatch {
	return new TypeMismatch(
		`Failed to convert value of type 'java.lang.String' to required type 'java.time.OffsetDateTime' for parameter '${name}'; value: '${value}' (expected YYYY-MM-DD or an ISO 8601 date-time)`,
	);
}

/**
 * A `from`/`to` value as the ISO instant it bounds, inclusively. A date means the whole UTC
 * day (from its first to its last millisecond); a date-time without a zone is UTC. A `+`
 * of an offset that arrived as a space (an unencoded `+` in a query string) is read as `+`.
 */
export function instantBound(name: string, raw: string, edge: "from" | "to"): string {
	const value = raw.trim().replace(/ (\d{2}:?\d{2})$/, "+$1");
	if (DATE.test(value)) {
		if (!validCalendarDate(value)) throw mismatch(name, raw);
		return edge === "from" ? `${value}T00:00:00.000Z` : `${value}T23:59:59.999Z`;
	}
	const match = DATE_TIME.exec(value);
	if (!match || !validCalendarDate(match[1])) throw mismatch(name, raw);
	const instant = new Date(match[6] ? value : `${value}Z`);
	if (Number.isNaN(instant.getTime())) throw mismatch(name, raw);
	return instant.toISOString();
}

function denied(): RegistryError {
	return new RegistryError(403, "AccessDeniedException", "Access is denied");
}

/**
 * Which records a caller may read: a service provider those naming its provider (its
 * participants' events, both sides of a transfer); ADMIN and NETWORK_AUTHORITY all.
 */
export function eventScope(caller: Caller | null | undefined): Filter {
	if (!caller) throw denied();
	if (caller.role === "ADMIN" || caller.role === "NETWORK_AUTHORITY") return {};
	if (caller.role === "SERVICE_PROVIDER" && caller.serviceProvider) return { serviceProviders: caller.serviceProvider.toLowerCase() };
	throw denied();
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
				throw new TypeMismatch(`Query parameter 'participant' must be a participant qualified identifier or a UUID; value: '${query.participant}'`);
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
