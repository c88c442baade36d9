/**
 * The SMP answers (decisions §13, docs/smp.md): Peppol SMP 1.x and OASIS SMP 2.0 documents in the
 * element order and namespaces of their schemas, identifiers percent-encoded in paths as the
 * Peppol SMP specification shows, and enveloped signatures that a verifier nobody here wrote
 * (Debian's xmlsec1) accepts, and refuses once one character is changed.
 */
import { spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DOMParser, type Element } from "@xmldom/xmldom";
import fc from "fast-check";
import { generate } from "selfsigned";
import {
	BDXR_AGGREGATE_NAMESPACE,
	BDXR_BASIC_NAMESPACE,
	BDXR_SERVICE_GROUP_NAMESPACE,
	BDXR_SERVICE_METADATA_NAMESPACE,
	bdxrServiceGroup,
	bdxrServiceMetadata,
} from "../../services/lookup/smp/bdxr-smp2";
import {
	decodeIdentifierSegment,
	decodePathSegment,
	encodeIdentifierSegment,
	encodePathSegment,
	splitQualifiedIdentifier,
} from "../../services/lookup/smp/identifiers";
import type { SmpEndpoint, SmpServiceMetadata } from "../../services/lookup/smp/model";
import {
	BUSDOX_IDENTIFIERS_NAMESPACE,
	BUSDOX_SMP_NAMESPACE,
	WS_ADDRESSING_NAMESPACE,
	peppolServiceGroup,
	peppolServiceMetadata,
} from "../../services/lookup/smp/peppol-smp";
import {
	CANONICAL_XML_10,
	CANONICAL_XML_11,
	ENVELOPED_SIGNATURE,
	RSA_SHA256,
	SHA256,
	SIGNING_PAIR_FOLDER,
	SmpSigner,
	XMLDSIG_NAMESPACE,
	loadOrCreateSigningPair,
} from "../../services/lookup/smp/signing";

// ---- Real Peppol identifiers (shared/design/peppol-reference.md) ---------------------------------
const PARTICIPANT = { scheme: "iso6523-actorid-upis", value: "0192:991825827" };
const INVOICE = {
	scheme: "busdox-docid-qns",
	value: "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1",
};
const CREDIT_NOTE = {
	scheme: "busdox-docid-qns",
	value: "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1",
};
const BILLING = { scheme: "cenbii-procid-ubl", value: "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0" };
const AS4 = "peppol-transport-as4-v2_0";

// ---- XML reading helpers -------------------------------------------------------------------------
const clark = (namespace: string, localName: string) => `{${namespace}}${localName}`;
const smp = (localName: string) => clark(BUSDOX_SMP_NAMESPACE, localName);
const ids = (localName: string) => clark(BUSDOX_IDENTIFIERS_NAMESPACE, localName);
const wsa = (localName: string) => clark(WS_ADDRESSING_NAMESPACE, localName);
const cbc = (localName: string) => clark(BDXR_BASIC_NAMESPACE, localName);
const cac = (localName: string) => clark(BDXR_AGGREGATE_NAMESPACE, localName);
const ds = (localName: string) => clark(XMLDSIG_NAMESPACE, localName);

function parse(xml: string): Element {
	const document = new DOMParser({
		onError: (level, message) => {
			if (level !== "warning") throw new Error(`not well-formed XML: ${message}`);
		},
	}).parseFromString(xml, "text/xml");
	return document.documentElement as Element;
}

const nameOf = (element: Element) => clark(element.namespaceURI ?? "", element.localName ?? "");
const children = (element: Element): Element[] =>
	Array.from(element.childNodes).filter((node): node is Element => node.nodeType === 1);
const childNames = (element: Element) => children(element).map(nameOf);

/** The one child element of that name (namespace and local name), failing the test otherwise. */
function child(element: Element, name: string): Element {
	const found = children(element).filter((candidate) => nameOf(candidate) === name);
	if (found.length !== 1) throw new Error(`${nameOf(element)} has ${found.length} ${name}, not one`);
	return found[0];
}

