/**
 * The Peppol Directory business card of an organization (decisions §14, docs/smp.md): the one
 * builder of it. The lookup answers `GET /businesscard/{participantId}` with it, and the network
 * service builds the card it expects with it before telling the Directory, comparing bytes: the
 * same entities always give the same text, whatever order they come in.
 */
import { PARTICIPANT_SCHEME } from "./identifiers";
import { escape } from "./xml";

export const BUSINESS_CARD_NAMESPACE = "http://www.peppol.eu/schema/pd/businesscard/20180621/";

/** One participant of the organization, as its card shows it. */
export interface BusinessEntity {
	/** The participant's name; empty when it has none (the card then shows its organization identifier). */
	name: string;
	/** `YYYY-MM-DD` (UTC). */
	registrationDate: string;
	icd: string;
	/** As registered (its case kept). */
	organizationIdentifier: string;
}

/**
 * BusinessCard V3: the participant (`iso6523-actorid-upis`, `participantValue` the lower-case
 * `<icd>:<organizationIdentifier>`), one BusinessEntity per participant sorted by registration
 * date, name, identifier; each with its name, `countryCode`, the organization identifier under
 * its ICD and its registration date. No contact: the contract publishes none anonymously.
 */
export function businessCardXml(participantValue: string, entities: BusinessEntity[], countryCode: string): string {
	const ordered = [...entities].sort(byDateNameIdentifier);
	let xml = `<?xml version="1.0" encoding="UTF-8"?><BusinessCard xmlns="${BUSINESS_CARD_NAMESPACE}">`;
	xml += `<ParticipantIdentifier scheme="${PARTICIPANT_SCHEME}">${escape(participantValue)}</ParticipantIdentifier>`;
	for (const entity of ordered) {
		xml += `<BusinessEntity registrationDate="${escape(entity.registrationDate)}">`;
		// The schema wants a non-empty Name.
		xml += `<Name>${escape(entity.name.trim() ? entity.name : entity.organizationIdentifier)}</Name>`;
		xml += `<CountryCode>${escape(countryCode)}</CountryCode>`;
		xml += `<Identifier scheme="${escape(entity.icd)}">${escape(entity.organizationIdentifier)}</Identifier>`;
		xml += "</BusinessEntity>";
	}
	return `${xml}</BusinessCard>`;
}

/** Code-unit order (not the locale's): the same on every node. */
function compare(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}

function byDateNameIdentifier(a: BusinessEntity, b: BusinessEntity): number {
	return (
		compare(a.registrationDate, b.registrationDate) ||
		compare(a.name, b.name) ||
		compare(a.icd, b.icd) ||
		compare(a.organizationIdentifier, b.organizationIdentifier)
	);
}
