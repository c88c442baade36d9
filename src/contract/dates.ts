/** Dates in answers are UTC calendar dates (decisions §6); dates in queries bound instants. */
import { TypeMismatch } from "./errors";

/** `YYYY-MM-DD` of an instant, in UTC. */
export function calendarDate(instant: string | Date): string {
	return (typeof instant === "string" ? new Date(instant) : instant).toISOString().slice(0, 10);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
	/^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/i;

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

/**
 * The instant an ISO 8601 date or date-time names (a date: the start of that UTC day; a
 * date-time without a zone: UTC), or null when it is none. Endpoint activation and
 * expiration dates are read this way.
 */
export function parseInstant(text: string): Date | null {
	if (DATE.test(text)) return validCalendarDate(text) ? new Date(`${text}T00:00:00.000Z`) : null;
	const match = DATE_TIME.exec(text);
	if (!match || !validCalendarDate(match[1])) return null;
	const instant = new Date(match[6] ? text : `${text}Z`);
	return Number.isNaN(instant.getTime()) ? null : instant;
}