function pathTo(element: Element, ...names: string[]): Element {
	return names.reduce(child, element);
}

// ---- Fixtures ------------------------------------------------------------------------------------
let endpointCertificate: string;
let signingPair: { privateKey: string; certificate: string };
let signer: SmpSigner;
let scratch: string;

function endpoint(overrides: Partial<SmpEndpoint> = {}): SmpEndpoint {
	return {
		transportProfile: AS4,
		url: "https://ap.example.no/as4",
		certificate: endpointCertificate,
		activationDate: "2025-01-01",
		expirationDate: "2027-06-30T12:00:00+02:00",
		description: "Example AP <production> & co",
		technicalContactUrl: "mailto:support@ap.example.no",
		...overrides,
	};
}

function invoiceMetadata(endpoints: SmpEndpoint[] = [endpoint()]): SmpServiceMetadata {
	return { participant: PARTICIPANT, documentType: INVOICE, processes: [{ identifier: BILLING, endpoints }] };
}

beforeAll(async () => {
	scratch = fs.mkdtempSync(path.join(os.tmpdir(), "smp-xml-"));
	const accessPoint = await generate([{ name: "commonName", value: "ap.example.no" }], { keyType: "ec" });
	endpointCertificate = new X509Certificate(accessPoint.cert).raw.toString("base64");
	const pair = await generate([{ name: "commonName", value: "smp.example.no" }], {
		keySize: 2048,
		algorithm: "sha256",
	});
	signingPair = { privateKey: pair.private, certificate: pair.cert };
	signer = new SmpSigner(signingPair.privateKey, signingPair.certificate);
});

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

// ---- Identifiers in paths ------------------------------------------------------------------------
describe("identifiers in SMP paths (Peppol SMP specification, RFC 3986)", () => {
	test("a qualified identifier splits at its first `::`, so a document type keeps the `::` of its value", () => {
		expect(splitQualifiedIdentifier(`${INVOICE.scheme}::${INVOICE.value}`)).toEqual(INVOICE);
		expect(splitQualifiedIdentifier("iso6523-actorid-upis::0192:991825827")).toEqual(PARTICIPANT);
	});

	test.each(["0192:991825827", "::0192:991825827", "iso6523-actorid-upis::"])("%p is not scheme::value", (text) => {
		expect(splitQualifiedIdentifier(text)).toBeNull();
	});

	// Segments as SMPs in the network publish them (a BIS 3 invoice, the BusDox-era PEPPOL 4a
	// invoice the first SMP specification used, the billing process): RFC 3986 percent-encoding.
	test.each([
		["iso6523-actorid-upis::0192:991825827", "iso6523-actorid-upis%3A%3A0192%3A991825827"],
		[
			`busdox-docid-qns::${INVOICE.value}`,
			"busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3AInvoice-2%3A%3AInvoice%23%23urn%3Acen.eu%3Aen16931%3A2017%23compliant%23urn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A3.0%3A%3A2.1",
		],
		[
			"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:www.cenbii.eu:transaction:biicoretrdm010:ver1.0:#urn:www.peppol.eu:bis:peppol4a:ver1.0::2.0",
			"busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3AInvoice-2%3A%3AInvoice%23%23urn%3Awww.cenbii.eu%3Atransaction%3Abiicoretrdm010%3Aver1.0%3A%23urn%3Awww.peppol.eu%3Abis%3Apeppol4a%3Aver1.0%3A%3A2.0",
		],
		[
			`cenbii-procid-ubl::${BILLING.value}`,
			"cenbii-procid-ubl%3A%3Aurn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A01%3A1.0",
		],
	])("%s is the path segment %s: `::` as %%3A%%3A, `#` as %%23", (qualified, segment) => {
		const identifier = splitQualifiedIdentifier(qualified);
		expect(identifier && encodeIdentifierSegment(identifier)).toBe(segment);
		expect(decodeIdentifierSegment(segment)).toEqual(identifier);
	});

	test("a `/` inside an identifier is %2F, and %2F in a received segment is that `/`", () => {
		expect(encodePathSegment("a/b")).toBe("a%2Fb");
		expect(decodePathSegment("a%2Fb")).toBe("a/b");
	});

	test("`+` is literal both ways (decisions §13): a path is not a form, so never a space", () => {
		expect(encodePathSegment("a+b c")).toBe("a+b%20c");
		expect(decodePathSegment("a+b")).toBe("a+b");
		expect(decodePathSegment("a%2Bb")).toBe("a+b");
	});

	test("lower-case hexadecimal in a received segment decodes too", () => {
		expect(decodeIdentifierSegment("iso6523-actorid-upis%3a%3a0192%3a991825827")).toEqual(PARTICIPANT);
	});

	test("characters beyond ASCII are percent-encoded as UTF-8", () => {
		expect(encodePathSegment("Bø")).toBe("B%C3%B8");
		expect(decodePathSegment("B%C3%B8")).toBe("Bø");
	});

	test.each(["%zz", "abc%", "%E0%A4%A"])("a broken percent-encoding (%p) decodes to null", (segment) => {
		expect(decodePathSegment(segment)).toBeNull();
	});

	test("any text survives encoding then decoding, and its segment holds only unreserved characters, + and %XX", () => {
		fc.assert(
			fc.property(fc.string({ unit: "grapheme" }), (text) => {
				const segment = encodePathSegment(text);
				expect(segment).toMatch(/^(?:[A-Za-z0-9\-._~+]|%[0-9A-F]{2})*$/);
				expect(decodePathSegment(segment)).toBe(text);
			}),
		);
	});
});

