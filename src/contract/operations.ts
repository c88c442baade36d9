/**
 * The operations table: the single source of truth for every operation of the contract
 * (spec "Endpoint table" and "Versioning"). The gateway builds its routes, content
 * negotiation (406/415), 405 answers and role checks from it, and the OpenAPI document
 * is generated from it. Adding an operation is one row here and one action in a service.
 */
import type { Role } from "./model";
import type { SortableNames } from "./paging";
import { MAX_CATALOG_QUERY_LENGTH } from "./search";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** How a path parameter is checked before the action is called (decisions §5). */
export type PathParamKind =
	/** A UUID; anything else is 400. */
	| "uuid"
	/** `<scheme>::<icd>:<organizationIdentifier>`; anything else is 400. */
	| "qualifiedIdentifier"
	/** An SMP identifier `scheme::value` (decisions §13), passed under its own name; the action answers 404 for anything it does not publish. */
	| "smpIdentifier"
	/** An account's username (USERNAME_PATTERN), passed as `username`; anything else is 400. */
	| "username";

const ALL_AUTHENTICATED: Role[] = ["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", "ADMIN", "NETWORK_AUTHORITY"];
const PUBLIC_READ: Role[] = [...ALL_AUTHENTICATED, "ANONYMOUS"];
const CATALOG_WRITE: Role[] = ["ADMIN", "NETWORK_AUTHORITY"];
const PARTICIPANT_READ: Role[] = ["SERVICE_PROVIDER", "ADMIN", "NETWORK_AUTHORITY"];
const OPERATORS: Role[] = ["ADMIN", "NETWORK_AUTHORITY"];

export const SORTABLE = {
	accessPoints: { title: "title" },
	documentTypes: {
		title: "title",
		qualifiedIdentifier: "qualifiedIdentifier",
		"qualifiedIdentifier.value": "qualifiedIdentifier",
	},
	processes: {
		title: "title",
		domain: "domain",
		qualifiedIdentifier: "qualifiedIdentifier",
		"qualifiedIdentifier.value": "qualifiedIdentifier",
	},
	events: { at: "at", operation: "operation" },
	transfers: { createdDate: "createdAt", expiresDate: "expiresAt", state: "state" },
	processReplacements: { startedDate: "startedDate", state: "state" },
	accounts: { username: "username", role: "role" },
	serviceProviders: { title: "title" },
	processReplacementResults: {
		outcome: "outcome",
		"participant.qualifiedIdentifier": "participant.qualifiedIdentifier",
	},
	participants: {
		name: "name",
		icd: "icd",
		organizationIdentifier: "organizationIdentifier",
		qualifiedIdentifier: "qualifiedIdentifier",
		"qualifiedIdentifier.value": "qualifiedIdentifier",
		registrationDate: "registrationDate",
		lastModificationDate: "lastModificationDate",
	},
} satisfies Record<string, SortableNames>;

