/**
 * Access point certificates for tests (src/contract/certificates.ts): self-signed, valid from
 * a day ago, ending `days` from now (negative: already expired).
 */
import { X509Certificate } from "node:crypto";
import { generate } from "selfsigned";

const DAY_MS = 24 * 60 * 60 * 1000;

/** A PEM certificate whose subject is `CN=<commonName>,O=Test AP,C=NO`. */
export async function certificatePem(days: number, commonName = "ap.example.no"): Promise<string> {
	const now = Date.now();
	const pair = await generate(
		[
			{ name: "countryName", value: "NO" },
			{ name: "organizationName", value: "Test AP" },
			{ name: "commonName", value: commonName },
		],
		{
			keyType: "ec",
			algorithm: "sha256",
			notBeforeDate: new Date(now - Math.max(1, 1 - days) * DAY_MS),
			notAfterDate: new Date(now + days * DAY_MS),
		},
	);
	return pair.cert;
}

/** The base64 DER form the registry stores and answers. */
export function base64DerOf(pem: string): string {
	return new X509Certificate(pem).raw.toString("base64");
}
