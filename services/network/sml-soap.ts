/**
 * The SML's SOAP 1.1 messages (decisions §14; the busdox WSDLs named in peppol-reference.md):
 * the request bodies of ManageServiceMetadataService and ManageBusinessIdentifierService, and
 * what their answers and faults say. Pure: no I/O.
 */
import { DOMParser, type Element } from "@xmldom/xmldom";
import { element, textElement } from "../../src/contract/xml";
import { PARTICIPANT_SCHEME } from "./dns-names";

export const SOAP_NS = "http://schemas.xmlsoap.org/soap/envelope/";
export const LOCATOR_NS = "http://busdox.org/serviceMetadata/locator/1.0/";
export const IDENTIFIERS_NS = "http://busdox.org/transport/identifiers/1.0/";
const SMP_SERVICE = "http://busdox.org/serviceMetadata/ManageServiceMetadataService/1.0/";
// The WSDL's SOAPAction has nine literal spaces before the colon, and the EC SML matches it so.
const PARTICIPANT_SERVICE = "http://busdox.org/serviceMetadata/ManageBusinessIdentifierService/1.0/         ";

/** One SOAP call: which endpoint of SML_URL, its SOAPAction and body. */
export interface SoapCall {
	endpoint: "manageservicemetadata" | "manageparticipantidentifier";
	action: string;
	body: string;
}

/** The SMP's record in the SML. */
export interface SmpRecord {
	smpId: string;
	logicalAddress: string;
	physicalAddress: string;
}

/** The four faults of the busdox WSDLs. */
export type FaultKind = "BadRequestFault" | "NotFoundFault" | "UnauthorizedFault" | "InternalErrorFault";

/** A fault the SML answered: the call reached it and was refused. */
export class SmlFault extends Error {
	constructor(
		readonly kind: FaultKind | "Fault",
		readonly faultMessage: string,
	) {
		super(`SML ${kind}: ${faultMessage}`);
		this.name = "SmlFault";
	}

	/** A create refused because the SML has the participant already: the create's work is done. */
	get alreadyExists(): boolean {
		return this.kind !== "NotFoundFault" && /already (exist|in use|registered)/i.test(this.faultMessage);
	}

	/** A delete refused because the SML does not have it: the delete's work is done. */
	get doesNotExist(): boolean {
		return this.kind === "NotFoundFault";
	}
}

const envelope = (payload: string): string =>
	`<?xml version="1.0" encoding="UTF-8"?><S:Envelope xmlns:S="${SOAP_NS}"><S:Body>${payload}</S:Body></S:Envelope>`;

const locator = (name: string, children: Array<string | null>, namespaces = false): string =>
	element(
		`lrs:${name}`,
		{ "xmlns:lrs": LOCATOR_NS, ...(namespaces ? { "xmlns:ids": IDENTIFIERS_NS } : {}) },
		children,
	);

const smpId = (id: string) => textElement("lrs:ServiceMetadataPublisherID", id);
const participant = (value: string) => textElement("ids:ParticipantIdentifier", value, { scheme: PARTICIPANT_SCHEME });

function smpRecordCall(operation: "create" | "update", record: SmpRecord): SoapCall {
	const name =
		operation === "create" ? "CreateServiceMetadataPublisherService" : "UpdateServiceMetadataPublisherService";
	const body = locator(name, [
		element("lrs:PublisherEndpoint", {}, [
			textElement("lrs:LogicalAddress", record.logicalAddress),
			textElement("lrs:PhysicalAddress", record.physicalAddress),
		]),
		smpId(record.smpId),
	]);
	return { endpoint: "manageservicemetadata", action: `${SMP_SERVICE}:${operation}In`, body: envelope(body) };
}