// ---- Peppol SMP 1.x ------------------------------------------------------------------------------
describe("Peppol SMP 1.x ServiceGroup", () => {
	const xml = () =>
		peppolServiceGroup(
			{ participant: PARTICIPANT, documentTypes: [INVOICE, CREDIT_NOTE] },
			"https://smp.example.no/",
		);

	test("holds the participant identifier and one ServiceMetadataReference per document type", () => {
		const root = parse(xml());
		expect(nameOf(root)).toBe(smp("ServiceGroup"));
		expect(childNames(root)).toEqual([ids("ParticipantIdentifier"), smp("ServiceMetadataReferenceCollection")]);
		const participant = child(root, ids("ParticipantIdentifier"));
		expect([participant.getAttribute("scheme"), participant.textContent]).toEqual([
			PARTICIPANT.scheme,
			PARTICIPANT.value,
		]);
		expect(childNames(child(root, smp("ServiceMetadataReferenceCollection")))).toEqual([
			smp("ServiceMetadataReference"),
			smp("ServiceMetadataReference"),
		]);
	});

	test("a document type identifier with `::`, `##` and `#` is percent-encoded in the href, each identifier one path segment", () => {
		const references = children(child(parse(xml()), smp("ServiceMetadataReferenceCollection")));
		expect(references.map((reference) => reference.getAttribute("href"))).toEqual([
			"https://smp.example.no/iso6523-actorid-upis%3A%3A0192%3A991825827/services/busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3AInvoice-2%3A%3AInvoice%23%23urn%3Acen.eu%3Aen16931%3A2017%23compliant%23urn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A3.0%3A%3A2.1",
			"https://smp.example.no/iso6523-actorid-upis%3A%3A0192%3A991825827/services/busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3ACreditNote-2%3A%3ACreditNote%23%23urn%3Acen.eu%3Aen16931%3A2017%23compliant%23urn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A3.0%3A%3A2.1",
		]);
	});

	test("a participant without document types has an empty reference collection", () => {
		const root = parse(
			peppolServiceGroup({ participant: PARTICIPANT, documentTypes: [] }, "https://smp.example.no"),
		);
		expect(childNames(child(root, smp("ServiceMetadataReferenceCollection")))).toEqual([]);
	});
});

