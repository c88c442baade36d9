/**
 * Stored catalog records → the spec's answers ("Document type", "Process"), with nested
 * lists resolved. Pure: the records to resolve against are handed in.
 * `seesHidden` is false for anonymous callers, who never see a `visible: false` process or
 * document type, nested ones included (decisions §4).
 */
import type { DocumentType, DocumentTypeSummary, Process, ProcessSummary } from "../../src/contract/model";
import type { StoredDoc } from "../../src/store/types";
import type { CapabilityRecord, DocumentTypeRecord, ProcessRecord } from "./models";

export interface Related {
	capabilities: Map<string, CapabilityRecord>;
	documentTypes: Map<string, DocumentTypeRecord>;
	processes: Map<string, ProcessRecord>;
}

export function byIdentifier<T extends { identifier: string }>(records: T[]): Map<string, T> {
	return new Map(records.map((record) => [record.identifier, record]));
}

/** Records in the order of `identifiers`; unknown ones (deleted meanwhile) are left out. */
function pick<T extends { identifier: string; visible?: boolean }>(
	identifiers: string[],
	records: Map<string, T>,
	seesHidden: boolean,
): T[] {
	return identifiers
		.map((identifier) => records.get(identifier))
		.filter((record): record is T => record !== undefined && (seesHidden || record.visible !== false));
}

export function processSummary(record: ProcessRecord): ProcessSummary {
	return {
		identifier: record.identifier,
		qualifiedIdentifier: record.qualifiedIdentifier,
		title: record.title,
		restricted: record.restricted,
		visible: record.visible,
	};
}

export function documentTypeSummary(record: DocumentTypeRecord): DocumentTypeSummary {
	return {
		identifier: record.identifier,
		qualifiedIdentifier: record.qualifiedIdentifier,
		title: record.title,
		visible: record.visible,
	};
}

export function processAnswer(record: ProcessRecord, related: Related, seesHidden: boolean): Process {
	return {
		identifier: record.identifier,
		qualifiedIdentifier: record.qualifiedIdentifier,
		domain: record.domain,
		title: record.title,
		alias: record.alias,
		restricted: record.restricted,
		visible: record.visible,
		capabilities: pick(record.capabilityIds, related.capabilities, true).map(({ identifier, title }) => ({
			identifier,
			title,
		})),
		documentTypes: pick(record.documentTypeIds, related.documentTypes, seesHidden).map(documentTypeSummary),
		dependencies: pick(record.dependencyIds, related.processes, seesHidden).map(processSummary),
		requiredICDs: [...record.requiredICDs],
	};
}

/** `linked`: the processes whose `documentTypeIds` hold this document type. */
export function documentTypeAnswer(
	record: DocumentTypeRecord,
	linked: ProcessRecord[],
	seesHidden: boolean,
): DocumentType {
	return {
		identifier: record.identifier,
		qualifiedIdentifier: record.qualifiedIdentifier,
		title: record.title,
		visible: record.visible,
		processes: linked.filter((process) => seesHidden || process.visible).map(processSummary),
	};
}

/** The identifiers a set of processes refers to, each once, for one getMany per collection. */
export function referencedBy(records: ProcessRecord[]): {
	capabilities: string[];
	documentTypes: string[];
	processes: string[];
} {
	const unique = (lists: string[][]) => [...new Set(lists.flat())];
	return {
		capabilities: unique(records.map((record) => record.capabilityIds)),
		documentTypes: unique(records.map((record) => record.documentTypeIds)),
		processes: unique(records.map((record) => record.dependencyIds)),
	};
}

/** Catalog records as the change feed carries them (src/platform/audit.ts FeedChange): related records as references. */
export function catalogReference(resource: "process" | "documentType" | "capability", record: StoredDoc): unknown {
	const refs = (identifiers: string[]) => identifiers.map((identifier) => ({ identifier }));
	if (resource === "capability") {
		const { identifier, title } = record as CapabilityRecord;
		return { identifier, title };
	}
	if (resource === "documentType") {
		const { identifier, qualifiedIdentifier, title, visible } = record as DocumentTypeRecord;
		return { identifier, ...(qualifiedIdentifier == null ? {} : { qualifiedIdentifier }), title, visible };
	}
	const process = record as ProcessRecord;
	return {
		identifier: process.identifier,
		...(process.qualifiedIdentifier == null ? {} : { qualifiedIdentifier: process.qualifiedIdentifier }),
		domain: process.domain,
		title: process.title,
		alias: process.alias,
		restricted: process.restricted,
		visible: process.visible,
		capabilities: refs(process.capabilityIds),
		documentTypes: refs(process.documentTypeIds),
		dependencies: refs(process.dependencyIds),
		requiredICDs: [...process.requiredICDs],
	};
}