export const smlCalls = {
	readSmp: (id: string): SoapCall => ({
		endpoint: "manageservicemetadata",
		action: `${SMP_SERVICE}:readIn`,
		body: envelope(locator("ReadServiceMetadataPublisherService", [smpId(id)])),
	}),
	createSmp: (record: SmpRecord) => smpRecordCall("create", record),
	updateSmp: (record: SmpRecord) => smpRecordCall("update", record),
	create: (id: string, value: string): SoapCall => ({
		endpoint: "manageparticipantidentifier",
		action: `${PARTICIPANT_SERVICE}:createIn`,
		body: envelope(locator("CreateParticipantIdentifier", [smpId(id), participant(value)], true)),
	}),
	delete: (id: string, value: string): SoapCall => ({
		endpoint: "manageparticipantidentifier",
		action: `${PARTICIPANT_SERVICE}:deleteIn`,
		body: envelope(locator("DeleteParticipantIdentifier", [smpId(id), participant(value)], true)),
	}),
	createList: (id: string, values: string[]): SoapCall => ({
		endpoint: "manageparticipantidentifier",
		action: `${PARTICIPANT_SERVICE}:createListIn`,
		body: envelope(locator("CreateList", [...values.map(participant), smpId(id)], true)),
	}),
	deleteList: (id: string, values: string[]): SoapCall => ({
		endpoint: "manageparticipantidentifier",
		action: `${PARTICIPANT_SERVICE}:deleteListIn`,
		body: envelope(locator("DeleteList", [...values.map(participant), smpId(id)], true)),
	}),
	list: (id: string, nextPage?: string): SoapCall => ({
		endpoint: "manageparticipantidentifier",
		action: `${PARTICIPANT_SERVICE}:listIn`,
		body: envelope(
			locator("PageRequest", [smpId(id), nextPage ? textElement("lrs:NextPageIdentifier", nextPage) : null]),
		),
	}),
};

/** The SOAP body's first element, or a fault thrown as SmlFault. A body that is not SOAP throws an Error. */
export function answerOf(xml: string): Element | null {
	const errors: string[] = [];
	const document = new DOMParser({
		onError: (level, message) => void (level !== "warning" && errors.push(message)),
	}).parseFromString(xml, "text/xml");
	const envelopeElement = document.documentElement;
	if (
		errors.length ||
		!envelopeElement ||
		envelopeElement.localName !== "Envelope" ||
		envelopeElement.namespaceURI !== SOAP_NS
	)
		throw new Error("the SML's answer is not a SOAP 1.1 envelope");
	const body = childElements(envelopeElement).find((child) => child.localName === "Body");
	if (!body) throw new Error("the SML's answer has no SOAP body");
	const first = childElements(body)[0] ?? null;
	if (first?.localName === "Fault" && first.namespaceURI === SOAP_NS) throw faultOf(first);
	return first;
}

function faultOf(fault: Element): SmlFault {
	const detail = childElements(fault).find((child) => child.localName === "detail");
	const typed = detail ? childElements(detail).find((child) => child.namespaceURI === LOCATOR_NS) : undefined;
	const faultString = childElements(fault).find((child) => child.localName === "faultstring")?.textContent ?? "";
	if (typed) {
		const message = childElements(typed).find((child) => child.localName === "FaultMessage")?.textContent;
		return new SmlFault(typed.localName as FaultKind, (message ?? faultString).trim());
	}
	return new SmlFault("Fault", faultString.trim());
}

function childElements(parent: Element): Element[] {
	const children: Element[] = [];
	for (let node = parent.firstChild; node; node = node.nextSibling)
		if (node.nodeType === 1) children.push(node as unknown as Element);
	return children;
}

function childText(parent: Element, localName: string): string | undefined {
	return childElements(parent)
		.find((child) => child.localName === localName)
		?.textContent?.trim();
}

/** A Read's answer: the record the SML keeps for this SMP. */
export function smpRecordOf(answer: Element | null): SmpRecord {
	const endpoint = answer && childElements(answer).find((child) => child.localName === "PublisherEndpoint");
	if (!answer || !endpoint) throw new Error("the SML's Read answer has no PublisherEndpoint");
	return {
		smpId: childText(answer, "ServiceMetadataPublisherID") ?? "",
		logicalAddress: childText(endpoint, "LogicalAddress") ?? "",
		physicalAddress: childText(endpoint, "PhysicalAddress") ?? "",
	};
}

/** A List answer: the participant values (lower case) of one page and the next page's identifier. */
export function participantPageOf(answer: Element | null): { values: string[]; nextPage: string | null } {
	if (!answer || answer.localName !== "ParticipantIdentifierPage")
		throw new Error("the SML's List answer is not a ParticipantIdentifierPage");
	const values: string[] = [];
	for (const child of childElements(answer))
		if (
			child.localName === "ParticipantIdentifier" &&
			child.getAttribute("scheme")?.toLowerCase() === PARTICIPANT_SCHEME
		)
			values.push((child.textContent ?? "").trim().toLowerCase());
	return { values, nextPage: childText(answer, "NextPageIdentifier") || null };
}
