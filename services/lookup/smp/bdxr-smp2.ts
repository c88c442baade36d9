/**
 * OASIS BDXR SMP 2.0 answers (ServiceGroup-2.0.xsd, ServiceMetadata-2.0.xsd and the common
 * component schemas): element names, namespaces and order as their sequences give them. The
 * optional ext:SMPExtensions is left out; the schemas put ds:Signature last in the root, where
 * SmpSigner.signBdxr appends it.
 */
import type { SmpIdentifier } from "./identifiers";
import { xmlDate, type SmpEndpoint, type SmpProcess, type SmpServiceGroup, type SmpServiceMetadata } from "./model";
import { XML_DECLARATION, element, optionalTextElement, textElement } from "../../../src/contract/xml";

export const BDXR_SERVICE_GROUP_NAMESPACE = "http://docs.oasis-open.org/bdxr/ns/SMP/2/ServiceGroup";
export const BDXR_SERVICE_METADATA_NAMESPACE = "http://docs.oasis-open.org/bdxr/ns/SMP/2/ServiceMetadata";
export const BDXR_BASIC_NAMESPACE = "http://docs.oasis-open.org/bdxr/ns/SMP/2/BasicComponents";
export const BDXR_AGGREGATE_NAMESPACE = "http://docs.oasis-open.org/bdxr/ns/SMP/2/AggregateComponents";

/** "For SMP 2.0, this value MUST be set to 2.0" (SMPVersionID). */
const SMP_VERSION = "2.0";
/** The MIME code the specification's examples give a certificate's ContentBinaryObject. */
const CERTIFICATE_MIME_CODE = "application/base64";

const COMPONENTS = { "xmlns:smp-cac": BDXR_AGGREGATE_NAMESPACE, "xmlns:smp-cbc": BDXR_BASIC_NAMESPACE };

/** GET /bdxr-smp-2/{participant}: one ServiceReference per document type. */
export function bdxrServiceGroup(group: SmpServiceGroup): string {
	return (
		XML_DECLARATION +
		element("ServiceGroup", { xmlns: BDXR_SERVICE_GROUP_NAMESPACE, ...COMPONENTS }, [
			textElement("smp-cbc:SMPVersionID", SMP_VERSION),
			identifierElement("smp-cbc:ParticipantID", group.participant),
			...group.documentTypes.map((documentType) =>
				element("smp-cac:ServiceReference", {}, [identifierElement("smp-cbc:ID", documentType)]),
			),
		])
	);
}

/** GET /bdxr-smp-2/{participant}/services/{documentType}, before signing. */
export function bdxrServiceMetadata(metadata: SmpServiceMetadata): string {
	return (
		XML_DECLARATION +
		element("ServiceMetadata", { xmlns: BDXR_SERVICE_METADATA_NAMESPACE, ...COMPONENTS }, [
			textElement("smp-cbc:SMPVersionID", SMP_VERSION),
			identifierElement("smp-cbc:ID", metadata.documentType),
			identifierElement("smp-cbc:ParticipantID", metadata.participant),
			...metadata.processes.map(processMetadataElement),
		])
	);
}

function processMetadataElement(process: SmpProcess): string {
	return element("smp-cac:ProcessMetadata", {}, [
		element("smp-cac:Process", {}, [identifierElement("smp-cbc:ID", process.identifier)]),
		...process.endpoints.map(endpointElement),
	]);
}

function endpointElement(endpoint: SmpEndpoint): string {
	return element("smp-cac:Endpoint", {}, [
		textElement("smp-cbc:TransportProfileID", endpoint.transportProfile),
		optionalTextElement("smp-cbc:Description", endpoint.description),
		optionalTextElement("smp-cbc:Contact", endpoint.technicalContactUrl),
		textElement("smp-cbc:AddressURI", endpoint.url),
		optionalTextElement("smp-cbc:ActivationDate", endpoint.activationDate && xmlDate(endpoint.activationDate)),
		optionalTextElement("smp-cbc:ExpirationDate", endpoint.expirationDate && xmlDate(endpoint.expirationDate)),
		element("smp-cac:Certificate", {}, [
			textElement("smp-cbc:ContentBinaryObject", endpoint.certificate, { mimeCode: CERTIFICATE_MIME_CODE }),
		]),
	]);
}

function identifierElement(name: string, identifier: SmpIdentifier): string {
	return textElement(name, identifier.value, { schemeID: identifier.scheme });
}
