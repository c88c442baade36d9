/**
 * The catalog's collections (docs/internals.md "Storage"). The relation between processes
 * and document types is stored once, on the process (`documentTypeIds`): linking from a
 * document type rewrites the processes concerned, so both sides always agree
 * (decisions §6 "one relation").
 */
import { AUDIT_OUTBOX_MODEL } from "../../src/platform/audit";
import { BOOTSTRAP_MODEL } from "./bootstrap";
import type { ModelSpec, StoredDoc } from "../../src/store/types";

export interface ProcessRecord extends StoredDoc {
	qualifiedIdentifier?: string;
	domain: string;
	title?: string;
	alias?: string;
	restricted: boolean;
	visible: boolean;
	/** In the order the client gave them; answers keep that order. */
	capabilityIds: string[];
	documentTypeIds: string[];
	dependencyIds: string[];
	requiredICDs: string[];
}

export interface DocumentTypeRecord extends StoredDoc {
	qualifiedIdentifier?: string;
	title: string;
	visible: boolean;
}

export interface CapabilityRecord extends StoredDoc {
	title: string;
}

/** Unique index names: a DuplicateKey on one of these is a 409 for that resource. */
export const QUALIFIED_IDENTIFIER_INDEX = "qualifiedIdentifier";

export const PROCESS_MODEL: ModelSpec = {
	collection: "processes",
	fields: {
		// Case-insensitive: `cenbii-procid-ubl::X` and `CENBII-PROCID-UBL::x` name the same process.
		qualifiedIdentifier: { kind: "string", caseInsensitive: true },
		domain: { kind: "string", caseInsensitive: true },
		title: { kind: "string", caseInsensitive: true },
		visible: { kind: "boolean" },
		restricted: { kind: "boolean" },
		capabilityIds: { kind: "stringArray" },
		documentTypeIds: { kind: "stringArray" },
		dependencyIds: { kind: "stringArray" },
	},
	indexes: [
		// Records without a qualified identifier do not collide (absent values are not indexed as equal).
		{ name: QUALIFIED_IDENTIFIER_INDEX, fields: ["qualifiedIdentifier"], unique: true },
		{ name: "title", fields: ["title"] },
		{ name: "domain", fields: ["domain"] },
	],
	// The catalog `query` searches title words (docs/decisions.md "Catalog search").
	textField: "title",
};

export const DOCUMENT_TYPE_MODEL: ModelSpec = {
	collection: "documentTypes",
	fields: {
		qualifiedIdentifier: { kind: "string", caseInsensitive: true },
		title: { kind: "string", caseInsensitive: true },
		visible: { kind: "boolean" },
	},
	indexes: [
		{ name: QUALIFIED_IDENTIFIER_INDEX, fields: ["qualifiedIdentifier"], unique: true },
		{ name: "title", fields: ["title"] },
	],
	textField: "title",
};

export const CAPABILITY_MODEL: ModelSpec = {
	collection: "capabilities",
	fields: { title: { kind: "string", caseInsensitive: true } },
	indexes: [],
};

export const CATALOG_MODELS = {
	processes: PROCESS_MODEL,
	documentTypes: DOCUMENT_TYPE_MODEL,
	capabilities: CAPABILITY_MODEL,
	auditOutbox: AUDIT_OUTBOX_MODEL,
	bootstrap: BOOTSTRAP_MODEL,
};
