/**
 * Identifiers in SMP paths (decisions §13): a qualified identifier `scheme::value` is one path
 * segment, percent-encoded as RFC 3986 says for data in a segment, the way the Peppol SMP
 * specification shows it (`::` as `%3A%3A`, `#` as `%23`, `/` as `%2F`). docs/smp.md has the rules.
 */

export interface SmpIdentifier {
	scheme: string;
	value: string;
}

const SEPARATOR = "::";
/** RFC 3986 unreserved characters and `+` (decisions §13: literal): the ones a segment carries as they are. */
const UNRESERVED = /[A-Za-z0-9\-._~+]/;

/** Splits at the first `::`, since document type values hold `::` of their own; null without a scheme and a value. */
export function splitQualifiedIdentifier(qualified: string): SmpIdentifier | null {
	const at = qualified.indexOf(SEPARATOR);
	const value = qualified.slice(at + SEPARATOR.length);
	if (at <= 0 || value.length === 0) return null;
	return { scheme: qualified.slice(0, at), value };
}

export function qualifiedIdentifier(identifier: SmpIdentifier): string {
	return `${identifier.scheme}${SEPARATOR}${identifier.value}`;
}

/**
 * One path segment. Everything but the unreserved characters and `+` is percent-encoded as UTF-8:
 * in a path `+` means `+` (RFC 3986 allows it in a segment), and decisions §13 keeps it literal.
 */
export function encodePathSegment(text: string): string {
	let encoded = "";
	for (const character of text) encoded += UNRESERVED.test(character) ? character : percentEncode(character);
	return encoded;
}

export function encodeIdentifierSegment(identifier: SmpIdentifier): string {
	return encodePathSegment(qualifiedIdentifier(identifier));
}

/**
 * A received path segment (the path already split at its `/`), or null when its percent-encoding
 * is broken. `%2F` is a `/` of the identifier; `+` stays `+`: a path is not a form.
 */
export function decodePathSegment(segment: string): string | null {
	try {
		return decodeURIComponent(segment);
	} catch {
		return null;
	}
}

/** A received segment as an identifier, or null when it is not `scheme::value`. */
export function decodeIdentifierSegment(segment: string): SmpIdentifier | null {
	const decoded = decodePathSegment(segment);
	return decoded === null ? null : splitQualifiedIdentifier(decoded);
}

function percentEncode(character: string): string {
	let encoded = "";
	for (const byte of Buffer.from(character, "utf8"))
		encoded += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
	return encoded;
}
