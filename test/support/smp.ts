/**
 * Helpers of the SMP HTTP tests (test/integration/smp.http.spec.ts, test/distributed/smp-freshness.spec.ts):
 * a signing pair made by openssl, Debian's xmlsec1 as the signature's judge, the XML read with
 * @xmldom/xmldom, and the three changes whose freshness the SMP answers must show (decisions
 * §11, §13), made over HTTP as their owners make them. Everything on the demo seed (docs/demo-data.md).
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { DOMParser, type Document, type Element } from "@xmldom/xmldom";
import { basic } from "./registry";

export const BUSDOX = "http://busdox.org/serviceMetadata/publishing/1.0/";
export const BUSDOX_IDENTIFIERS = "http://busdox.org/transport/identifiers/1.0/";
export const WSA = "http://www.w3.org/2005/08/addressing";
export const DSIG = "http://www.w3.org/2000/09/xmldsig#";
export const BDXR_GROUP = "http://docs.oasis-open.org/bdxr/ns/SMP/2/ServiceGroup";
export const BDXR_METADATA = "http://docs.oasis-open.org/bdxr/ns/SMP/2/ServiceMetadata";
export const BDXR_CBC = "http://docs.oasis-open.org/bdxr/ns/SMP/2/BasicComponents";
export const BDXR_CAC = "http://docs.oasis-open.org/bdxr/ns/SMP/2/AggregateComponents";

// seed/demo.json
export const NORDLYS = "iso6523-actorid-upis::0192:991825827";
export const NORDLYS_PARTICIPANT_SCHEME = "iso6523-actorid-upis";
export const NORDLYS_VALUE = "0192:991825827";
export const NORDLYS_AP = "33333333-0000-4000-8000-000000000001";
export const NORDLYS_AP_URL = "https://as4.nordlys-ap.example/as4";
export const BILLING = "55555555-0000-4000-8000-000000000001";
export const ORDERING = "55555555-0000-4000-8000-000000000003";
export const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006";
export const CREDIT_NOTE_TYPE = "66666666-0000-4000-8000-000000000002";
export const BILLING_PROCESS = "cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";
export const ORDERING_PROCESS = "cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:ordering:3";
export const INVOICE =
	"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1";
export const CREDIT_NOTE =
	"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1";
export const ORDER =
	"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1";
/** The BIS 3 invoice as the Peppol SMP specification and the network's SMPs write it in a path. */
export const INVOICE_SEGMENT =
	"busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3AInvoice-2%3A%3AInvoice%23%23urn%3Acen.eu%3Aen16931%3A2017%23compliant%23urn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A3.0%3A%3A2.1";
export const NORDLYS_SEGMENT = "iso6523-actorid-upis%3A%3A0192%3A991825827";

export const SP1 = basic("sp1", "sp1-demo-password");
export const APP1 = basic("app1", "app1-demo-password");
export const ADMIN = basic("admin", "admin-demo-password");
const CONTACT = { name: "Ingrid Berg", email: "faktura@nordlys-regnskap.example", phoneNumber: "+47 22 12 34 56" };

