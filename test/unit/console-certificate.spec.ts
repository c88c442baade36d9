/**
 * The console's reading of endpoint certificates (console/src/certificate.ts) against the
 * registry's own (src/contract/certificates.ts, Node's X509Certificate): the same subject and end,
 * for EC and RSA certificates, PEM or base64 DER; and the 30-day warning.
 */
import fs from "node:fs";
import path from "node:path";
import { certificateSummary, certificateWarning, pemOf } from "../../console/src/certificate";
import { expiresWithin, parseCertificate } from "../../src/contract/certificates";
import { base64DerOf, certificatePem } from "../support/certificates";

const DEMO = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "seed", "demo.json"), "utf8")) as {
	accessPoints: { endpoints: { certificate: string }[] }[];
};
const DAY_MS = 24 * 60 * 60 * 1000;

test("subject and end are Node's, for the demo's RSA certificates and generated EC ones, PEM or base64 DER", async () => {
	const certificates = [
		...DEMO.accessPoints.map((accessPoint) => accessPoint.endpoints[0].certificate),
		base64DerOf(await certificatePem(365, "ap.example.no")),
		await certificatePem(10, "PNO000999"),
	];
	for (const certificate of certificates) {
		const node = parseCertificate(certificate);
		expect(certificateSummary(certificate)).toEqual({ subject: node.subject, notAfter: node.notAfter });
	}
	expect(certificateSummary(DEMO.accessPoints[0].endpoints[0].certificate)?.subject).toBe(
		"CN=PNO000101,OU=PEPPOL PRODUCTION AP,O=Nordlys Aksesspunkt AS,C=NO",
	);
});

test("a stored certificate shown as PEM reads back the same", () => {
	const stored = DEMO.accessPoints[1].endpoints[0].certificate;
	expect(parseCertificate(pemOf(stored)).base64Der).toBe(stored);
	expect(certificateSummary(pemOf(stored))).toEqual(certificateSummary(stored));
});

test("what is not a certificate reads as null, never an exception", () => {
	for (const value of ["", "AAAA", "not base64!", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"])
		expect(certificateSummary(value)).toBeNull();
});

test("the warning agrees with the registry's expiresWithin: expiring within 30 days, expired after its end", async () => {
	const soon = await certificatePem(10);
	const later = await certificatePem(60);
	const expired = await certificatePem(-1);
	const summary = (pem: string) => certificateSummary(pem) as NonNullable<ReturnType<typeof certificateSummary>>;
	expect(certificateWarning(summary(soon))).toBe("expiring");
	expect(expiresWithin(soon, 30)).toBe(true);
	expect(certificateWarning(summary(later))).toBeNull();
	expect(expiresWithin(later, 30)).toBe(false);
	expect(certificateWarning(summary(expired))).toBe("expired");
	expect(certificateWarning(summary(later), Date.now() + 45 * DAY_MS)).toBe("expiring");
});
