/**
 * The SMP lookups over HTTP (issue 37, decisions §13, docs/smp.md), on the one-process registry
 * and on the cluster (jest project "distributed"): Peppol SMP 1.x at the root, OASIS SMP 2.0
 * under /bdxr-smp-2, signed with a pair openssl made and given as SMP_KEY_FILE and
 * SMP_CERTIFICATE_FILE, links on SMP_PUBLIC_URL. The signature is judged by Debian's xmlsec1
 * (and xml-crypto's own check); the shapes by the specifications' element names and namespaces;
 * the links' encoding by the Peppol specification's own example. Then freshness: a process
 * added by the participant's service provider, a document type hidden by ADMIN, an access
 * point's URL changed by its provider and a service provider's access points unlinked, each seen
 * in the answers (polled until, never slept on).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SmpSigner } from "../../services/lookup/smp/signing";
import { pollUntil } from "../support/poll";
import { REGISTRY_START_TIMEOUT_MS, startRegistry, TOPOLOGY, type RunningRegistry } from "../support/registry";
import {
	all,
	BDXR_CAC,
	BDXR_CBC,
	BDXR_GROUP,
	BDXR_METADATA,
	bdxrGroupPath,
	bdxrMetadataPath,
	BILLING,
	BILLING_PROCESS,
	BUSDOX,
	BUSDOX_IDENTIFIERS,
	childElements,
	CREDIT_NOTE,
	CREDIT_NOTE_TYPE,
	DSIG,
	get,
	groupDocumentTypes,
	identifiers,
	INVOICE,
	INVOICE_RESPONSE,
	INVOICE_SEGMENT,
	linkAccessPoints,
	metadataAddresses,
	NORDLYS,
	NORDLYS_AP,
	NORDLYS_AP_URL,
	NORDLYS_SEGMENT,
	NORDLYS_VALUE,
	opensslSigningPair,
	ORDER,
	ORDERING,
	ORDERING_PROCESS,
	parseXml,
	peppolGroupPath,
	peppolMetadataPath,
	qname,
	setAccessPointUrl,
	setDocumentTypeVisible,
	setNordlysProcesses,
	texts,
	WSA,
	withXmlsec,
	xmlsecVerify,
	type SigningFiles,
} from "../support/smp";

const PUBLIC_URL = "https://smp.registry.example";
const UNKNOWN = "iso6523-actorid-upis::0192:000000000";
// Havblikk Fiskeri AS, held by sp2's Fjordnett Fakturaservice AS, which receives through its access point 33…03.
const HAVBLIKK = "iso6523-actorid-upis::0192:986252932";
const FJORDNETT = "11111111-0000-4000-8000-000000000002";
const FJORDNETT_AP = "33333333-0000-4000-8000-000000000003";

let registry: RunningRegistry;
let signing: SigningFiles;

beforeAll(async () => {
	signing = opensslSigningPair(fs.mkdtempSync(path.join(os.tmpdir(), "smp-http-")));
	registry = await startRegistry({ env: { ...signing.env, SMP_PUBLIC_URL: PUBLIC_URL } });
}, REGISTRY_START_TIMEOUT_MS);
afterAll(async () => {
	await registry?.stop();
	if (signing) fs.rmSync(signing.folder, { recursive: true, force: true });
});

const smp = (path: string, headers: Record<string, string> = {}) => get(registry.url, path, headers);

/** The answer once it is 200 (the cluster's lookup may still be loading its access point directory). */
const answered = (path: string) =>
	pollUntil(`200 from ${path}`, 30_000, async () => {
		const reply = await smp(path);
		return reply.status === 200 ? reply : undefined;
	});