describe("Peppol SMP 1.x SignedServiceMetadata", () => {
	test("ServiceInformation holds the participant, the document type and the process list, in the schema's order", () => {
		const root = parse(peppolServiceMetadata(invoiceMetadata()));
		expect(nameOf(root)).toBe(smp("SignedServiceMetadata"));
		expect(childNames(root)).toEqual([smp("ServiceMetadata")]);
		const information = pathTo(root, smp("ServiceMetadata"), smp("ServiceInformation"));
		expect(childNames(information)).toEqual([
			ids("ParticipantIdentifier"),
			ids("DocumentIdentifier"),
			smp("ProcessList"),
		]);
		const documentType = child(information, ids("DocumentIdentifier"));
		expect([documentType.getAttribute("scheme"), documentType.textContent]).toEqual([
			INVOICE.scheme,
			INVOICE.value,
		]);
		const process = pathTo(information, smp("ProcessList"), smp("Process"));
		expect(childNames(process)).toEqual([ids("ProcessIdentifier"), smp("ServiceEndpointList")]);
		const processIdentifier = child(process, ids("ProcessIdentifier"));
		expect([processIdentifier.getAttribute("scheme"), processIdentifier.textContent]).toEqual([
			BILLING.scheme,
			BILLING.value,
		]);
	});

	test("an Endpoint lists its elements in the busdox schema's order, dates as xs:dateTime in UTC", () => {
		const root = parse(peppolServiceMetadata(invoiceMetadata()));
		const endpointElement = pathTo(
			root,
			smp("ServiceMetadata"),
			smp("ServiceInformation"),
			smp("ProcessList"),
			smp("Process"),
			smp("ServiceEndpointList"),
			smp("Endpoint"),
		);
		expect(endpointElement.getAttribute("transportProfile")).toBe(AS4);
		expect(childNames(endpointElement)).toEqual([
			wsa("EndpointReference"),
			smp("RequireBusinessLevelSignature"),
			smp("ServiceActivationDate"),
			smp("ServiceExpirationDate"),
			smp("Certificate"),
			smp("ServiceDescription"),
			smp("TechnicalContactUrl"),
		]);
		const text = (name: string) => child(endpointElement, name).textContent;
		expect(pathTo(endpointElement, wsa("EndpointReference"), wsa("Address")).textContent).toBe(
			"https://ap.example.no/as4",
		);
		expect(text(smp("RequireBusinessLevelSignature"))).toBe("false");
		expect(text(smp("ServiceActivationDate"))).toBe("2025-01-01T00:00:00Z");
		expect(text(smp("ServiceExpirationDate"))).toBe("2027-06-30T10:00:00Z");
		expect(text(smp("Certificate"))).toBe(endpointCertificate);
		expect(text(smp("ServiceDescription"))).toBe("Example AP <production> & co");
		expect(text(smp("TechnicalContactUrl"))).toBe("mailto:support@ap.example.no");
	});

	test("without known dates the optional dates are left out; the schema's required description and contact stay, empty", () => {
		const bare = endpoint({
			activationDate: undefined,
			expirationDate: undefined,
			description: undefined,
			technicalContactUrl: undefined,
		});
		const endpointElement = parse(peppolServiceMetadata(invoiceMetadata([bare]))).getElementsByTagNameNS(
			BUSDOX_SMP_NAMESPACE,
			"Endpoint",
		)[0];
		expect(childNames(endpointElement)).toEqual([
			wsa("EndpointReference"),
			smp("RequireBusinessLevelSignature"),
			smp("Certificate"),
			smp("ServiceDescription"),
			smp("TechnicalContactUrl"),
		]);
		expect(child(endpointElement, smp("ServiceDescription")).textContent).toBe("");
	});

	test("a date that is not ISO 8601 is refused rather than published wrong", () => {
		expect(() => peppolServiceMetadata(invoiceMetadata([endpoint({ expirationDate: "30.06.2027" })]))).toThrow(
			/not an ISO 8601 date/,
		);
	});

	test("quotes, markup, line breaks and characters XML cannot carry survive or are replaced, never break the document", () => {
		const description = 'a "quoted" <b>bold</b> line\r\nand\ttab \u0001';
		const endpointElement = parse(peppolServiceMetadata(invoiceMetadata([endpoint({ description })])))
			.getElementsByTagNameNS(BUSDOX_SMP_NAMESPACE, "ServiceDescription")
			.item(0);
		expect(endpointElement?.textContent).toBe('a "quoted" <b>bold</b> line\r\nand\ttab \uFFFD');
	});
});