export interface Operation {
	/** Stable id, also the OpenAPI operationId. */
	id: string;
	summary: string;
	tag: string;
	method: HttpMethod;
	/** Path under /rest/api (under the server's root when `root`), `:name` for parameters (services/api/routes.ts). */
	path: string;
	/** Served at the root of the port rather than under /rest/api: the SMP lookups (decisions §13). */
	root?: true;
	/** Accepted media types; the first is the one answered with. */
	mediaTypes: string[];
	/**
	 * When several operations share method and path, the one chosen by a missing or
	 * generic Accept (decisions §2: the paged form).
	 */
	isDefault?: boolean;
	/** Participant paths share a shape: which form of the value selects this row (spec rule 2). */
	pathForm?: "qualifiedIdentifier" | "uuid";
	pathParams: Record<string, PathParamKind>;
	roles: Role[];
	/** Moleculer action that does the work. */
	action: string;
	/** 202: accepted work that goes on after the answer (a job); like a 201 it answers `Location`, the job's path. */
	status: 200 | 201 | 202 | 204;
	/** Requests with a body: the validated object's name in `errors[].objectName`. */
	body?: { objectName: string };
	/** Paged finds: the sortable names (page, size, sort are parsed by the gateway). */
	sortable?: SortableNames;
	/** Extra query parameters the operation reads, passed to the action as given (an integer checked and converted). */
	queryParams?: Record<string, { type: "string" | "boolean" | "integer"; description: string }>;
	/** Request headers passed to the action as parameters: header name → parameter. */
	headerParams?: Record<string, { param: string; description: string }>;
	/** A single record's answer: the gateway sends its `ETag` and answers 304 to a matching `If-None-Match` (src/contract/entity-tags.ts). */
	entityTag?: true;
	/** A change of one record: `If-Match` reaches the action as `ifMatch`, which answers 412 when the record changed since. */
	ifMatch?: true;
	/** An add: an `Idempotency-Key` header makes a retry replay the first answer (services/api/idempotency.ts). */
	idempotent?: true;
	/** Lookup nodes answer it too (decisions §12): a process with SERVICES=lookup serves exactly these. */
	lookupNode?: true;
	/** Response body shape, for the OpenAPI document. */
	response?: {
		schema: string;
		array?: boolean;
		paged?: boolean;
		ndjson?: boolean;
		eventStream?: boolean;
		/** The action answers XML text, written as it is (`schema` names the root element). */
		xml?: boolean;
	};
	/** Not in the contract: an extension of this registry (documented in docs/decisions.md). */
	extension?: boolean;
	/** Refusals beyond the ones every operation of its kind may answer (OpenAPI responses), e.g. 409 of a state change without a body. */
	refusals?: number[];
}

/** The operation's path from the port's root, `:name` for parameters: under /rest/api unless `root`. */
export function fullPathOf(operation: Pick<Operation, "path" | "root">): string {
	return operation.root ? operation.path : `${API_BASE}${operation.path}`;
}

/** Does the answer carry `Location`, the path of the record it created (201) or of the job it accepted (202)? */
export function answersLocation(operation: Pick<Operation, "status">): boolean {
	return operation.status === 201 || operation.status === 202;
}

const mediaType = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;

const participantQuery = {
	query: {
		type: "string",
		description:
			"Organization number (or icd:number), or name words separated by + or spaces; each must start a word of the name",
	},
	processes: { type: "boolean", description: "When true, each participant includes its processes" },
	modifiedSince: {
		type: "string",
		description:
			"Only participants changed at or after this date or date-time (ISO 8601, UTC): the registry's extension",
	},
} as const;

/** The registry's extension (docs/decisions.md "Catalog search"), read like the participants' `query`. */
const catalogQuery = {
	query: {
		type: "string",
		description:
			"The registry's extension: a value equal to a record's qualifiedIdentifier (case-insensitively) matches that record; otherwise title words separated by + or spaces, " +
			`each of which must start a word of the title, case-insensitively. Data, never a pattern; at most ${MAX_CATALOG_QUERY_LENGTH} characters. Anonymous callers still see only visible records`,
	},
} as const;

const changesQuery = {
	after: {
		type: "string",
		description:
			"The cursor of the last change already seen (from `cursor` of the previous page or an event's id); absent: from the first change",
	},
	limit: { type: "integer", description: "At most this many changes (1 to 1000, default 100)" },
} as const;

