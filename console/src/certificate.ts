/**
 * What the console shows of an access point endpoint's certificate: its subject and when it
 * ends, read from the DER in the browser (the registry keeps base64 DER; a PEM pasted into a form
 * is read the same way). A few lines of DER reading instead of an X.509 library: the console
 * needs two fields, and its bundle stays small (docs/console.md). The registry itself checks
 * certificates with Node's X509Certificate (src/contract/certificates.ts); test/unit/
 * console-certificate.spec.ts holds this reading to that one.
 */

/** The console's warning comes this close to the end (the registry's gauge uses the same 30 days). */
export const WARNING_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface CertificateSummary {
	/** RFC 2253, most specific first: `CN=…,O=…,C=NO`. */
	subject: string;
	notAfter: Date;
}

interface Element {
	tag: number;
	/** The content's first byte and the byte after it. */
	start: number;
	end: number;
}

const NAMES: Record<string, string> = {
	"2.5.4.3": "CN",
	"2.5.4.5": "serialNumber",
	"2.5.4.6": "C",
	"2.5.4.7": "L",
	"2.5.4.8": "ST",
	"2.5.4.9": "street",
	"2.5.4.10": "O",
	"2.5.4.11": "OU",
	"2.5.4.97": "organizationIdentifier",
	"1.2.840.113549.1.9.1": "emailAddress",
	"0.9.2342.19200300.100.1.25": "DC",
};

function element(bytes: Uint8Array, offset: number, limit: number): Element {
	if (offset + 2 > limit) throw new Error("truncated");
	const tag = bytes[offset];
	let length = bytes[offset + 1];
	let start = offset + 2;
	if (length & 0x80) {
		const count = length & 0x7f;
		if (count === 0 || count > 4 || start + count > limit) throw new Error("bad length");
		length = 0;
		for (let index = 0; index < count; index++) length = length * 256 + bytes[start + index];
		start += count;
	}
	if (start + length > limit) throw new Error("truncated");
	return { tag, start, end: start + length };
}

function children(bytes: Uint8Array, parent: Element): Element[] {
	const found: Element[] = [];
	for (let offset = parent.start; offset < parent.end;) {
		const child = element(bytes, offset, parent.end);
		found.push(child);
		offset = child.end;
	}
	return found;
}

function objectIdentifier(bytes: Uint8Array, oid: Element): string {
	const parts = [Math.floor(bytes[oid.start] / 40), bytes[oid.start] % 40];
	let value = 0;
	for (let index = oid.start + 1; index < oid.end; index++) {
		value = value * 128 + (bytes[index] & 0x7f);
		if (!(bytes[index] & 0x80)) {
			parts.push(value);
			value = 0;
		}
	}
	return parts.join(".");
}

function text(bytes: Uint8Array, value: Element): string {
	const content = bytes.subarray(value.start, value.end);
	if (value.tag === 0x1e) {
		// BMPString: UTF-16 big-endian.
		let out = "";
		for (let index = 0; index + 1 < content.length; index += 2)
			out += String.fromCharCode(content[index] * 256 + content[index + 1]);
		return out;
	}
	return new TextDecoder().decode(content);
}

/** RFC 2253 escaping of an attribute value, as Node writes it. */
function escaped(value: string): string {
	return value
		.replace(/[\\,+"<>;=]/g, (character) => `\\${character}`)
		.replace(/^[ #]/, (character) => `\\${character}`)
		.replace(/ $/, "\\ ");
}

function distinguishedName(bytes: Uint8Array, name: Element): string {
	return children(bytes, name)
		.map((set) =>
			children(bytes, set)
				.map((pair) => {
					const [oid, value] = children(bytes, pair);
					const type = objectIdentifier(bytes, oid);
					return `${NAMES[type] ?? type}=${escaped(text(bytes, value))}`;
				})
				.join("+"),
		)
		.reverse()
		.join(",");
}

function time(bytes: Uint8Array, value: Element): Date {
	const digits = text(bytes, value);
	const match =
		value.tag === 0x17
			? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(digits)
			: /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(digits);
	if (!match) throw new Error("bad time");
	const year = value.tag === 0x17 ? (Number(match[1]) < 50 ? 2000 : 1900) + Number(match[1]) : Number(match[1]);
	return new Date(
		Date.UTC(year, Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]), Number(match[6])),
	);
}

function derOf(value: string): Uint8Array {
	const pem = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(value);
	const binary = atob((pem ? pem[1] : value).replace(/\s+/g, ""));
	return Uint8Array.from(binary, (character) => character.charCodeAt(0));
}

/** Subject and end of a certificate given as base64 DER or PEM; null when it cannot be read. */
export function certificateSummary(value: string): CertificateSummary | null {
	try {
		const bytes = derOf(value);
		const certificate = element(bytes, 0, bytes.length);
		const [tbs] = children(bytes, certificate);
		const fields = children(bytes, tbs);
		// version [0] is optional: the serial number is the first INTEGER.
		const at = fields[0].tag === 0xa0 ? 1 : 0;
		const validity = children(bytes, fields[at + 3]);
		return { subject: distinguishedName(bytes, fields[at + 4]), notAfter: time(bytes, validity[1]) };
	} catch {
		return null;
	}
}

/** "expired", "expiring" (within 30 days) or null, at `now`. */
export function certificateWarning(summary: CertificateSummary, now = Date.now()): "expired" | "expiring" | null {
	if (summary.notAfter.getTime() < now) return "expired";
	return summary.notAfter.getTime() <= now + WARNING_DAYS * DAY_MS ? "expiring" : null;
}

/** A stored base64 DER certificate as PEM, for a text area an administrator edits or copies. */
export function pemOf(base64Der: string): string {
	const lines = base64Der.replace(/\s+/g, "").match(/.{1,64}/g) ?? [];
	return ["-----BEGIN CERTIFICATE-----", ...lines, "-----END CERTIFICATE-----"].join("\n");
}