describe(`SMP answers (${TOPOLOGY})`, () => {
	test("Peppol service group: busdox ServiceGroup, the participant, one reference per published document type, hrefs on SMP_PUBLIC_URL in the Peppol encoding", async () => {
		const reply = await answered(peppolGroupPath(NORDLYS));
		expect(reply.headers.get("content-type")).toBe("text/xml;charset=UTF-8");
		expect(reply.text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
		const root = parseXml(reply.text).documentElement as NonNullable<
			ReturnType<typeof parseXml>["documentElement"]
		>;
		expect(qname(root)).toBe(`{${BUSDOX}}ServiceGroup`);
		expect(childElements(root).map(qname)).toEqual([
			`{${BUSDOX_IDENTIFIERS}}ParticipantIdentifier`,
			`{${BUSDOX}}ServiceMetadataReferenceCollection`,
		]);
		expect(identifiers(root, BUSDOX_IDENTIFIERS, "ParticipantIdentifier", "scheme")).toEqual([NORDLYS]);
		const hrefs = all(root, BUSDOX, "ServiceMetadataReference").map((reference) => reference.getAttribute("href"));
		expect(hrefs).toHaveLength(3); // Nordlys's billing (invoice, credit note) and invoice response
		// The Peppol SMP specification's example of a document type in a path: `::` %3A%3A, `##` %23%23, `#` %23.
		expect(hrefs).toContain(`${PUBLIC_URL}/${NORDLYS_SEGMENT}/services/${INVOICE_SEGMENT}`);
		for (const href of hrefs)
			expect(href).toMatch(
				/^https:\/\/smp\.registry\.example\/[A-Za-z0-9%._~+-]+\/services\/[A-Za-z0-9%._~+-]+$/,
			);
		expect(groupDocumentTypes("peppol", reply.status, reply.text)).toContain(CREDIT_NOTE);
	});

	test("each href, asked of the registry itself, answers that document type's signed service metadata", async () => {
		const group = await answered(peppolGroupPath(NORDLYS));
		const hrefs = all(parseXml(group.text), BUSDOX, "ServiceMetadataReference").map(
			(reference) => reference.getAttribute("href") as string,
		);
		for (const href of hrefs) {
			const reply = await answered(href.slice(PUBLIC_URL.length));
			const asked = decodeURIComponent(href.split("/services/")[1]);
			expect(identifiers(parseXml(reply.text), BUSDOX_IDENTIFIERS, "DocumentIdentifier", "scheme")).toEqual([
				asked,
			]);
		}
	});

	test("Peppol signed service metadata: busdox SignedServiceMetadata, the participant, the document type, the process, the provider's access point endpoint", async () => {
		const reply = await answered(peppolMetadataPath(NORDLYS, INVOICE));
		expect(reply.headers.get("content-type")).toBe("text/xml;charset=UTF-8");
		const document = parseXml(reply.text);
		const root = document.documentElement as NonNullable<typeof document.documentElement>;
		expect(qname(root)).toBe(`{${BUSDOX}}SignedServiceMetadata`);
		expect(childElements(root).map(qname)).toEqual([`{${BUSDOX}}ServiceMetadata`, `{${DSIG}}Signature`]);
		const information = all(root, BUSDOX, "ServiceInformation");
		expect(information).toHaveLength(1);
		expect(childElements(information[0]).map(qname)).toEqual([
			`{${BUSDOX_IDENTIFIERS}}ParticipantIdentifier`,
			`{${BUSDOX_IDENTIFIERS}}DocumentIdentifier`,
			`{${BUSDOX}}ProcessList`,
		]);
		expect(identifiers(root, BUSDOX_IDENTIFIERS, "ParticipantIdentifier", "scheme")).toEqual([NORDLYS]);
		expect(identifiers(root, BUSDOX_IDENTIFIERS, "DocumentIdentifier", "scheme")).toEqual([INVOICE]);
		expect(identifiers(root, BUSDOX_IDENTIFIERS, "ProcessIdentifier", "scheme")).toEqual([BILLING_PROCESS]);
		const endpoints = all(root, BUSDOX, "Endpoint");
		expect(endpoints).toHaveLength(1);
		expect(endpoints[0].getAttribute("transportProfile")).toBe("peppol-transport-as4-v2_0");
		expect(childElements(endpoints[0]).map(qname)).toEqual([
			`{${WSA}}EndpointReference`,
			`{${BUSDOX}}RequireBusinessLevelSignature`,
			`{${BUSDOX}}ServiceActivationDate`,
			`{${BUSDOX}}Certificate`,
			`{${BUSDOX}}ServiceDescription`,
			`{${BUSDOX}}TechnicalContactUrl`,
		]);
		expect(texts(root, WSA, "Address")).toEqual([NORDLYS_AP_URL]);
		expect(texts(root, BUSDOX, "ServiceActivationDate")).toEqual(["2026-01-01T00:00:00Z"]);
		expect(texts(root, BUSDOX, "Certificate")[0]).toMatch(/^MII[A-Za-z0-9+/=]+$/);
		expect(texts(root, BUSDOX, "ServiceDescription")).toEqual(["Nordlys production AS4 endpoint"]);
		expect(texts(root, BUSDOX, "TechnicalContactUrl")).toEqual(["https://nordlys-ap.example/support"]);
	});

	test("the Peppol signature: RSA-SHA256, SHA-256, inclusive C14N, the configured certificate in X509Data; xmlsec1 and xml-crypto accept it", async () => {
		const reply = await answered(peppolMetadataPath(NORDLYS, INVOICE));
		const document = parseXml(reply.text);
		const algorithm = (name: string) =>
			all(document, DSIG, name).map((element) => element.getAttribute("Algorithm"));
		expect(algorithm("SignatureMethod")).toEqual(["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"]);
		expect(algorithm("DigestMethod")).toEqual(["http://www.w3.org/2001/04/xmlenc#sha256"]);
		expect(algorithm("CanonicalizationMethod")).toEqual(["http://www.w3.org/TR/2001/REC-xml-c14n-20010315"]);
		const configured = signing.certificatePem.replace(/-----[A-Z ]+-----|\s/g, "");
		expect(texts(document, DSIG, "X509Certificate")).toEqual([configured]);
		const pair = { key: fs.readFileSync(signing.keyFile, "utf8"), certificate: signing.certificatePem };
		expect(new SmpSigner(pair.key, pair.certificate).verify(reply.text)).toBe(true);
	});

	withXmlsec(
		"xmlsec1 verifies both signed answers against the configured certificate, and refuses them tampered",
		async () => {
			for (const metadataPath of [peppolMetadataPath(NORDLYS, INVOICE), bdxrMetadataPath(NORDLYS, INVOICE)]) {
				const reply = await answered(metadataPath);
				expect(xmlsecVerify(signing.folder, reply.text, signing.certificateFile)).toMatchObject({ status: 0 });
				const tampered = reply.text.replace(NORDLYS_AP_URL, "https://as4.elsewhere.example/as4");
				expect(tampered).not.toBe(reply.text);
				const refused = xmlsecVerify(signing.folder, tampered, signing.certificateFile);
				expect(refused.status).not.toBe(0);
				expect(refused.output).toMatch(/data and digest do not match/);
			}
		},
	);

	test("OASIS SMP 2.0 service group: SMPVersionID 2.0, ParticipantID, one ServiceReference per document type, unsigned", async () => {
		const reply = await answered(bdxrGroupPath(NORDLYS));
		expect(reply.headers.get("content-type")).toBe("text/xml;charset=UTF-8");
		const document = parseXml(reply.text);
		const root = document.documentElement as NonNullable<typeof document.documentElement>;
		expect(qname(root)).toBe(`{${BDXR_GROUP}}ServiceGroup`);
		expect(childElements(root).map(qname)).toEqual([
			`{${BDXR_CBC}}SMPVersionID`,
			`{${BDXR_CBC}}ParticipantID`,
			`{${BDXR_CAC}}ServiceReference`,
			`{${BDXR_CAC}}ServiceReference`,
			`{${BDXR_CAC}}ServiceReference`,
		]);
		expect(texts(root, BDXR_CBC, "SMPVersionID")).toEqual(["2.0"]);
		expect(identifiers(root, BDXR_CBC, "ParticipantID", "schemeID")).toEqual([NORDLYS]);
		expect(groupDocumentTypes("bdxr", reply.status, reply.text)).toEqual(
			groupDocumentTypes("peppol", 200, (await answered(peppolGroupPath(NORDLYS))).text),
		);
		expect(all(root, DSIG, "Signature")).toEqual([]);
	});

	test("OASIS SMP 2.0 service metadata: the schema's order, the endpoint's fields, the signature last", async () => {
		const reply = await answered(bdxrMetadataPath(NORDLYS, INVOICE));
		const document = parseXml(reply.text);
		const root = document.documentElement as NonNullable<typeof document.documentElement>;
		expect(qname(root)).toBe(`{${BDXR_METADATA}}ServiceMetadata`);
		expect(childElements(root).map(qname)).toEqual([
			`{${BDXR_CBC}}SMPVersionID`,
			`{${BDXR_CBC}}ID`,
			`{${BDXR_CBC}}ParticipantID`,
			`{${BDXR_CAC}}ProcessMetadata`,
			`{${DSIG}}Signature`,
		]);
		const [processMetadata] = all(root, BDXR_CAC, "ProcessMetadata");
		expect(childElements(processMetadata).map(qname)).toEqual([`{${BDXR_CAC}}Process`, `{${BDXR_CAC}}Endpoint`]);
		expect(identifiers(processMetadata, BDXR_CBC, "ID", "schemeID")).toEqual([BILLING_PROCESS]);
		const [endpoint] = all(root, BDXR_CAC, "Endpoint");
		expect(childElements(endpoint).map(qname)).toEqual([
			`{${BDXR_CBC}}TransportProfileID`,
			`{${BDXR_CBC}}Description`,
			`{${BDXR_CBC}}Contact`,
			`{${BDXR_CBC}}AddressURI`,
			`{${BDXR_CBC}}ActivationDate`,
			`{${BDXR_CAC}}Certificate`,
		]);
		expect(texts(endpoint, BDXR_CBC, "AddressURI")).toEqual([NORDLYS_AP_URL]);
		expect(texts(endpoint, BDXR_CBC, "ActivationDate")).toEqual(["2026-01-01"]);
		expect(all(endpoint, BDXR_CBC, "ContentBinaryObject")[0].getAttribute("mimeCode")).toBe("application/base64");
		const algorithm = (name: string) => all(root, DSIG, name).map((element) => element.getAttribute("Algorithm"));
		expect(algorithm("CanonicalizationMethod")).toEqual(["http://www.w3.org/2006/12/xml-c14n11"]);
		expect(algorithm("SignatureMethod")).toEqual(["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"]);
	});
});

describe(`SMP identifiers in paths (${TOPOLOGY})`, () => {
	test("the participant is matched case-insensitively, and answered in its registered form", async () => {
		const reply = await answered(`/ISO6523-ACTORID-UPIS%3A%3A0192%3A991825827`);
		expect(identifiers(parseXml(reply.text), BUSDOX_IDENTIFIERS, "ParticipantIdentifier", "scheme")).toEqual([
			NORDLYS,
		]);
		const metadata = await answered(`/IsO6523-ActorId-Upis::0192:991825827/services/${INVOICE_SEGMENT}`);
		expect(texts(parseXml(metadata.text), BUSDOX_IDENTIFIERS, "ParticipantIdentifier")).toEqual([NORDLYS_VALUE]);
	});

	test("a literal `::` and a lower-case `%3a` are the same identifiers as the upper-case encoding", async () => {
		const reference = await answered(`/${NORDLYS_SEGMENT}/services/${INVOICE_SEGMENT}`);
		const literal = await answered(
			`/${NORDLYS}/services/${INVOICE.replace(/#/g, "%23")}`, // `#` must be encoded: it would start a fragment
		);
		const lowerCase = await answered(
			`/${NORDLYS_SEGMENT.toLowerCase()}/services/${INVOICE_SEGMENT.replace(/%3A/g, "%3a")}`,
		);
		expect(literal.text).toBe(reference.text);
		expect(lowerCase.text).toBe(reference.text);
		const group = await answered(`/bdxr-smp-2/${NORDLYS}`);
		expect(identifiers(parseXml(group.text), BDXR_CBC, "ParticipantID", "schemeID")).toEqual([NORDLYS]);
	});

	test("404 in the spec's error shape for an unknown participant and for a document type the participant does not publish", async () => {
		const cases: [string, RegExp][] = [
			[peppolGroupPath(UNKNOWN), /participant .*0192:000000000/],
			[bdxrGroupPath(UNKNOWN), /participant .*0192:000000000/],
			[peppolMetadataPath(UNKNOWN, INVOICE), /participant .*0192:000000000.* not published by/],
			[peppolMetadataPath(NORDLYS, ORDER), /document type/], // a document type of the catalog Nordlys does not receive
			[bdxrMetadataPath(NORDLYS, ORDER), /document type/],
			[peppolMetadataPath(NORDLYS, "busdox-docid-qns::urn:example:unknown::1.0"), /document type/],
		];
		for (const [path, message] of cases) {
			const reply = await smp(path);
			expect({ path, status: reply.status }).toEqual({ path, status: 404 });
			expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
			expect(JSON.parse(reply.text)).toMatchObject({
				status: 404,
				error: "Not Found",
				exception: "NotFoundException",
				message: expect.stringMatching(message),
				path,
			});
		}
	});

	test("ETag on every answer, 304 to a matching If-None-Match", async () => {
		for (const path of [peppolGroupPath(NORDLYS), peppolMetadataPath(NORDLYS, INVOICE), bdxrGroupPath(NORDLYS)]) {
			const reply = await answered(path);
			const tag = reply.headers.get("etag") as string;
			expect(tag).toMatch(/^"/);
			const again = await smp(path, { "If-None-Match": tag });
			expect(again.status).toBe(304);
			expect(again.text).toBe("");
			expect(again.headers.get("etag")).toBe(tag);
			expect((await smp(path, { "If-None-Match": '"another"' })).status).toBe(200);
		}
	});
});

/** Polls the answer at `path` (every format given) until `shows` holds of it. */
async function shown<T>(
	what: string,
	paths: { format: "peppol" | "bdxr"; path: string }[],
	read: (format: "peppol" | "bdxr", status: number, xml: string) => T,
	shows: (value: T) => boolean,
): Promise<void> {
	for (const { format, path } of paths)
		await pollUntil(`${what} (${path})`, 30_000, async () => {
			const reply = await smp(path);
			return shows(read(format, reply.status, reply.text)) ? true : undefined;
		});
}

const bothGroups = (participant: string) => [
	{ format: "peppol" as const, path: peppolGroupPath(participant) },
	{ format: "bdxr" as const, path: bdxrGroupPath(participant) },
];
const bothMetadata = (participant: string, documentType: string) => [
	{ format: "peppol" as const, path: peppolMetadataPath(participant, documentType) },
	{ format: "bdxr" as const, path: bdxrMetadataPath(participant, documentType) },
];

describe(`SMP freshness (${TOPOLOGY})`, () => {
	test("a process sp1 adds to Nordlys shows in its service groups and in the new document type's metadata", async () => {
		// Every answer once before the change: what a node has cached must not outlive it.
		await shown(
			"Order not published yet",
			bothGroups(NORDLYS),
			groupDocumentTypes,
			(types) => !!types && !types.includes(ORDER),
		);
		await setNordlysProcesses(registry.url, [BILLING, INVOICE_RESPONSE, ORDERING]);
		await shown("Order published", bothGroups(NORDLYS), groupDocumentTypes, (types) => !!types?.includes(ORDER));
		const reply = await answered(peppolMetadataPath(NORDLYS, ORDER));
		expect(identifiers(parseXml(reply.text), BUSDOX_IDENTIFIERS, "ProcessIdentifier", "scheme")).toEqual([
			ORDERING_PROCESS,
		]);
		expect(metadataAddresses("peppol", reply.status, reply.text)).toEqual([NORDLYS_AP_URL]);
		expect(metadataAddresses("bdxr", 200, (await answered(bdxrMetadataPath(NORDLYS, ORDER))).text)).toEqual([
			NORDLYS_AP_URL,
		]);
	});

	test("a document type ADMIN hides disappears from the service groups and its metadata answers 404; shown again, it is back", async () => {
		await answered(peppolMetadataPath(NORDLYS, CREDIT_NOTE));
		await setDocumentTypeVisible(registry.url, CREDIT_NOTE_TYPE, false);
		try {
			await shown(
				"credit note hidden",
				bothGroups(NORDLYS),
				groupDocumentTypes,
				(types) => !!types && !types.includes(CREDIT_NOTE) && types.includes(INVOICE),
			);
			await shown(
				"credit note metadata gone",
				bothMetadata(NORDLYS, CREDIT_NOTE),
				metadataAddresses,
				(addresses) => addresses === null,
			);
			expect((await smp(peppolMetadataPath(NORDLYS, CREDIT_NOTE))).status).toBe(404);
		} finally {
			await setDocumentTypeVisible(registry.url, CREDIT_NOTE_TYPE, true);
		}
		await shown(
			"credit note shown again",
			bothGroups(NORDLYS),
			groupDocumentTypes,
			(types) => !!types?.includes(CREDIT_NOTE),
		);
	});

	test("an access point URL app1 changes is published, still signed", async () => {
		const moved = "https://as4-moved.nordlys-ap.example/as4";
		await answered(peppolMetadataPath(NORDLYS, INVOICE));
		await setAccessPointUrl(registry.url, NORDLYS_AP, moved);
		try {
			await shown(
				"the moved URL",
				bothMetadata(NORDLYS, INVOICE),
				metadataAddresses,
				(addresses) => addresses?.[0] === moved,
			);
			const reply = await answered(peppolMetadataPath(NORDLYS, INVOICE));
			const pair = { key: fs.readFileSync(signing.keyFile, "utf8"), certificate: signing.certificatePem };
			expect(new SmpSigner(pair.key, pair.certificate).verify(reply.text)).toBe(true);
		} finally {
			await setAccessPointUrl(registry.url, NORDLYS_AP, NORDLYS_AP_URL);
		}
		await shown(
			"the URL back",
			bothMetadata(NORDLYS, INVOICE),
			metadataAddresses,
			(addresses) => addresses?.[0] === NORDLYS_AP_URL,
		);
	});

	test("a service provider with no access point linked: its participants' processes are published with an empty ServiceEndpointList", async () => {
		await answered(peppolMetadataPath(HAVBLIKK, INVOICE));
		await linkAccessPoints(registry.url, FJORDNETT, []);
		try {
			await shown(
				"no endpoint",
				bothMetadata(HAVBLIKK, INVOICE),
				metadataAddresses,
				(addresses) => addresses?.length === 0,
			);
			const peppol = parseXml((await answered(peppolMetadataPath(HAVBLIKK, INVOICE))).text);
			expect(identifiers(peppol, BUSDOX_IDENTIFIERS, "ProcessIdentifier", "scheme")).toEqual([BILLING_PROCESS]);
			const [list] = all(peppol, BUSDOX, "ServiceEndpointList");
			expect(childElements(list)).toEqual([]);
			const bdxr = parseXml((await answered(bdxrMetadataPath(HAVBLIKK, INVOICE))).text);
			expect(childElements(all(bdxr, BDXR_CAC, "ProcessMetadata")[0]).map(qname)).toEqual([
				`{${BDXR_CAC}}Process`,
			]);
		} finally {
			await linkAccessPoints(registry.url, FJORDNETT, [FJORDNETT_AP]);
		}
		await shown(
			"the endpoint back",
			bothMetadata(HAVBLIKK, INVOICE),
			metadataAddresses,
			(addresses) => addresses?.length === 1,
		);
	});
});