// ---- OASIS SMP 2.0 -------------------------------------------------------------------------------
describe("OASIS BDXR SMP 2.0 ServiceGroup", () => {
	test("SMPVersionID 2.0, the ParticipantID with its schemeID, then one ServiceReference per document type", () => {
		const root = parse(bdxrServiceGroup({ participant: PARTICIPANT, documentTypes: [INVOICE, CREDIT_NOTE] }));
		expect(nameOf(root)).toBe(clark(BDXR_SERVICE_GROUP_NAMESPACE, "ServiceGroup"));
		expect(childNames(root)).toEqual([
			cbc("SMPVersionID"),
			cbc("ParticipantID"),
			cac("ServiceReference"),
			cac("ServiceReference"),
		]);
		expect(child(root, cbc("SMPVersionID")).textContent).toBe("2.0");
		const participant = child(root, cbc("ParticipantID"));
		expect([participant.getAttribute("schemeID"), participant.textContent]).toEqual([
			PARTICIPANT.scheme,
			PARTICIPANT.value,
		]);
		const references = children(root).filter((element) => nameOf(element) === cac("ServiceReference"));
		expect(references.map((reference) => childNames(reference))).toEqual([[cbc("ID")], [cbc("ID")]]);
		const ids = references.map((reference) => child(reference, cbc("ID")));
		expect(ids.map((id) => [id.getAttribute("schemeID"), id.textContent])).toEqual([
			[INVOICE.scheme, INVOICE.value],
			[CREDIT_NOTE.scheme, CREDIT_NOTE.value],
		]);
	});
});

describe("OASIS BDXR SMP 2.0 ServiceMetadata", () => {
	test("SMPVersionID, the document type ID, the ParticipantID, then ProcessMetadata, in the schema's order", () => {
		const root = parse(bdxrServiceMetadata(invoiceMetadata()));
		expect(nameOf(root)).toBe(clark(BDXR_SERVICE_METADATA_NAMESPACE, "ServiceMetadata"));
		expect(childNames(root)).toEqual([
			cbc("SMPVersionID"),
			cbc("ID"),
			cbc("ParticipantID"),
			cac("ProcessMetadata"),
		]);
		const documentType = child(root, cbc("ID"));
		expect([documentType.getAttribute("schemeID"), documentType.textContent]).toEqual([
			INVOICE.scheme,
			INVOICE.value,
		]);
		const processMetadata = child(root, cac("ProcessMetadata"));
		expect(childNames(processMetadata)).toEqual([cac("Process"), cac("Endpoint")]);
		const process = pathTo(processMetadata, cac("Process"), cbc("ID"));
		expect([process.getAttribute("schemeID"), process.textContent]).toEqual([BILLING.scheme, BILLING.value]);
	});

	test("an Endpoint lists its elements in the schema's order, dates as xs:date, the certificate as a base64 binary object", () => {
		const endpointElement = pathTo(
			parse(bdxrServiceMetadata(invoiceMetadata())),
			cac("ProcessMetadata"),
			cac("Endpoint"),
		);
		expect(childNames(endpointElement)).toEqual([
			cbc("TransportProfileID"),
			cbc("Description"),
			cbc("Contact"),
			cbc("AddressURI"),
			cbc("ActivationDate"),
			cbc("ExpirationDate"),
			cac("Certificate"),
		]);
		const text = (name: string) => child(endpointElement, name).textContent;
		expect(text(cbc("TransportProfileID"))).toBe(AS4);
		expect(text(cbc("AddressURI"))).toBe("https://ap.example.no/as4");
		expect(text(cbc("ActivationDate"))).toBe("2025-01-01");
		expect(text(cbc("ExpirationDate"))).toBe("2027-06-30");
		const binary = pathTo(endpointElement, cac("Certificate"), cbc("ContentBinaryObject"));
		expect([binary.getAttribute("mimeCode"), binary.textContent]).toEqual([
			"application/base64",
			endpointCertificate,
		]);
	});

	test("the optional description, contact and dates are left out when not known", () => {
		const bare = endpoint({
			activationDate: undefined,
			expirationDate: undefined,
			description: undefined,
			technicalContactUrl: undefined,
		});
		const endpointElement = pathTo(
			parse(bdxrServiceMetadata(invoiceMetadata([bare]))),
			cac("ProcessMetadata"),
			cac("Endpoint"),
		);
		expect(childNames(endpointElement)).toEqual([cbc("TransportProfileID"), cbc("AddressURI"), cac("Certificate")]);
	});
});

