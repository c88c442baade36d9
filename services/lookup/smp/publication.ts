/**
 * What the registry publishes about an organization (decisions §13), from the lookup's read model,
 * its catalog copy and its access point directory: the document types of the visible processes
 * its participants hold, and for one document type each such process with the endpoints of the
 * access points of the service provider holding it. Plain data; peppol-smp.ts and bdxr-smp2.ts
 * write it as XML.
 */
import type { AccessPointEndpoints } from "../../../src/contract/endpoints";
import { PARTICIPANT_SCHEME } from "../../../src/contract/identifiers";
import type { Process, ServiceProvider } from "../../../src/contract/model";
import { heldProcesses, visiblePartsOf, type OrganizationProcessesDoc } from "../read-model";
import { qualifiedIdentifier, splitQualifiedIdentifier, type SmpIdentifier } from "./identifiers";
import type { SmpEndpoint, SmpProcess, SmpServiceGroup, SmpServiceMetadata } from "./model";

/** Service provider identifier → the endpoints of its access points, in the order it names them. */
export type AccessPointDirectory = ReadonlyMap<string, SmpEndpoint[]>;

/** What the lookup loads for its directory: every service provider and every access point. */
export interface DirectorySources {
	serviceProviders: ServiceProvider[];
	accessPoints: AccessPointEndpoints[];
}

export function accessPointDirectory({ serviceProviders, accessPoints }: DirectorySources): AccessPointDirectory {
	const endpointsOf = new Map<string, SmpEndpoint[]>();
	for (const accessPoint of accessPoints)
		endpointsOf.set(
			accessPoint.identifier.toLowerCase(),
			accessPoint.endpoints.map((endpoint) => ({
				transportProfile: endpoint.transportProfile.value,
				url: endpoint.url,
				certificate: endpoint.certificate ?? "",
				...(endpoint.activationDate ? { activationDate: endpoint.activationDate } : {}),
				...(endpoint.expirationDate ? { expirationDate: endpoint.expirationDate } : {}),
				...(endpoint.description ? { description: endpoint.description } : {}),
				...(endpoint.technicalContactUrl ? { technicalContactUrl: endpoint.technicalContactUrl } : {}),
			})),
		);
	const directory = new Map<string, SmpEndpoint[]>();
	for (const serviceProvider of serviceProviders)
		directory.set(
			serviceProvider.identifier.toLowerCase(),
			(serviceProvider.accessPoints ?? []).flatMap(
				(accessPoint) => endpointsOf.get(accessPoint.identifier.toLowerCase()) ?? [],
			),
		);
	return directory;
}

/** The organization as the SMP answers name it: the participant scheme and its case-folded `icd:identifier`. */
export function smpParticipant(organizationKey: string): SmpIdentifier {
	return { scheme: PARTICIPANT_SCHEME, value: organizationKey };
}

/** The document types an organization publishes, ordered; null when it has no participant (404). */
export function serviceGroupOf(
	doc: OrganizationProcessesDoc | null,
	catalog: ReadonlyMap<string, Process>,
): SmpServiceGroup | null {
	const published = publishedProcesses(doc, catalog);
	if (!published || !doc) return null;
	const documentTypes = new Map<string, SmpIdentifier>();
	for (const { process } of published)
		for (const documentType of process.documentTypes) {
			const identifier = splitQualifiedIdentifier(documentType.qualifiedIdentifier ?? "");
			if (identifier) documentTypes.set(qualifiedIdentifier(identifier), identifier);
		}
	return {
		participant: smpParticipant(doc.identifier),
		documentTypes: [...documentTypes.keys()].sort().map((key) => documentTypes.get(key) as SmpIdentifier),
	};
}

/**
 * The processes an organization publishes for a document type, each with its endpoints (none
 * when its service provider names no access point); null when it publishes no such document type.
 */
export function serviceMetadataOf(
	doc: OrganizationProcessesDoc | null,
	catalog: ReadonlyMap<string, Process>,
	directory: AccessPointDirectory,
	documentType: SmpIdentifier,
): SmpServiceMetadata | null {
	const published = publishedProcesses(doc, catalog);
	if (!published || !doc) return null;
	let publishedDocumentType: SmpIdentifier | null = null;
	const processes: SmpProcess[] = [];
	for (const { process, serviceProvider } of published) {
		const linked = process.documentTypes
			.map((candidate) => splitQualifiedIdentifier(candidate.qualifiedIdentifier ?? ""))
			.find((candidate) => candidate !== null && sameDocumentType(candidate, documentType));
		const identifier = splitQualifiedIdentifier(process.qualifiedIdentifier ?? "");
		if (!linked || !identifier) continue;
		publishedDocumentType = linked;
		processes.push({ identifier, endpoints: directory.get(serviceProvider?.toLowerCase() ?? "") ?? [] });
	}
	if (!publishedDocumentType) return null;
	return { participant: smpParticipant(doc.identifier), documentType: publishedDocumentType, processes };
}

/** The visible processes the organization's participants hold (visible parts only), ordered; null: no participant. */
function publishedProcesses(
	doc: OrganizationProcessesDoc | null,
	catalog: ReadonlyMap<string, Process>,
): Array<{ process: Process; serviceProvider: string | undefined }> | null {
	const held = heldProcesses(doc);
	if (!held) return null;
	const published: Array<{ process: Process; serviceProvider: string | undefined }> = [];
	for (const [id, serviceProvider] of held) {
		const process = catalog.get(id);
		if (process && process.visible !== false) published.push({ process: visiblePartsOf(process), serviceProvider });
	}
	return published.sort((a, b) =>
		(a.process.qualifiedIdentifier ?? "").localeCompare(b.process.qualifiedIdentifier ?? ""),
	);
}

/** Schemes compare case-insensitively, values exactly (document type identifiers are case-sensitive in Peppol). */
function sameDocumentType(a: SmpIdentifier, b: SmpIdentifier): boolean {
	return a.value === b.value && a.scheme.toLowerCase() === b.scheme.toLowerCase();
}