// One operation in three or four lines reads as a table; Prettier would give every field a line.
// prettier-ignore
export const OPERATIONS: Operation[] = [
	// Access points (read only in the contract)
	{
		id: "findAccessPoints", summary: "Find access points (paged)", tag: "Access points",
		method: "GET", path: "/accessPoints", mediaTypes: [mediaType("accesspoints", "find")], pathParams: {},
		roles: ALL_AUTHENTICATED, action: "accessPoints.find", status: 200, sortable: SORTABLE.accessPoints,
		response: { schema: "AccessPoint", paged: true },
	},
	{
		id: "getAccessPoint", summary: "Get access point", tag: "Access points",
		method: "GET", path: "/accessPoints/:accessPoint", mediaTypes: [mediaType("accesspoints", "get")], pathParams: { accessPoint: "uuid" },
		roles: ALL_AUTHENTICATED, action: "accessPoints.get", status: 200, entityTag: true, response: { schema: "AccessPoint" },
	},
	// SMP publishing data (docs/decisions.md "SMP publishing data"): the provider keeps its access points' endpoints
	{
		id: "setAccessPointEndpoints", summary: "Replace an access point's endpoints (its provider, or ADMIN)", tag: "Access points", extension: true,
		method: "PUT", path: "/accessPoints/:accessPoint/endpoints", mediaTypes: [mediaType("accesspoints", "endpoints")], pathParams: { accessPoint: "uuid" },
		roles: ["ACCESS_POINT_PROVIDER", "ADMIN"], action: "accessPoints.setEndpoints", status: 200, body: { objectName: "accessPointEndpointsFormDTO" },
		entityTag: true, response: { schema: "AccessPoint" },
	},
	// Document types
	{
		id: "findDocumentTypes", summary: "Find document types (paged)", tag: "Document types",
		method: "GET", path: "/document-types", mediaTypes: [mediaType("document-types", "find")], pathParams: {},
		roles: PUBLIC_READ, action: "catalog.findDocumentTypes", status: 200, sortable: SORTABLE.documentTypes, queryParams: catalogQuery,
		response: { schema: "DocumentType", paged: true },
	},
	{
		id: "getDocumentType", summary: "Get document type", tag: "Document types",
		method: "GET", path: "/document-types/:identifier", mediaTypes: [mediaType("document-types", "get")], pathParams: { identifier: "uuid" },
		roles: PUBLIC_READ, action: "catalog.getDocumentType", status: 200, entityTag: true, response: { schema: "DocumentType" },
	},
	{
		id: "addDocumentType", summary: "Add document type", tag: "Document types",
		method: "POST", path: "/document-types", mediaTypes: [mediaType("document-types", "add")], pathParams: {},
		roles: CATALOG_WRITE, action: "catalog.addDocumentType", status: 201, body: { objectName: "documentTypeFormDTO" }, idempotent: true,
		response: { schema: "DocumentType" },
	},
	{
		id: "updateDocumentType", summary: "Update document type", tag: "Document types",
		method: "PUT", path: "/document-types/:identifier", mediaTypes: [mediaType("document-types", "update")], pathParams: { identifier: "uuid" },
		roles: CATALOG_WRITE, action: "catalog.updateDocumentType", status: 200, body: { objectName: "documentTypeFormDTO" }, entityTag: true, ifMatch: true,
		response: { schema: "DocumentType" },
	},
	{
		id: "deleteDocumentType", summary: "Delete document type", tag: "Document types",
		method: "DELETE", path: "/document-types/:identifier", mediaTypes: [mediaType("document-types", "delete")], pathParams: { identifier: "uuid" },
		roles: CATALOG_WRITE, action: "catalog.deleteDocumentType", status: 204, ifMatch: true,
	},
	// Organizations
	{
		id: "findOrganizationProcesses", summary: "Find organization processes", tag: "Organizations",
		method: "GET", path: "/organizations/:qualifiedIdentifier/processes",
		mediaTypes: [mediaType("organizations", "processes"), mediaType("organization", "processes")],
		pathParams: { qualifiedIdentifier: "qualifiedIdentifier" },
		roles: PUBLIC_READ, action: "lookup.organizationProcesses", status: 200, lookupNode: true, response: { schema: "Process", array: true },
	},
	// The network (decisions §14): what the SML and the Peppol Directory know of an organization
	{
		id: "getNetworkState", summary: "What the network knows of an organization: its SML and Directory state and DNS names", tag: "Network", extension: true,
		method: "GET", path: "/network/:qualifiedIdentifier", mediaTypes: [mediaType("network", "get")],
		pathParams: { qualifiedIdentifier: "qualifiedIdentifier" },
		roles: PARTICIPANT_READ, action: "network.organizationState", status: 200, response: { schema: "NetworkState" },
	},
	// Participants
	{
		id: "streamParticipants", summary: "Find participants, array form", tag: "Participants",
		method: "GET", path: "/participants", mediaTypes: [mediaType("participants", "stream")], pathParams: {},
		roles: PARTICIPANT_READ, action: "participants.stream", status: 200, queryParams: participantQuery,
		response: { schema: "Participant", array: true },
	},
	{
		id: "findParticipants", summary: "Find participants, paged form", tag: "Participants",
		method: "GET", path: "/participants", mediaTypes: [mediaType("participants", "find")], pathParams: {}, isDefault: true,
		roles: PARTICIPANT_READ, action: "participants.find", status: 200, sortable: SORTABLE.participants, queryParams: participantQuery,
		response: { schema: "Participant", paged: true },
	},
	{
		id: "getParticipantByQualifiedIdentifier", summary: "Get participant by qualified identifier", tag: "Participants",
		method: "GET", path: "/participants/:participant", mediaTypes: [mediaType("participants", "get")], pathForm: "qualifiedIdentifier",
		pathParams: { participant: "qualifiedIdentifier" },
		roles: ["SERVICE_PROVIDER"], action: "participants.get", status: 200, entityTag: true,
		response: { schema: "Participant" },
	},
	{
		id: "getParticipant", summary: "Get participant by UUID", tag: "Participants",
		method: "GET", path: "/participants/:participant", mediaTypes: [mediaType("participants", "get")], pathForm: "uuid",
		pathParams: { participant: "uuid" },
		roles: PARTICIPANT_READ, action: "participants.get", status: 200, entityTag: true, response: { schema: "Participant" },
	},
	{
		id: "addParticipant", summary: "Add participant", tag: "Participants",
		method: "POST", path: "/participants", mediaTypes: [mediaType("participants", "add")], pathParams: {},
		roles: ["SERVICE_PROVIDER"], action: "participants.add", status: 201, body: { objectName: "addParticipantFormDTO" }, idempotent: true,
		response: { schema: "Participant" },
	},
	{
		id: "updateParticipant", summary: "Update participant", tag: "Participants",
		method: "PUT", path: "/participants/:participant", mediaTypes: [mediaType("participants", "update")], pathForm: "qualifiedIdentifier",
		pathParams: { participant: "qualifiedIdentifier" },
		roles: ["SERVICE_PROVIDER"], action: "participants.update", status: 200, body: { objectName: "updateParticipantFormDTO" }, entityTag: true, ifMatch: true,
		response: { schema: "Participant" },
	},
	{
		id: "deleteParticipantByQualifiedIdentifier", summary: "Delete participant", tag: "Participants",
		method: "DELETE", path: "/participants/:participant", mediaTypes: [mediaType("participants", "delete")], pathForm: "qualifiedIdentifier",
		pathParams: { participant: "qualifiedIdentifier" },
		roles: ["SERVICE_PROVIDER"], action: "participants.delete", status: 204, ifMatch: true,
	},
	{
		id: "deleteParticipant", summary: "Delete participant by UUID", tag: "Participants",
		method: "DELETE", path: "/participants/:participant", mediaTypes: [mediaType("participants", "delete")], pathForm: "uuid",
		pathParams: { participant: "uuid" },
		roles: ["SERVICE_PROVIDER", "ADMIN"], action: "participants.delete", status: 204, ifMatch: true,
	},
	{
		id: "getParticipantProcessesByQualifiedIdentifier", summary: "Get participant processes", tag: "Participants",
		method: "GET", path: "/participants/:participant/processes", mediaTypes: [mediaType("participants", "processes")],
		pathForm: "qualifiedIdentifier", pathParams: { participant: "qualifiedIdentifier" },
		roles: ["SERVICE_PROVIDER"], action: "participants.processes", status: 200, response: { schema: "Process", array: true },
	},
	{
		id: "getParticipantProcesses", summary: "Get participant processes by UUID", tag: "Participants",
		method: "GET", path: "/participants/:participant/processes", mediaTypes: [mediaType("participants", "processes")],
		pathForm: "uuid", pathParams: { participant: "uuid" },
		roles: PARTICIPANT_READ, action: "participants.processes", status: 200, response: { schema: "Process", array: true },
	},
	{
		id: "transferParticipant", summary: "Transfer participant", tag: "Participants",
		method: "PUT", path: "/participants/:participant/transfer/:serviceProviderIdentifier",
		mediaTypes: [mediaType("participants", "transfer")], pathForm: "qualifiedIdentifier",
		pathParams: { participant: "qualifiedIdentifier", serviceProviderIdentifier: "uuid" },
		roles: ["SERVICE_PROVIDER"], action: "participants.transfer", status: 200, ifMatch: true,
	},
	// Processes
	{
		id: "streamProcesses", summary: "Find processes, array form", tag: "Processes",
		method: "GET", path: "/processes", mediaTypes: [mediaType("processes", "stream")], pathParams: {},
		roles: PUBLIC_READ, action: "catalog.streamProcesses", status: 200, queryParams: catalogQuery, response: { schema: "Process", array: true },
	},
	{
		id: "findProcesses", summary: "Find processes, paged form", tag: "Processes",
		method: "GET", path: "/processes", mediaTypes: [mediaType("processes", "find")], pathParams: {}, isDefault: true,
		roles: PUBLIC_READ, action: "catalog.findProcesses", status: 200, sortable: SORTABLE.processes, queryParams: catalogQuery,
		response: { schema: "Process", paged: true },
	},
	{
		id: "getProcess", summary: "Get process", tag: "Processes",
		method: "GET", path: "/processes/:identifier", mediaTypes: [mediaType("processes", "get")], pathParams: { identifier: "uuid" },
		roles: PUBLIC_READ, action: "catalog.getProcess", status: 200, entityTag: true, response: { schema: "Process" },
	},
	{
		id: "addProcess", summary: "Add process", tag: "Processes",
		method: "POST", path: "/processes", mediaTypes: [mediaType("processes", "add")], pathParams: {},
		roles: CATALOG_WRITE, action: "catalog.addProcess", status: 201, body: { objectName: "processFormDTO" }, idempotent: true,
		response: { schema: "Process" },
	},
	{
		id: "updateProcess", summary: "Update process", tag: "Processes",
		method: "PUT", path: "/processes/:identifier", mediaTypes: [mediaType("processes", "update")], pathParams: { identifier: "uuid" },
		roles: CATALOG_WRITE, action: "catalog.updateProcess", status: 200, body: { objectName: "processFormDTO" }, entityTag: true, ifMatch: true,
		response: { schema: "Process" },
	},
	{
		id: "deleteProcess", summary: "Delete process", tag: "Processes",
		method: "DELETE", path: "/processes/:identifier", mediaTypes: [mediaType("processes", "delete")], pathParams: { identifier: "uuid" },
		roles: CATALOG_WRITE, action: "catalog.deleteProcess", status: 204, ifMatch: true,
	},
	// Extensions beyond the contract (issues 8 and 9)
	{
		id: "findEvents", summary: "Find audit events (paged)", tag: "Audit", extension: true,
		method: "GET", path: "/events", mediaTypes: [mediaType("events", "find")], pathParams: {},
		roles: PARTICIPANT_READ, action: "audit.find", status: 200, sortable: SORTABLE.events,
		queryParams: {
			participant: { type: "string", description: "Only events of this participant (qualified identifier or UUID)" },
			operation: { type: "string", description: "Only events of this operation id (e.g. addParticipant)" },
			from: { type: "string", description: "Only events at or after this date or date-time (ISO 8601, UTC)" },
			to: { type: "string", description: "Only events at or before this date or date-time (ISO 8601, UTC)" },
		},
		response: { schema: "AuditEvent", paged: true },
	},
	{
		id: "exportParticipants", summary: "Export every participant as NDJSON (streamed)", tag: "Exports", extension: true,
		method: "GET", path: "/exports/participants", mediaTypes: ["application/x-ndjson"], pathParams: {},
		roles: ["ADMIN"], action: "participants.export", status: 200,
		response: { schema: "ExportedParticipant", ndjson: true },
	},
	{
		id: "findChanges", summary: "Changes after a cursor (the change feed)", tag: "Changes", extension: true,
		method: "GET", path: "/changes", mediaTypes: [mediaType("changes", "find")], pathParams: {}, isDefault: true,
		roles: PARTICIPANT_READ, action: "audit.changes", status: 200, queryParams: changesQuery,
		response: { schema: "ChangePage" },
	},
	{
		id: "followChanges", summary: "Changes after a cursor, then as they happen (Server-Sent Events)", tag: "Changes", extension: true,
		method: "GET", path: "/changes", mediaTypes: ["text/event-stream"], pathParams: {},
		roles: PARTICIPANT_READ, action: "api.followChanges", status: 200, queryParams: { after: changesQuery.after },
		headerParams: { "Last-Event-ID": { param: "lastEventId", description: "The id of the last event received (a reconnecting EventSource sends it); wins over `after`" } },
		response: { schema: "Change", eventStream: true },
	},
	// Consented transfers (docs/decisions.md "Transfers")
	{
		id: "startTransfer", summary: "Start a transfer of a participant to another provider (answers the key, once)", tag: "Transfers", extension: true,
		method: "POST", path: "/transfers", mediaTypes: [mediaType("transfers", "start")], pathParams: {},
		roles: ["SERVICE_PROVIDER"], action: "participants.startTransfer", status: 201, body: { objectName: "startTransferFormDTO" },
		response: { schema: "Transfer" },
	},
	{
		id: "findTransfers", summary: "Find transfers (paged)", tag: "Transfers", extension: true,
		method: "GET", path: "/transfers", mediaTypes: [mediaType("transfers", "find")], pathParams: {},
		roles: PARTICIPANT_READ, action: "participants.findTransfers", status: 200, sortable: SORTABLE.transfers,
		queryParams: { state: { type: "string", description: "Only transfers in this state: PENDING, COMPLETED, CANCELLED or EXPIRED" } },
		response: { schema: "Transfer", paged: true },
	},
	{
		id: "getTransfer", summary: "Get transfer", tag: "Transfers", extension: true,
		method: "GET", path: "/transfers/:identifier", mediaTypes: [mediaType("transfers", "get")], pathParams: { identifier: "uuid" },
		roles: PARTICIPANT_READ, action: "participants.getTransfer", status: 200, entityTag: true, response: { schema: "Transfer" },
	},
	{
		id: "completeTransfer", summary: "Complete a transfer with its key (the receiving provider)", tag: "Transfers", extension: true,
		method: "POST", path: "/transfers/:identifier/complete", mediaTypes: [mediaType("transfers", "complete")], pathParams: { identifier: "uuid" },
		roles: ["SERVICE_PROVIDER"], action: "participants.completeTransfer", status: 200, body: { objectName: "completeTransferFormDTO" },
		refusals: [403, 409], response: { schema: "Transfer" },
	},
	{
		id: "cancelTransfer", summary: "Cancel a transfer (the sending provider)", tag: "Transfers", extension: true,
		method: "POST", path: "/transfers/:identifier/cancel", mediaTypes: [mediaType("transfers", "cancel")], pathParams: { identifier: "uuid" },
		roles: ["SERVICE_PROVIDER"], action: "participants.cancelTransfer", status: 200, refusals: [403, 409], response: { schema: "Transfer" },
	},
	// Bulk jobs (docs/decisions.md "Bulk jobs")
	{
		id: "startProcessReplacement", summary: "Start replacing a process with another for every participant holding it", tag: "Jobs", extension: true,
		method: "POST", path: "/jobs/process-replacements", mediaTypes: [mediaType("jobs.process-replacements", "start")], pathParams: {},
		roles: OPERATORS, action: "participants.startProcessReplacement", status: 202, body: { objectName: "processReplacementFormDTO" },
		response: { schema: "ProcessReplacementJob" },
	},
	{
		id: "findProcessReplacements", summary: "Find process replacement jobs (paged, newest first)", tag: "Jobs", extension: true,
		method: "GET", path: "/jobs/process-replacements", mediaTypes: [mediaType("jobs.process-replacements", "find")], pathParams: {},
		roles: OPERATORS, action: "participants.findProcessReplacements", status: 200, sortable: SORTABLE.processReplacements,
		response: { schema: "ProcessReplacementJob", paged: true },
	},
	{
		id: "getProcessReplacement", summary: "Get process replacement job", tag: "Jobs", extension: true,
		method: "GET", path: "/jobs/process-replacements/:identifier", mediaTypes: [mediaType("jobs.process-replacements", "get")], pathParams: { identifier: "uuid" },
		roles: OPERATORS, action: "participants.getProcessReplacement", status: 200, entityTag: true, response: { schema: "ProcessReplacementJob" },
	},
	{
		id: "findProcessReplacementResults", summary: "Find the results of a process replacement job (paged)", tag: "Jobs", extension: true,
		method: "GET", path: "/jobs/process-replacements/:identifier/results", mediaTypes: [mediaType("jobs.process-replacements", "results")],
		pathParams: { identifier: "uuid" },
		roles: OPERATORS, action: "participants.findProcessReplacementResults", status: 200, sortable: SORTABLE.processReplacementResults,
		queryParams: { outcome: { type: "string", description: "Only results with this outcome: REPLACED, WOULD_REPLACE, REFUSED or UNCHANGED" } },
		response: { schema: "ProcessReplacementResult", paged: true },
	},
	// Accounts and service providers (docs/decisions.md "Accounts over HTTP"): the caller's own account, and the operator CLI's account commands for ADMIN
	{
		id: "getOwnAccount", summary: "The caller's own account (role and provider)", tag: "Accounts", extension: true,
		method: "GET", path: "/account", mediaTypes: [mediaType("account", "get")], pathParams: {},
		roles: ALL_AUTHENTICATED, action: "accounts.getOwnAccount", status: 200, response: { schema: "Account" },
	},
	{
		id: "findAccounts", summary: "Find accounts (paged)", tag: "Accounts", extension: true,
		method: "GET", path: "/accounts", mediaTypes: [mediaType("accounts", "find")], pathParams: {},
		roles: ["ADMIN"], action: "accounts.findAccounts", status: 200, sortable: SORTABLE.accounts,
		queryParams: { role: { type: "string", description: "Only accounts with this role" } },
		response: { schema: "Account", paged: true },
	},
	{
		id: "getAccount", summary: "Get account", tag: "Accounts", extension: true,
		method: "GET", path: "/accounts/:identifier", mediaTypes: [mediaType("accounts", "get")], pathParams: { identifier: "uuid" },
		roles: ["ADMIN"], action: "accounts.getAccount", status: 200, entityTag: true, response: { schema: "Account" },
	},
	{
		id: "addAccount", summary: "Add account", tag: "Accounts", extension: true,
		method: "POST", path: "/accounts", mediaTypes: [mediaType("accounts", "add")], pathParams: {},
		roles: ["ADMIN"], action: "accounts.addAccount", status: 201, body: { objectName: "accountFormDTO" }, refusals: [409],
		response: { schema: "Account" },
	},
	{
		id: "disableAccount", summary: "Disable account (its credentials stop working at once)", tag: "Accounts", extension: true,
		method: "POST", path: "/accounts/:identifier/disable", mediaTypes: [mediaType("accounts", "disable")], pathParams: { identifier: "uuid" },
		roles: ["ADMIN"], action: "accounts.disableAccount", status: 200, response: { schema: "Account" },
	},
	{
		id: "resetPassword", summary: "Set a new password for an account", tag: "Accounts", extension: true,
		method: "PUT", path: "/accounts/:identifier/password", mediaTypes: [mediaType("accounts", "password")], pathParams: { identifier: "uuid" },
		roles: ["ADMIN"], action: "accounts.resetPassword", status: 200, body: { objectName: "passwordFormDTO" }, response: { schema: "Account" },
	},
	{
		id: "setOAuthClient", summary: "Set or clear the OAuth client that acts as an account (decisions §15)", tag: "Accounts", extension: true,
		method: "PUT", path: "/accounts/:username/oauth-client", mediaTypes: [mediaType("accounts", "oauth-client")], pathParams: { username: "username" },
		roles: ["ADMIN"], action: "accounts.setOAuthClient", status: 200, body: { objectName: "oauthClientFormDTO" }, response: { schema: "Account" },
	},
	{
		id: "findServiceProviders", summary: "Find service providers (paged)", tag: "Accounts", extension: true,
		method: "GET", path: "/service-providers", mediaTypes: [mediaType("service-providers", "find")], pathParams: {},
		roles: ["ADMIN"], action: "accounts.findServiceProviders", status: 200, sortable: SORTABLE.serviceProviders,
		response: { schema: "ServiceProvider", paged: true },
	},
	{
		id: "getServiceProvider", summary: "Get service provider", tag: "Accounts", extension: true,
		method: "GET", path: "/service-providers/:identifier", mediaTypes: [mediaType("service-providers", "get")], pathParams: { identifier: "uuid" },
		roles: ["ADMIN"], action: "accounts.getServiceProviderRecord", status: 200, entityTag: true, response: { schema: "ServiceProvider" },
	},
	{
		id: "addServiceProvider", summary: "Add service provider", tag: "Accounts", extension: true,
		method: "POST", path: "/service-providers", mediaTypes: [mediaType("service-providers", "add")], pathParams: {},
		roles: ["ADMIN"], action: "accounts.addServiceProvider", status: 201, body: { objectName: "serviceProviderFormDTO" }, refusals: [409],
		response: { schema: "ServiceProvider" },
	},
	{
		id: "setServiceProviderAccessPoints", summary: "Replace the access points a service provider's participants receive through", tag: "Accounts", extension: true,
		method: "PUT", path: "/service-providers/:identifier/access-points", mediaTypes: [mediaType("service-providers", "access-points")], pathParams: { identifier: "uuid" },
		roles: ["ADMIN"], action: "accounts.setServiceProviderAccessPoints", status: 200, body: { objectName: "serviceProviderAccessPointsFormDTO" },
		entityTag: true, response: { schema: "ServiceProvider" },
	},	// SMP lookups (decisions §13, docs/smp.md): at the root of the gateway's and every lookup node's port
	...smpLookups("peppol", "", "Peppol SMP 1.x", "SignedServiceMetadata"),
	...smpLookups("bdxr", "/bdxr-smp-2", "OASIS SMP 2.0", "ServiceMetadata"),
	// The Peppol Directory fetches it where the SMP lookups are (decisions §14, docs/smp.md).
	{
		id: "businessCard", summary: "Peppol Directory business card: the organization's participants (BusinessCard V3)", tag: "SMP", extension: true,
		method: "GET", path: "/businesscard/:participant", root: true, lookupNode: true, mediaTypes: ["text/xml", "application/xml"],
		pathParams: { participant: "smpIdentifier" }, roles: PUBLIC_READ, action: "lookup.businessCard", status: 200,
		entityTag: true, response: { schema: "BusinessCard", xml: true },
	},
];

