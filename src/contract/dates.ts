/** Dates in answers are UTC calendar dates (decisions §6). */

/** `YYYY-MM-DD` of an instant, in UTC. */
export function calendarDate(instant: string | Date): string {
	return (typeof instant === "string" ? new Date(instant) : instant).toISOString().slice(0, 10);
}