/** Percent-encodes a qualified identifier as one path segment, the way the Peppol SMP specification shows it. */
export function segment(identifier: string): string {
	return encodeURIComponent(identifier).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export const peppolGroupPath = (participant: string) => `/${segment(participant)}`;
export const peppolMetadataPath = (participant: string, documentType: string) =>
	`/${segment(participant)}/services/${segment(documentType)}`;
export const bdxrGroupPath = (participant: string) => `/bdxr-smp-2${peppolGroupPath(participant)}`;
export const bdxrMetadataPath = (participant: string, documentType: string) =>
	`/bdxr-smp-2${peppolMetadataPath(participant, documentType)}`;

export interface SigningFiles {
	folder: string;
	keyFile: string;
	certificateFile: string;
	certificatePem: string;
	/** SMP_KEY_FILE and SMP_CERTIFICATE_FILE for the registry's processes. */
	env: Record<string, string>;
}

/** An RSA-2048 key and a self-signed certificate made by openssl, as an operator makes a test pair. */
export function opensslSigningPair(folder: string): SigningFiles {
	const keyFile = path.join(folder, "smp-key.pem");
	const certificateFile = path.join(folder, "smp-certificate.pem");
	execFileSync(
		"openssl",
		[
			"req",
			"-x509",
			"-newkey",
			"rsa:2048",
			"-nodes",
			"-sha256",
			"-days",
			"30",
			"-subj",
			"/C=NO/O=Registry test/CN=smp.test.example",
			"-keyout",
			keyFile,
			"-out",
			certificateFile,
		],
		{ stdio: "pipe" },
	);
	return {
		folder,
		keyFile,
		certificateFile,
		certificatePem: fs.readFileSync(certificateFile, "utf8"),
		env: { SMP_KEY_FILE: keyFile, SMP_CERTIFICATE_FILE: certificateFile },
	};
}

export const XMLSEC1 = process.env.TEST_XMLSEC1 ?? "/usr/bin/xmlsec1";
const xmlsecMissing = !fs.existsSync(XMLSEC1);
if (xmlsecMissing && process.env.CI === "true")
	throw new Error(`CI=true and ${XMLSEC1} missing: install Debian's xmlsec1 package (.ci/run)`);
// eslint-disable-next-line no-console
if (xmlsecMissing) console.warn(`xmlsec1 checks skipped: ${XMLSEC1} not installed (Debian package xmlsec1)`);
export const withXmlsec = xmlsecMissing ? test.skip : test;

/** Debian's xmlsec1 verifies an answer's enveloped signature, trusting only the given certificate file. */
export function xmlsecVerify(folder: string, signedXml: string, certificateFile: string) {
	const file = path.join(folder, `answer-${process.hrtime.bigint()}.xml`);
	fs.writeFileSync(file, signedXml);
	const result = spawnSync(
		XMLSEC1,
		["--verify", "--trusted-pem", certificateFile, "--enabled-reference-uris", "empty", file],
		{ encoding: "utf8", timeout: 30_000 },
	);
	return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

export function parseXml(xml: string): Document {
	const errors: string[] = [];
	const document = new DOMParser({
		onError: (level, message) => {
			if (level !== "warning") errors.push(message);
		},
	}).parseFromString(xml, "text/xml");
	if (errors.length > 0) throw new Error(`not well-formed XML: ${errors.join("; ")}`);
	return document;
}

export function childElements(parent: Element): Element[] {
	return Array.from(parent.childNodes).filter((node): node is Element => node.nodeType === 1);
}

/** `{namespace}localName` of an element: names and namespaces checked together. */
export const qname = (element: Element) => `{${element.namespaceURI}}${element.localName}`;

/** The elements of that namespace and local name anywhere under `root`. */
export function all(root: Document | Element, namespace: string, localName: string): Element[] {
	return Array.from(root.getElementsByTagNameNS(namespace, localName));
}

export function texts(root: Document | Element, namespace: string, localName: string): string[] {
	return all(root, namespace, localName).map((element) => element.textContent ?? "");
}

/** Qualified identifiers (`scheme::value`) of elements that carry their scheme in an attribute. */
export function identifiers(root: Document | Element, namespace: string, localName: string, attribute: string) {
	return all(root, namespace, localName).map(
		(element) => `${element.getAttribute(attribute)}::${element.textContent}`,
	);
}

/** The document types a Peppol or an OASIS SMP 2.0 service group lists (null: not 200). */
export function groupDocumentTypes(format: "peppol" | "bdxr", status: number, xml: string): string[] | null {
	if (status !== 200) return null;
	const document = parseXml(xml);
	if (format === "bdxr") return identifiers(document, BDXR_CBC, "ID", "schemeID").sort();
	return all(document, BUSDOX, "ServiceMetadataReference")
		.map((reference) => decodeURIComponent((reference.getAttribute("href") ?? "").split("/services/")[1] ?? ""))
		.sort();
}

/** The endpoint addresses a Peppol or an OASIS SMP 2.0 service metadata answer names (null: not 200). */
export function metadataAddresses(format: "peppol" | "bdxr", status: number, xml: string): string[] | null {
	if (status !== 200) return null;
	const document = parseXml(xml);
	return format === "bdxr" ? texts(document, BDXR_CBC, "AddressURI") : texts(document, WSA, "Address");
}

export interface Reply {
	status: number;
	headers: Headers;
	text: string;
}

export async function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Reply> {
	const response = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(30_000) });
	return { status: response.status, headers: response.headers, text: await response.text() };
}

async function send(base: string, method: string, path: string, authorization: string, media: string, body?: unknown) {
	const response = await fetch(`${base}/rest/api${path}`, {
		method,
		headers: {
			Authorization: authorization,
			Accept: media,
			...(body === undefined ? {} : { "Content-Type": media }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
		signal: AbortSignal.timeout(60_000),
	});
	const text = await response.text();
	if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text}`);
	return JSON.parse(text) as Record<string, unknown>;
}

const ids = (items: unknown) =>
	((items as { identifier: string }[] | undefined) ?? []).map(({ identifier }) => ({ identifier }));

/** sp1 replaces Nordlys's processes (PUT participant). */
export function setNordlysProcesses(base: string, processes: string[]) {
	return send(
		base,
		"PUT",
		`/participants/${encodeURIComponent(NORDLYS)}`,
		SP1,
		"application/vnd.registry.participants.update.v1+json",
		{ processes: processes.map((identifier) => ({ identifier })), contact: CONTACT },
	);
}

/** ADMIN shows or hides a document type of the catalog (PUT document type), its other fields kept. */
export async function setDocumentTypeVisible(base: string, identifier: string, visible: boolean) {
	const current = await send(
		base,
		"GET",
		`/document-types/${identifier}`,
		ADMIN,
		"application/vnd.registry.document-types.get.v1+json",
	);
	const form = {
		title: current.title,
		...(current.qualifiedIdentifier ? { qualifiedIdentifier: current.qualifiedIdentifier } : {}),
		visible,
		processes: ids(current.processes),
	};
	return send(
		base,
		"PUT",
		`/document-types/${identifier}`,
		ADMIN,
		"application/vnd.registry.document-types.update.v1+json",
		form,
	);
}

/** app1 moves its access point's endpoints to another URL (its endpoints operation), everything else kept. */
export async function setAccessPointUrl(base: string, accessPoint: string, url: string) {
	const current = await send(
		base,
		"GET",
		`/accessPoints/${accessPoint}`,
		APP1,
		"application/vnd.registry.accesspoints.get.v1+json",
	);
	const endpoints = (current.endpoints as Record<string, unknown>[]).map((endpoint) => ({ ...endpoint, url }));
	return send(
		base,
		"PUT",
		`/accessPoints/${accessPoint}/endpoints`,
		APP1,
		"application/vnd.registry.accesspoints.endpoints.v1+json",
		{ endpoints },
	);
}

/** ADMIN names the access points a service provider's participants receive through. */
export function linkAccessPoints(base: string, serviceProvider: string, accessPoints: string[]) {
	return send(
		base,
		"PUT",
		`/service-providers/${serviceProvider}/access-points`,
		ADMIN,
		"application/vnd.registry.service-providers.access-points.v1+json",
		{ accessPoints: accessPoints.map((identifier) => ({ identifier })) },
	);
}