// ---- Signatures ----------------------------------------------------------------------------------
const XMLSEC1 = process.env.TEST_XMLSEC1 ?? "/usr/bin/xmlsec1";
const xmlsecMissing = !fs.existsSync(XMLSEC1);
if (xmlsecMissing && process.env.CI === "true")
	throw new Error(`CI=true and ${XMLSEC1} missing: install Debian's xmlsec1 package (.ci/run)`);
// eslint-disable-next-line no-console
if (xmlsecMissing) console.warn(`xmlsec1 checks skipped: ${XMLSEC1} not installed (Debian package xmlsec1)`);
const withXmlsec = xmlsecMissing ? test.skip : test;

/** Debian's xmlsec1 verifies the signature, trusting only the given certificate. */
function xmlsecVerifies(signedXml: string, trustedCertificatePem: string): { status: number | null; output: string } {
	const folder = fs.mkdtempSync(path.join(scratch, "xmlsec-"));
	fs.writeFileSync(path.join(folder, "signed.xml"), signedXml);
	fs.writeFileSync(path.join(folder, "trusted.pem"), trustedCertificatePem);
	const result = spawnSync(
		XMLSEC1,
		["--verify", "--trusted-pem", "trusted.pem", "--enabled-reference-uris", "empty", "signed.xml"],
		{ cwd: folder, encoding: "utf8", timeout: 30_000 },
	);
	return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const tamperWithAddress = (signedXml: string) =>
	signedXml.replace("https://ap.example.no/as4", "https://ap.example.no/as5");

describe("the Peppol SMP 1.3 signature", () => {
	let signed: string;
	beforeAll(() => {
		signed = signer.signPeppol(peppolServiceMetadata(invoiceMetadata()));
	});

	test("is an enveloped ds:Signature, the last child of SignedServiceMetadata", () => {
		expect(childNames(parse(signed))).toEqual([smp("ServiceMetadata"), ds("Signature")]);
	});

	test("uses RSA-SHA256, SHA-256 digests, inclusive Canonical XML and Reference URI='' with the enveloped-signature transform", () => {
		const signedInfo = pathTo(parse(signed), ds("Signature"), ds("SignedInfo"));
		expect(child(signedInfo, ds("CanonicalizationMethod")).getAttribute("Algorithm")).toBe(CANONICAL_XML_10);
		expect(child(signedInfo, ds("SignatureMethod")).getAttribute("Algorithm")).toBe(RSA_SHA256);
		const reference = child(signedInfo, ds("Reference"));
		expect(reference.getAttribute("URI")).toBe("");
		expect(
			children(child(reference, ds("Transforms"))).map((transform) => transform.getAttribute("Algorithm")),
		).toEqual([ENVELOPED_SIGNATURE]);
		expect(child(reference, ds("DigestMethod")).getAttribute("Algorithm")).toBe(SHA256);
	});

	test("carries the signing certificate and its subject name in KeyInfo/X509Data", () => {
		const x509Data = pathTo(parse(signed), ds("Signature"), ds("KeyInfo"), ds("X509Data"));
		expect(childNames(x509Data)).toEqual([ds("X509SubjectName"), ds("X509Certificate")]);
		expect(child(x509Data, ds("X509SubjectName")).textContent).toBe("CN=smp.example.no");
		expect(child(x509Data, ds("X509Certificate")).textContent).toBe(
			new X509Certificate(signingPair.certificate).raw.toString("base64"),
		);
	});

	withXmlsec("xmlsec1 verifies it against the signing certificate", () => {
		expect(xmlsecVerifies(signed, signingPair.certificate)).toMatchObject({ status: 0 });
	});

	withXmlsec("xmlsec1 refuses it once one character of an endpoint address is changed", () => {
		const tampered = tamperWithAddress(signed);
		expect(tampered).not.toBe(signed);
		const result = xmlsecVerifies(tampered, signingPair.certificate);
		expect(result.status).not.toBe(0);
		expect(result.output).toMatch(/data and digest do not match/);
	});

	withXmlsec("xmlsec1 refuses it when trusting another certificate", async () => {
		const other = await generate([{ name: "commonName", value: "other.example.no" }], { keySize: 2048 });
		expect(xmlsecVerifies(signed, other.cert).status).not.toBe(0);
	});

	test("xml-crypto's own check accepts it, and refuses the tampered document", () => {
		expect(signer.verify(signed)).toBe(true);
		expect(signer.verify(tamperWithAddress(signed))).toBe(false);
	});

	test("one signature is fast enough to sign each answer once and cache it", () => {
		const unsigned = peppolServiceMetadata(invoiceMetadata());
		const rounds = 20;
		const started = process.hrtime.bigint();
		for (let round = 0; round < rounds; round++) signer.signPeppol(unsigned);
		const milliseconds = Number(process.hrtime.bigint() - started) / 1e6 / rounds;
		// eslint-disable-next-line no-console
		console.log(`one Peppol SMP signature (RSA-2048, mean of ${rounds}): ${milliseconds.toFixed(2)} ms`);
		expect(milliseconds).toBeLessThan(250);
	});
});

describe("the OASIS SMP 2.0 signature", () => {
	let signed: string;
	beforeAll(() => {
		signed = signer.signBdxr(bdxrServiceMetadata(invoiceMetadata()));
	});

	test("is an enveloped ds:Signature, the last child of ServiceMetadata as the schema places it, over Canonical XML 1.1", () => {
		const root = parse(signed);
		expect(childNames(root).at(-1)).toBe(ds("Signature"));
		const signedInfo = pathTo(root, ds("Signature"), ds("SignedInfo"));
		expect(child(signedInfo, ds("CanonicalizationMethod")).getAttribute("Algorithm")).toBe(CANONICAL_XML_11);
		expect(child(signedInfo, ds("SignatureMethod")).getAttribute("Algorithm")).toBe(RSA_SHA256);
		expect(child(signedInfo, ds("Reference")).getAttribute("URI")).toBe("");
	});

	withXmlsec("xmlsec1, which implements Canonical XML 1.1 itself, verifies it", () => {
		expect(xmlsecVerifies(signed, signingPair.certificate)).toMatchObject({ status: 0 });
	});

	withXmlsec("xmlsec1 refuses it once one character of an endpoint address is changed", () => {
		expect(xmlsecVerifies(tamperWithAddress(signed), signingPair.certificate).status).not.toBe(0);
	});

	test("xml-crypto's own check accepts it, and refuses the tampered document", () => {
		expect(signer.verify(signed)).toBe(true);
		expect(signer.verify(tamperWithAddress(signed))).toBe(false);
	});

	test("a document carrying xml: attributes, where Canonical XML 1.0 and 1.1 differ, is not signed", () => {
		const withXmlBase = bdxrServiceMetadata(invoiceMetadata()).replace(
			"<ServiceMetadata ",
			'<ServiceMetadata xml:base="x" ',
		);
		expect(() => signer.signBdxr(withXmlBase)).toThrow(/xml: attributes/);
	});
});

describe("SmpSigner", () => {
	test("a key that does not belong to the certificate is refused", async () => {
		const other = await generate([{ name: "commonName", value: "other.example.no" }], { keySize: 2048 });
		expect(() => new SmpSigner(other.private, signingPair.certificate)).toThrow(/does not belong/);
	});
});

// ---- The signing pair ----------------------------------------------------------------------------
describe("loadOrCreateSigningPair", () => {
	const logged = () => {
		const lines: { info: string[]; warn: string[] } = { info: [], warn: [] };
		return {
			lines,
			log: {
				info: (message: string) => lines.info.push(message),
				warn: (message: string) => lines.warn.push(message),
			},
		};
	};

	test("with DATA_DIR ':memory:' a pair is made in memory and logged as not for production", async () => {
		const { lines, log } = logged();
		const pair = await loadOrCreateSigningPair({ dataDir: ":memory:", log });
		expect(pair.origin).toBe("memory");
		expect(() => new SmpSigner(pair.privateKey, pair.certificate)).not.toThrow();
		expect(lines.warn.join("\n")).toMatch(/self-signed.*in memory.*not for production/);
	});

	test("under a DATA_DIR a self-signed RSA-2048 pair is made once, its key readable by the owner alone, and reused", async () => {
		const dataDir = path.join(scratch, "data-reuse");
		const { lines, log } = logged();
		const first = await loadOrCreateSigningPair({ dataDir, log });
		const second = await loadOrCreateSigningPair({ dataDir, log });
		expect([first.origin, second.origin]).toEqual(["created", "reused"]);
		expect(second.certificate).toBe(first.certificate);
		expect(second.privateKey).toBe(first.privateKey);
		const keyFile = path.join(dataDir, SIGNING_PAIR_FOLDER, "key.pem");
		expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
		expect(new X509Certificate(first.certificate).publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
		expect(lines.warn).toHaveLength(2);
		expect(lines.warn[0]).toMatch(/not for production/);
	});

	test("processes starting together on one DATA_DIR end up with the same pair", async () => {
		const dataDir = path.join(scratch, "data-race");
		const { log } = logged();
		const pairs = await Promise.all([1, 2, 3].map(() => loadOrCreateSigningPair({ dataDir, log })));
		expect(new Set(pairs.map((pair) => pair.certificate)).size).toBe(1);
		expect(fs.readdirSync(dataDir)).toEqual([SIGNING_PAIR_FOLDER]);
	});

	test("SMP_KEY_FILE and SMP_CERTIFICATE_FILE are read when both are given", async () => {
		const { keyFile, certificateFile } = writePair("configured", signingPair.privateKey, signingPair.certificate);
		const { lines, log } = logged();
		const pair = await loadOrCreateSigningPair({ keyFile, certificateFile, dataDir: ":memory:", log });
		expect(pair).toEqual({ ...signingPair, origin: "configured" });
		expect(lines.warn).toEqual([]);
	});

	test("a key that does not belong to the certificate is refused with both file names", async () => {
		const other = await generate([{ name: "commonName", value: "other.example.no" }], { keySize: 2048 });
		const { keyFile, certificateFile } = writePair("mismatch", other.private, signingPair.certificate);
		await expect(
			loadOrCreateSigningPair({ keyFile, certificateFile, dataDir: ":memory:", log: logged().log }),
		).rejects.toThrow(`the SMP signing key ${keyFile} does not belong to the certificate ${certificateFile}`);
	});

	test.each([
		["only SMP_KEY_FILE", { keyFile: "/run/secrets/smp/key.pem" }],
		["only SMP_CERTIFICATE_FILE", { certificateFile: "/run/secrets/smp/certificate.pem" }],
	])("%s is refused: the two go together", async (_, files) => {
		await expect(loadOrCreateSigningPair({ ...files, dataDir: ":memory:", log: logged().log })).rejects.toThrow(
			/SMP_KEY_FILE and SMP_CERTIFICATE_FILE go together/,
		);
	});

	function writePair(name: string, privateKey: string, certificate: string) {
		const folder = fs.mkdtempSync(path.join(scratch, `${name}-`));
		const keyFile = path.join(folder, "key.pem");
		const certificateFile = path.join(folder, "certificate.pem");
		fs.writeFileSync(keyFile, privateKey);
		fs.writeFileSync(certificateFile, certificate);
		return { keyFile, certificateFile };
	}
});
