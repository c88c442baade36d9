/**
 * Signing of the SMP answers (decisions §13): an enveloped XML signature over the whole
 * document (Reference URI=""), RSA-SHA256 with SHA-256 digests, the signing certificate in
 * KeyInfo/X509Data, appended as the last child of the root element. xml-crypto does the
 * cryptography and the canonicalization; docs/smp.md gives the profile and its sources.
 */
import { X509Certificate, createPrivateKey, randomUUID, type KeyObject } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { DOMParser } from "@xmldom/xmldom";
import { generate as generateSelfSigned } from "selfsigned";
import { C14nCanonicalization, SignedXml } from "xml-crypto";
import { distinguishedName } from "../../../src/contract/certificates";
import { escape } from "../../../src/contract/xml";

export const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
export const SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256";
export const ENVELOPED_SIGNATURE = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
export const CANONICAL_XML_10 = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315";
export const CANONICAL_XML_11 = "http://www.w3.org/2006/12/xml-c14n11";
export const XMLDSIG_NAMESPACE = "http://www.w3.org/2000/09/xmldsig#";

/**
 * Canonical XML 1.1 differs from 1.0 only in how xml:id, xml:base, xml:lang and xml:space
 * attributes of ancestors reach a document subset. The SMP answers and their SignedInfo carry
 * none (signBdxr refuses a document that has one), so 1.0's output is 1.1's output here.
 */
class CanonicalXml11 extends C14nCanonicalization {
	getAlgorithmName(): string {
		return CANONICAL_XML_11;
	}
}

const XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace";

export class SmpSigner {
	private readonly privateKey: KeyObject;
	private readonly certificate: X509Certificate;
	/** The signing certificate's SHA-256 fingerprint, hex without colons. */
	readonly fingerprint: string;

	/** Both in PEM; the key must belong to the certificate. */
	constructor(privateKeyPem: string, certificatePem: string) {
		this.certificate = new X509Certificate(certificatePem);
		this.privateKey = createPrivateKey(privateKeyPem);
		this.fingerprint = this.certificate.fingerprint256.replace(/:/g, "").toLowerCase();
		if (!this.certificate.checkPrivateKey(this.privateKey))
			throw new Error("the SMP signing key does not belong to the SMP signing certificate");
	}

	/** Peppol SMP 1.3: inclusive Canonical XML 1.0 for SignedInfo. */
	signPeppol(xml: string): string {
		return this.sign(xml, CANONICAL_XML_10);
	}

	/** OASIS SMP 2.0: Canonical XML 1.1 for SignedInfo, the rest as for Peppol. */
	signBdxr(xml: string): string {
		if (carriesXmlAttributes(xml)) throw new Error("an SMP 2.0 answer to sign must not carry xml: attributes");
		return this.sign(xml, CANONICAL_XML_11);
	}

	/**
	 * xml-crypto's own check of the one enveloped signature, against this signer's certificate
	 * (never the certificate the document brings along).
	 */
	verify(xml: string): boolean {
		const signatures = new DOMParser()
			.parseFromString(xml, "text/xml")
			.getElementsByTagNameNS(XMLDSIG_NAMESPACE, "Signature");
		if (signatures.length !== 1) return false;
		const verifier = this.signedXml({ publicCert: this.certificate.toString(), getCertFromKeyInfo: () => null });
		verifier.loadSignature(signatures[0]);
		try {
			return verifier.checkSignature(xml);
		} catch {
			return false;
		}
	}

	private sign(xml: string, signedInfoCanonicalization: string): string {
		const signer = this.signedXml({
			privateKey: this.privateKey,
			signatureAlgorithm: RSA_SHA256,
			canonicalizationAlgorithm: signedInfoCanonicalization,
			getKeyInfoContent: ({ prefix } = {}) => x509Data(this.certificate, prefix ? `${prefix}:` : ""),
		});
		signer.addReference({
			xpath: "/*",
			transforms: [ENVELOPED_SIGNATURE],
			digestAlgorithm: SHA256,
			isEmptyUri: true,
		});
		signer.computeSignature(xml, { prefix: "ds", location: { reference: "/*", action: "append" } });
		return signer.getSignedXml();
	}

	private signedXml(options: ConstructorParameters<typeof SignedXml>[0]): SignedXml {
		const signedXml = new SignedXml(options);
		signedXml.CanonicalizationAlgorithms[CANONICAL_XML_11] = CanonicalXml11;
		return signedXml;
	}
}

function carriesXmlAttributes(xml: string): boolean {
	const elements = new DOMParser().parseFromString(xml, "text/xml").getElementsByTagName("*");
	for (const element of Array.from(elements))
		if (Array.from(element.attributes).some((attribute) => attribute.namespaceURI === XML_NAMESPACE)) return true;
	return false;
}

/** X509Data with the subject name (RFC 2253) and the certificate, as the Peppol SMP specification shows it. */
function x509Data(certificate: X509Certificate, prefix: string): string {
	return (
		`<${prefix}X509Data>` +
		`<${prefix}X509SubjectName>${escape(distinguishedName(certificate.subject))}</${prefix}X509SubjectName>` +
		`<${prefix}X509Certificate>${certificate.raw.toString("base64")}</${prefix}X509Certificate>` +
		`</${prefix}X509Data>`
	);
}