/** The two lookups of one SMP interface: the service group and a document type's signed service metadata. */
function smpLookups(format: "peppol" | "bdxr", prefix: string, name: string, metadataRoot: string): Operation[] {
	const common: Pick<
		Operation,
		"tag" | "extension" | "root" | "lookupNode" | "method" | "mediaTypes" | "roles" | "status" | "entityTag"
	> = {
		tag: "SMP",
		extension: true,
		root: true,
		lookupNode: true,
		method: "GET",
		mediaTypes: ["text/xml", "application/xml"],
		roles: PUBLIC_READ,
		status: 200,
		entityTag: true,
	};
	return [
		{
			...common,
			id: `${format}ServiceGroup`,
			summary: `${name} service group: the document types a participant receives`,
			path: `${prefix}/:participant`,
			pathParams: { participant: "smpIdentifier" },
			action: `lookup.${format}ServiceGroup`,
			headerParams: { Host: { param: "host", description: "The links' host when SMP_PUBLIC_URL is not set" } },
			response: { schema: "ServiceGroup", xml: true },
		},
		{
			...common,
			id: `${format}ServiceMetadata`,
			summary: `${name} signed service metadata: a document type's processes and endpoints`,
			path: `${prefix}/:participant/services/:documentType`,
			pathParams: { participant: "smpIdentifier", documentType: "smpIdentifier" },
			action: `lookup.${format}ServiceMetadata`,
			response: { schema: metadataRoot, xml: true },
		},
	];
}

/** The 25 operations of the contract (without this registry's extensions). */
export const CONTRACT_OPERATIONS = OPERATIONS.filter((operation) => !operation.extension);

export const API_BASE = "/rest/api";
