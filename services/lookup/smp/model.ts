/**
 * What an SMP answer is built from, the same for Peppol SMP 1.x and OASIS SMP 2.0: plain data
 * the lookup gathers from its read model (decisions §13), no knowledge of XML.
 */
import type { SmpIdentifier } from "./identifiers";

export type { SmpIdentifier } from "./identifiers";

export interface SmpEndpoint {
	/** e.g. `peppol-transport-as4-v2_0`. */
	transportProfile: string;
	url: string;
	/** Base64 of the access point certificate's DER. */
	certificate: string;
	/** ISO 8601 date (`2025-01-31`) or date-time (`2025-01-31T12:00:00Z`). */
	activationDate?: string;
	expirationDate?: string;
	description?: string;
	technicalContactUrl?: string;
}

export interface SmpProcess {
	identifier: SmpIdentifier;
	endpoints: SmpEndpoint[];
}

export interface SmpServiceMetadata {
	participant: SmpIdentifier;
	documentType: SmpIdentifier;
	processes: SmpProcess[];
}

export interface SmpServiceGroup {
	participant: SmpIdentifier;
	documentTypes: SmpIdentifier[];
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** An xs:dateTime in UTC; a date alone is the start of that day in UTC. */
export function xmlDateTime(text: string): string {
	const instant = DATE_ONLY.test(text) ? new Date(`${text}T00:00:00Z`) : new Date(text);
	if (Number.isNaN(instant.getTime())) throw new Error(`not an ISO 8601 date or date-time: ${text}`);
	return instant.toISOString().replace(".000Z", "Z");
}

/** An xs:date: a date as given, or the UTC date of a date-time. */
export function xmlDate(text: string): string {
	return DATE_ONLY.test(text) ? text : xmlDateTime(text).slice(0, 10);
}