export interface SigningPair {
	privateKey: string;
	certificate: string;
	/** Where the pair came from: the configured files, a pair made now or earlier under DATA_DIR, or memory. */
	origin: "configured" | "created" | "reused" | "memory";
}

export interface SigningPairOptions {
	/** SMP_KEY_FILE and SMP_CERTIFICATE_FILE: PEM files, both or neither (an empty string is neither). */
	keyFile?: string;
	certificateFile?: string;
	/** DATA_DIR: where a self-signed pair is kept; ":memory:" keeps none. */
	dataDir: string;
	log: { info(message: string): void; warn(message: string): void };
}

export const SIGNING_PAIR_FOLDER = "smp-signing";
const KEY_FILE = "key.pem";
const CERTIFICATE_FILE = "certificate.pem";
const SELF_SIGNED_NAME = "participant-registry SMP, self-signed, not for production";
const SELF_SIGNED_YEARS = 10;

/**
 * The pair that signs the SMP answers (decisions §13): the configured PEM files when given,
 * else a self-signed RSA-2048 pair kept under DATA_DIR (made at first start, reused after), or
 * one made in memory when DATA_DIR is ":memory:". A self-signed pair is logged as not for production.
 */
export async function loadOrCreateSigningPair(options: SigningPairOptions): Promise<SigningPair> {
	const { keyFile, certificateFile, dataDir, log } = options;
	if (keyFile || certificateFile) {
		if (!keyFile || !certificateFile)
			throw new Error(
				"SMP_KEY_FILE and SMP_CERTIFICATE_FILE go together: set both, or neither for a self-signed pair",
			);
		const pair = readPair(keyFile, certificateFile, "configured");
		log.info(`SMP answers are signed with the certificate in ${certificateFile}`);
		return pair;
	}
	const pair =
		dataDir === ":memory:" ? { ...(await selfSignedPair()), origin: "memory" as const } : await keptPair(dataDir);
	const where = pair.origin === "memory" ? "in memory" : `under ${path.join(dataDir, SIGNING_PAIR_FOLDER)}`;
	log.warn(
		`SMP answers are signed with a self-signed certificate kept ${where}: it is not for production; set SMP_KEY_FILE and SMP_CERTIFICATE_FILE`,
	);
	return pair;
}

function readPair(keyFile: string, certificateFile: string, origin: SigningPair["origin"]): SigningPair {
	const pair = {
		privateKey: fs.readFileSync(keyFile, "utf8"),
		certificate: fs.readFileSync(certificateFile, "utf8"),
		origin,
	};
	let belongs: boolean;
	try {
		belongs = new X509Certificate(pair.certificate).checkPrivateKey(createPrivateKey(pair.privateKey));
	} catch (error) {
		throw new Error(
			`the SMP signing pair ${keyFile}, ${certificateFile} cannot be read: ${(error as Error).message}`,
		);
	}
	if (!belongs)
		throw new Error(`the SMP signing key ${keyFile} does not belong to the certificate ${certificateFile}`);
	return pair;
}

/**
 * The pair under DATA_DIR. It is written to a folder of its own and renamed into place, so that
 * processes starting together on one DATA_DIR all end up with the same pair, never half of two.
 */
async function keptPair(dataDir: string): Promise<SigningPair> {
	const folder = path.join(dataDir, SIGNING_PAIR_FOLDER);
	const kept = () => readPair(path.join(folder, KEY_FILE), path.join(folder, CERTIFICATE_FILE), "reused");
	if (fs.existsSync(folder)) return kept();
	const pair = await selfSignedPair();
	const draft = `${folder}.${randomUUID()}.tmp`;
	fs.mkdirSync(draft, { recursive: true, mode: 0o700 });
	fs.writeFileSync(path.join(draft, KEY_FILE), pair.privateKey, { mode: 0o600 });
	fs.writeFileSync(path.join(draft, CERTIFICATE_FILE), pair.certificate, { mode: 0o644 });
	try {
		fs.renameSync(draft, folder);
	} catch (error) {
		fs.rmSync(draft, { recursive: true, force: true });
		if (!fs.existsSync(folder)) throw error;
		return kept();
	}
	return { ...pair, origin: "created" };
}

async function selfSignedPair(): Promise<Omit<SigningPair, "origin">> {
	const notBeforeDate = new Date();
	const notAfterDate = new Date(notBeforeDate);
	notAfterDate.setUTCFullYear(notAfterDate.getUTCFullYear() + SELF_SIGNED_YEARS);
	const generated = await generateSelfSigned([{ name: "commonName", value: SELF_SIGNED_NAME }], {
		keySize: 2048,
		algorithm: "sha256",
		notBeforeDate,
		notAfterDate,
		extensions: [
			{ name: "basicConstraints", cA: false, critical: true },
			{ name: "keyUsage", digitalSignature: true, critical: true },
		],
	});
	return { privateKey: generated.private, certificate: generated.cert };
}
