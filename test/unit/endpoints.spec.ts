/**
 * Access point endpoints with the SMP publishing fields (decisions §13; src/contract/endpoints.ts):
 * the rules beyond shape and the stored form.
 */
import { endpointViolations, storedEndpoint, type EndpointInput } from "../../src/contract/endpoints";
import { parseInstant } from "../../src/contract/dates";
import { base64DerOf, certificatePem } from "../support/certificates";

const AS4 = { title: "Peppol AS4 profile v2", value: "peppol-transport-as4-v2_0", certificateTypes: ["Peppol AP"] };
const endpoint = (fields: Partial<EndpointInput> = {}): EndpointInput => ({
	url: "https://ap.example/as4",
	transportProfile: AS4,
	...fields,
});

let validPem: string;
let expiredPem: string;
beforeAll(async () => {
	validPem = await certificatePem(365);
	expiredPem = await certificatePem(-1);
});

describe("endpointViolations", () => {
	test("an endpoint with a valid certificate (PEM or base64 DER), ordered dates and the other fields passes", () => {
		expect(
			endpointViolations([
				endpoint({
					certificate: validPem,
					activationDate: "2026-01-01",
					expirationDate: "2030-01-01T00:00:00Z",
					description: "Production",
					technicalContactUrl: "https://ap.example/contact",
				}),
				endpoint({ certificate: base64DerOf(validPem) }),
				endpoint(),
			]),
		).toEqual([]);
	});

	test("a certificate that is not X.509 is refused with code Certificate on its field", () => {
		expect(endpointViolations([endpoint(), endpoint({ certificate: "bm90IGEgY2VydGlmaWNhdGU=" })])).toEqual([
			{
				field: "endpoints[1].certificate",
				code: "Certificate",
				defaultMessage: "must be one X.509 certificate, as base64 DER or PEM",
				rejectedValue: "bm90IGEgY2VydGlmaWNhdGU=",
				bindingFailure: false,
			},
		]);
		expect(endpointViolations([endpoint({ certificate: "not base64 at all!" })])[0].code).toBe("Certificate");
		expect(endpointViolations([endpoint({ certificate: `${validPem}${validPem}` })])[0].code).toBe("Certificate");
	});

	test("an expired certificate is refused with code CertificateExpired", () => {
		expect(endpointViolations([endpoint({ certificate: expiredPem })])).toEqual([
			expect.objectContaining({ field: "endpoints[0].certificate", code: "CertificateExpired" }),
		]);
	});

	test("the certificate is judged at the instant given: valid today, expired two years on", () => {
		const later = new Date(Date.now() + 2 * 365 * 24 * 60 * 60 * 1000);
		expect(endpointViolations([endpoint({ certificate: validPem })], "endpoints", later)[0].code).toBe(
			"CertificateExpired",
		);
	});

	test("an expiration before the activation is refused on expirationDate; equal instants pass", () => {
		expect(
			endpointViolations(
				[endpoint({ activationDate: "2027-06-01", expirationDate: "2027-05-31T23:59:59Z" })],
				"accessPoints[2].endpoints",
			),
		).toEqual([
			expect.objectContaining({
				field: "accessPoints[2].endpoints[0].expirationDate",
				code: "ExpirationBeforeActivation",
				rejectedValue: "2027-05-31T23:59:59Z",
			}),
		]);
		expect(
			endpointViolations([endpoint({ activationDate: "2027-06-01", expirationDate: "2027-06-01T00:00:00Z" })]),
		).toEqual([]);
	});

	test("a date that does not exist is a Pattern violation", () => {
		expect(endpointViolations([endpoint({ activationDate: "2027-02-30" })])).toEqual([
			expect.objectContaining({ field: "endpoints[0].activationDate", code: "Pattern" }),
		]);
	});
});

describe("storedEndpoint", () => {
	test("a PEM certificate is stored as base64 DER; empty and null optional fields are left out", () => {
		expect(
			storedEndpoint(
				endpoint({
					certificate: validPem,
					description: "",
					technicalContactUrl: null,
					activationDate: "2026-01-01",
				}),
			),
		).toEqual({
			url: "https://ap.example/as4",
			transportProfile: AS4,
			certificate: base64DerOf(validPem),
			activationDate: "2026-01-01",
		});
	});
});

test("parseInstant reads a date as the start of its UTC day and a date-time without zone as UTC", () => {
	expect(parseInstant("2026-03-01")?.toISOString()).toBe("2026-03-01T00:00:00.000Z");
	expect(parseInstant("2026-03-01T10:15")?.toISOString()).toBe("2026-03-01T10:15:00.000Z");
	expect(parseInstant("2026-03-01T10:15:00+01:00")?.toISOString()).toBe("2026-03-01T09:15:00.000Z");
	expect(parseInstant("2026-13-01")).toBeNull();
	expect(parseInstant("yesterday")).toBeNull();
});
