/**
 * X.509 certificates of access point endpoints (decisions §13): what the registry stores and
 * publishes is the base64 of the certificate's DER. Node's X509Certificate does the parsing.
 *
 * A PEM text (one CERTIFICATE block) is accepted too, since that is what administrators have
 * at hand; it is normalised to the same base64 DER, the form the SMP answers carry.
 */
import { X509Certificate } from "node:crypto";

export interface ParsedCertificate {
	/** RFC 2253 distinguished name, most specific first (`CN=…,O=…,C=NO`). */
	subject: string;
	issuer: string;
	/** Upper-case hexadecimal, as Node reports it. */
	serialNumber: string;
	notBefore: Date;
	notAfter: Date;
	pem: string;
	/** The normalised form: base64 of the DER, on one line. */
	base64Der: string;
}

export type CertificateDefect = "not-base64" | "not-x509" | "not-one-certificate";

export class InvalidCertificate extends Error {
	constructor(
		readonly defect: CertificateDefect,
		message: string,
	) {
		super(message);
		this.name = "InvalidCertificate";
	}
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DAY_MS = 24 * 60 * 60 * 1000;

export function parseCertificate(base64DerOrPem: string): ParsedCertificate {
	const der = derOf(base64DerOrPem);
	let certificate: X509Certificate;
	try {
		certificate = new X509Certificate(der);
	} catch {
		throw new InvalidCertificate("not-x509", "the value is not an X.509 certificate");
	}
	// The parser stops at the end of the first certificate: bytes after it would be published unseen.
	if (!certificate.raw.equals(der))
		throw new InvalidCertificate("not-one-certificate", "the value holds more than one certificate");
	return {
		subject: distinguishedName(certificate.subject),
		issuer: distinguishedName(certificate.issuer),
		serialNumber: certificate.serialNumber,
		notBefore: new Date(certificate.validFrom),
		notAfter: new Date(certificate.validTo),
		pem: certificate.toString(),
		base64Der: der.toString("base64"),
	};
}

/** Why a certificate field is refused, or null when it is acceptable. */
export function certificateProblem(base64Der: string, now = new Date()): "invalid" | "expired" | null {
	const certificate = tryParse(base64Der);
	if (!certificate) return "invalid";
	return certificate.notAfter.getTime() < now.getTime() ? "expired" : null;
}

/** True when the certificate has expired or expires within `days` of `now`; false for one that does not parse. */
export function expiresWithin(base64Der: string, days: number, now = new Date()): boolean {
	const certificate = tryParse(base64Der);
	return certificate !== null && certificate.notAfter.getTime() <= now.getTime() + days * DAY_MS;
}

/**
 * Node writes a name one attribute a line, least specific first, values already escaped as
 * RFC 2253 asks; RFC 2253 writes them most specific first, separated by commas.
 */
export function distinguishedName(nodeName: string): string {
	return nodeName.split("\n").reverse().join(",");
}

function tryParse(base64Der: string): ParsedCertificate | null {
	try {
		return parseCertificate(base64Der);
	} catch (error) {
		if (error instanceof InvalidCertificate) return null;
		throw error;
	}
}

function derOf(value: string): Buffer {
	const blocks = [...value.matchAll(PEM_BLOCK)];
	if (blocks.length > 1 || (blocks.length === 1 && blocks[0][1] !== "CERTIFICATE"))
		throw new InvalidCertificate("not-one-certificate", "a PEM value must hold exactly one CERTIFICATE");
	const base64 = (blocks.length === 1 ? blocks[0][2] : value).replace(/\s+/g, "");
	// Buffer.from skips characters outside the alphabet; a value with any is not base64 at all.
	if (base64.length === 0 || !BASE64.test(base64))
		throw new InvalidCertificate("not-base64", "the value is neither base64 nor a PEM certificate");
	return Buffer.from(base64, "base64");
}
