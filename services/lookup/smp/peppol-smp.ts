/**
 * Peppol SMP 1.x answers (the busdox ServiceMetadataPublishing 1.0 schema): element names,
 * namespaces and order as that schema's sequences give them. The SignedServiceMetadata comes
 * out unsigned; SmpSigner.signPeppol appends its ds:Signature.
 */
import { encodeIdentifierSegment, type SmpIdentifier } from "./identifiers";
import { xmlDateTime, type SmpEndpoint, type SmpProcess, type SmpServiceGroup, type SmpServiceMetadata } from "./model";
import { XML_DECLARATION, element, emptyElement, optionalTextElement, textElement } from "../../../src/contract/xml";

export const BUSDOX_SMP_NAMESPACE = "http://busdox.org/serviceMetadata/publishing/1.0/";
export const BUSDOX_IDENTIFIERS_NAMESPACE = "http://busdox.org/transport/identifiers/1.0/";
export const WS_ADDRESSING_NAMESPACE = "http://www.w3.org/2005/08/addressing";

const NAMESPACES = { xmlns: BUSDOX_SMP_NAMESPACE, "xmlns:id": BUSDOX_IDENTIFIERS_NAMESPACE };

/** GET /{participant}: one ServiceMetadataReference per document type, its href on `baseUrl`. */
export function peppolServiceGroup(group: SmpServiceGroup, baseUrl: string): string {
	const participantUrl = `${baseUrl.replace(/\/+$/, "")}/${encodeIdentifierSegment(group.participant)}`;
	const references = group.documentTypes.map((documentType) =>
		emptyElement("ServiceMetadataReference", {
			href: `${participantUrl}/services/${encodeIdentifierSegment(documentType)}`,
		}),
	);
	return (
		XML_DECLARATION +
		element("ServiceGroup", NAMESPACES, [
			identifierElement("id:ParticipantIdentifier", group.participant),
			element("ServiceMetadataReferenceCollection", {}, references),
		])
	);
}

/** GET /{participant}/services/{documentType}, before signing. */
export function peppolServiceMetadata(metadata: SmpServiceMetadata): string {
	const serviceInformation = element("ServiceInformation", {}, [
		identifierElement("id:ParticipantIdentifier", metadata.participant),
		identifierElement("id:DocumentIdentifier", metadata.documentType),
		element("ProcessList", {}, metadata.processes.map(processElement)),
	]);
	return (
		XML_DECLARATION +
		element("SignedServiceMetadata", { ...NAMESPACES, "xmlns:wsa": WS_ADDRESSING_NAMESPACE }, [
			element("ServiceMetadata", {}, [serviceInformation]),
		])
	);
}

function processElement(process: SmpProcess): string {
	return element("Process", {}, [
		identifierElement("id:ProcessIdentifier", process.identifier),
		element("ServiceEndpointList", {}, process.endpoints.map(endpointElement)),
	]);
}

/**
 * Certificate, ServiceDescription and TechnicalContactUrl are required by the schema: a missing
 * description or contact is published empty, which xs:string and xs:anyURI both allow.
 */
function endpointElement(endpoint: SmpEndpoint): string {
	return element("Endpoint", { transportProfile: endpoint.transportProfile }, [
		element("wsa:EndpointReference", {}, [textElement("wsa:Address", endpoint.url)]),
		textElement("RequireBusinessLevelSignature", "false"),
		optionalTextElement("ServiceActivationDate", endpoint.activationDate && xmlDateTime(endpoint.activationDate)),
		optionalTextElement("ServiceExpirationDate", endpoint.expirationDate && xmlDateTime(endpoint.expirationDate)),
		textElement("Certificate", endpoint.certificate),
		textElement("ServiceDescription", endpoint.description ?? ""),
		textElement("TechnicalContactUrl", endpoint.technicalContactUrl ?? ""),
	]);
}

function identifierElement(name: string, identifier: SmpIdentifier): string {
	return textElement(name, identifier.value, { scheme: identifier.scheme });
}
