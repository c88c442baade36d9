/**
 * Access point certificates (decisions §13, src/contract/certificates.ts): parsed by Node's
 * X509Certificate, stored and published as base64 DER, refused when invalid or expired, and
 * flagged when they expire within the console's 30 days.
 */
import { X509Certificate } from "node:crypto";
import { generate } from "selfsigned";
import {
	InvalidCertificate,
	certificateProblem,
	distinguishedName,
	expiresWithin,
	parseCertificate,
} from "../../src/contract/certificates";

const DAY_MS = 24 * 60 * 60 * 1000;
const NOW = new Date();

async function certificatePem(notBeforeDate: Date, notAfterDate: Date): Promise<string> {
	const pair = await generate(
		// In the order a certificate's name lists them: least specific first.
		[
			{ name: "countryName", value: "NO" },
			{ name: "organizationName", value: "Example AP" },
			{ name: "commonName", value: "ap.example.no" },
		],
		{ keyType: "ec", algorithm: "sha256", notBeforeDate, notAfterDate },
	);
	return pair.cert;
}

function base64DerOf(pem: string): string {
	return new X509Certificate(pem).raw.toString("base64");
}

let validPem: string;
let expiredPem: string;
let expiringSoonPem: string;

beforeAll(async () => {
	validPem = await certificatePem(new Date(NOW.getTime() - DAY_MS), new Date(NOW.getTime() + 365 * DAY_MS));
	expiredPem = await certificatePem(new Date(NOW.getTime() - 60 * DAY_MS), new Date(NOW.getTime() - DAY_MS));
	expiringSoonPem = await certificatePem(new Date(NOW.getTime() - DAY_MS), new Date(NOW.getTime() + 10 * DAY_MS));
});

describe("parseCertificate", () => {
	test("a base64 DER certificate gives its subject, issuer, serial number and validity", () => {
		const node = new X509Certificate(validPem);
		const parsed = parseCertificate(base64DerOf(validPem));
		expect(parsed).toEqual({
			subject: "CN=ap.example.no,O=Example AP,C=NO",
			issuer: "CN=ap.example.no,O=Example AP,C=NO",
			serialNumber: node.serialNumber,
			notBefore: new Date(node.validFrom),
			notAfter: new Date(node.validTo),
			pem: node.toString(),
			base64Der: base64DerOf(validPem),
		});
	});

	test("a PEM certificate is accepted and normalised to the same base64 DER", () => {
		expect(parseCertificate(validPem).base64Der).toBe(base64DerOf(validPem));
	});

	test("base64 wrapped over several lines, as in a PEM body, is the same certificate", () => {
		const wrapped = base64DerOf(validPem).replace(/.{64}/g, "$&\n");
		expect(parseCertificate(wrapped).base64Der).toBe(base64DerOf(validPem));
	});

	test.each([
		["garbage text", "this is not a certificate", "not-base64"],
		["an empty value", "  ", "not-base64"],
		["base64 of something else", Buffer.from("not DER at all").toString("base64"), "not-x509"],
		["a PEM private key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", "not-one-certificate"],
	])("%s is refused with a typed error", (_, value, defect) => {
		expect(() => parseCertificate(value)).toThrow(InvalidCertificate);
		expect(() => parseCertificate(value)).toThrow(expect.objectContaining({ defect }));
	});

	test("a certificate followed by other bytes is refused (they would be published unseen)", () => {
		const der = Buffer.concat([Buffer.from(base64DerOf(validPem), "base64"), Buffer.from([0, 1, 2])]);
		expect(() => parseCertificate(der.toString("base64"))).toThrow(
			expect.objectContaining({ defect: "not-one-certificate" }),
		);
	});

	test("a PEM text with two certificates is refused", () => {
		expect(() => parseCertificate(`${validPem}\n${expiredPem}`)).toThrow(
			expect.objectContaining({ defect: "not-one-certificate" }),
		);
	});
});

describe("certificateProblem (field validation)", () => {
	test("a valid, unexpired certificate has no problem", () => {
		expect(certificateProblem(base64DerOf(validPem), NOW)).toBeNull();
	});

	test("an expired certificate is refused as expired", () => {
		expect(certificateProblem(base64DerOf(expiredPem), NOW)).toBe("expired");
	});

	test.each(["garbage", Buffer.from("garbage").toString("base64"), ""])("%p is refused as invalid", (value) => {
		expect(certificateProblem(value, NOW)).toBe("invalid");
	});
});

describe("expiresWithin (the console and the alert: 30 days)", () => {
	test("a certificate expiring in 10 days expires within 30", () => {
		expect(expiresWithin(base64DerOf(expiringSoonPem), 30, NOW)).toBe(true);
	});

	test("a certificate valid for a year does not", () => {
		expect(expiresWithin(base64DerOf(validPem), 30, NOW)).toBe(false);
	});

	test("an expired certificate counts as expiring", () => {
		expect(expiresWithin(base64DerOf(expiredPem), 30, NOW)).toBe(true);
	});

	test("a value that is no certificate does not", () => {
		expect(expiresWithin("garbage", 30, NOW)).toBe(false);
	});
});

describe("distinguished names", () => {
	test("Node's one-attribute-a-line name becomes RFC 2253, most specific first, escapes kept", () => {
		expect(distinguishedName("C=NO\nO=Acme\\, Inc.\nCN=smp.example.no")).toBe(
			"CN=smp.example.no,O=Acme\\, Inc.,C=NO",
		);
	});
});
