/**
 * Catalog request bodies as they arrive after validation by PROCESS_FORM and
 * DOCUMENT_TYPE_FORM (src/contract/schemas.ts), and their translation into stored records.
 * Optional fields may arrive as null; both absent and null mean "not sent".
 */
import type { Reference } from "../../src/contract/model";
import type { DocumentTypeForm, ProcessForm } from "../../src/contract/schemas";
import type { DocumentTypeRecord, ProcessRecord } from "./models";

/** Reference identifiers in request order (lower-cased, as stored); positions matter for error fields. */
export function referenceIds(references: Reference[] | null | undefined): string[] {
	return (references ?? []).map((reference) => reference.identifier.toLowerCase());
}

export const distinct = (values: string[]): string[] => [...new Set(values)];

/** An empty string is no identifier: it would otherwise collide with every other empty one. */
function text(value: string | null | undefined): string | undefined {
	return value === null || value === undefined || value === "" ? undefined : value;
}

/** A PUT replaces the whole record: lists not sent become empty, flags take their defaults. */
export function processRecord(identifier: string, form: ProcessForm): ProcessRecord {
	return {
		identifier,
		qualifiedIdentifier: text(form.qualifiedIdentifier),
		domain: form.domain,
		title: text(form.title),
		alias: text(form.alias),
		restricted: form.restricted ?? false,
		visible: form.visible ?? true,
		capabilityIds: distinct(referenceIds(form.capabilities)),
		documentTypeIds: distinct(referenceIds(form.documentTypes)),
		dependencyIds: distinct(referenceIds(form.dependencies)),
		requiredICDs: distinct(form.requiredICDs ?? []),
	};
}

export function documentTypeRecord(identifier: string, form: DocumentTypeForm): DocumentTypeRecord {
	return {
		identifier,
		qualifiedIdentifier: text(form.qualifiedIdentifier),
		title: form.title,
		visible: form.visible ?? true,
	};
}
