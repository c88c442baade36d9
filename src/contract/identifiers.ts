/**
 * Identifiers (spec "Qualified identifier", decisions §5). Pure functions.
 */
import { UUID_PATTERN } from "./validation";

export const PARTICIPANT_SCHEME = "iso6523-actorid-upis";
export const DOCUMENT_TYPE_SCHEME = "busdox-docid-qns";
export const PROCESS_SCHEME = "cenbii-procid-ubl";

export interface OrganizationRef {
	icd: string;
	organizationIdentifier: string;
	/** Case-folded `icd:organizationIdentifier`: the key under which an organization is compared and stored. */
	organizationKey: string;
}

const HYPHEN = 0x2d;

export function isUuid(value: string): boolean {
	// A Norwegian participant's qualified identifier is 36 characters too: its "a" at 8 turns it away before the pattern runs.
	return value.length === 36 && value.charCodeAt(8) === HYPHEN && UUID_PATTERN.test(value);
}

export const ICD_PATTERN = /^\d{1,4}$/;

/** Norway's ICD: its organization identifiers are nine-digit organization numbers. */
export const NORWEGIAN_ICD = "0192";

export function organizationKey(icd: string, organizationIdentifier: string): string {
	return `${icd}:${organizationIdentifier.toLowerCase()}`;
}

/** The qualified identifier a participant is answered with. */
export function participantQualifiedIdentifier(icd: string, organizationIdentifier: string): string {
	return `${PARTICIPANT_SCHEME}::${icd}:${organizationIdentifier}`;
}

/**
 * An organization identifier of any ICD (decisions §5) is printable US-ASCII without space, 1–35
 * characters. Two values a reader cannot tell apart (a zero-width space, a fullwidth digit, a
 * no-break space) would otherwise be two organizations, each with its own receiving providers.
 */
const ORGANIZATION_IDENTIFIER_CHARACTERS = /^[\x21-\x7e]*$/;
export const ORGANIZATION_IDENTIFIER_MAX_LENGTH = 35;

/**
 * What is wrong with an organization identifier for its ICD, as a validation code: `Pattern`
 * (a character outside printable US-ASCII, or a space), `OrganizationNumber` (ICD 0192's MOD11),
 * or null. Its length (`Size`) is the request schemas'. Every entry of an organization identifier
 * asks this: forms, seed files, imports, and path values (parseParticipantIdentifier).
 */
export function organizationIdentifierFault(
	icd: string,
	organizationIdentifier: string,
): "Pattern" | "OrganizationNumber" | null {
	if (!ORGANIZATION_IDENTIFIER_CHARACTERS.test(organizationIdentifier)) return "Pattern";
	if (icd === NORWEGIAN_ICD && !isValidNorwegianOrganizationNumber(organizationIdentifier))
		return "OrganizationNumber";
	return null;
}

/**
 * `<scheme>::<icd>:<organizationIdentifier>` → its parts, or null when the value does not
 * have that shape. The scheme is compared case-insensitively and must be the participant
 * scheme; the ICD is 1–4 digits; the organization identifier 1–35 printable US-ASCII characters.
 */
export function parseParticipantIdentifier(value: string): OrganizationRef | null {
	const separator = value.indexOf("::");
	if (separator < 0) return null;
	const scheme = value.slice(0, separator);
	if (scheme !== PARTICIPANT_SCHEME && scheme.toLowerCase() !== PARTICIPANT_SCHEME) return null;
	const rest = value.slice(separator + 2);
	const colon = rest.indexOf(":");
	if (colon < 0) return null;
	const icd = rest.slice(0, colon);
	const organizationIdentifier = rest.slice(colon + 1);
	if (!ICD_PATTERN.test(icd) || !isOrganizationIdentifierShape(organizationIdentifier)) return null;
	return { icd, organizationIdentifier, organizationKey: organizationKey(icd, organizationIdentifier) };
}

/** 1–35 characters, each printable US-ASCII (decisions §5); the ICD's own rules aside. */
function isOrganizationIdentifierShape(value: string): boolean {
	return (
		value.length >= 1 &&
		value.length <= ORGANIZATION_IDENTIFIER_MAX_LENGTH &&
		ORGANIZATION_IDENTIFIER_CHARACTERS.test(value)
	);
}

/** Norwegian organization number (ICD 0192): 9 digits, MOD11 with weights 3,2,7,6,5,4,3,2. */
export function isValidNorwegianOrganizationNumber(value: string): boolean {
	if (!/^\d{9}$/.test(value)) return false;
	const weights = [3, 2, 7, 6, 5, 4, 3, 2];
	const sum = weights.reduce((total, weight, index) => total + weight * Number(value[index]), 0);
	const remainder = sum % 11;
	const check = remainder === 0 ? 0 : 11 - remainder;
	return check !== 10 && check === Number(value[8]);
}
