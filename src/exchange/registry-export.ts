/**
 * The registry's NDJSON export format (operator CLI `registry export` / `registry import`,
 * docs/operations.md "Operator CLI"; the admin HTTP export GET /rest/api/exports/participants
 * uses the participant line without `type`).
 *
 * One JSON object per line, each with a `type`: serviceProvider, accessPointProvider,
 * accessPoint, capability, process, documentType, account, participant. The reference data
 * lines have the seed file's item shapes (decisions §9), so the owners' `importSeed`
 * actions take them back (a service provider with its `accessPoints`, an access point's
 * endpoints with their certificates as base64 DER: decisions §13); an account carries its `passwordHash` (never a password) and
 * its `disabled` flag; a participant is the spec's Participant with `provider` and its
 * processes as identifiers (`[{ identifier }]`, the Add participant form's references).
 *
 * Owners page their collections by key (`exportRecords`: identifier order, `after` the
 * last identifier of the previous page), so nobody ever holds a whole collection.
 */
import Validator from "fastest-validator";
import { organizationIdentifierFault, participantQualifiedIdentifier } from "../contract/identifiers";
import type { Contact, Participant, Reference, Role, ServiceProvider } from "../contract/model";
import { calendarDate } from "../contract/dates";
import { isPasswordHash } from "../platform/passwords";
import { CONTACT_SCHEMA } from "../contract/schemas";
import { ACCOUNT_ROLES, SEED_ITEM_SCHEMAS, USERNAME_PATTERN, type AccountSeed, type SeedSection } from "./seed-file";
import { accountLinkReasons } from "./seed-validation";
import { endpointViolations, type EndpointInput } from "../contract/endpoints";
import type { Collection, StoredDoc } from "../store/types";
import { DEFAULT_MESSAGES, rules, toViolations, type FailedCheck } from "../contract/validation";

/** Every record type, in the order an export writes them. */
export const RECORD_TYPES = [
	"serviceProvider",
	"accessPointProvider",
	"accessPoint",
	"capability",
	"process",
	"documentType",
	"account",
	"participant",
] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** Which service owns (exports and imports) each type. */
export const RECORD_OWNERS: Record<RecordType, "accounts" | "accessPoints" | "catalog" | "participants"> = {
	serviceProvider: "accounts",
	accessPointProvider: "accessPoints",
	accessPoint: "accessPoints",
	capability: "catalog",
	process: "catalog",
	documentType: "catalog",
	account: "accounts",
	participant: "participants",
};

/** The seed section a reference data type is imported as (participants and accounts have their own lines). */
export const SEED_SECTION_OF: Partial<Record<RecordType, SeedSection>> = {
	serviceProvider: "serviceProviders",
	accessPointProvider: "accessPointProviders",
	accessPoint: "accessPoints",
	capability: "capabilities",
	process: "processes",
	documentType: "documentTypes",
	account: "accounts",
};

/** An account line: the stored account, with its hash, never a password. */
export interface AccountLine {
	username: string;
	passwordHash: string;
	role: Exclude<Role, "ANONYMOUS">;
	serviceProvider?: string;
	accessPointProvider?: string;
	oauthClientId?: string;
	disabled: boolean;
}

/** A participant line: the spec's Participant, `provider` always, processes as references. */
export type ExportedParticipant = Omit<Participant, "processes" | "provider"> & {
	provider: ServiceProvider;
	processes: Reference[];
};

// ---------------------------------------------------------------------------------------
// Paging by key, for every owner's `exportRecords` action.

/** Largest page an `exportRecords` call answers. */
export const MAX_EXPORT_PAGE = 5000;
export const DEFAULT_EXPORT_PAGE = 1000;

export interface ExportPage<T = Record<string, unknown>> {
	records: T[];
	/** The `after` of the next page; null on the last one. */
	next: string | null;
	/** How many records of this type there are; on the first page only (progress bars). */
	total?: number;
}

/** The `exportRecords` params of an owner that exports `types`. */
export function exportPageParams(types: RecordType[]) {
	return {
		type: { type: "enum", values: types },
		after: { type: "string", optional: true },
		limit: { type: "number", integer: true, min: 1, max: MAX_EXPORT_PAGE, optional: true, convert: true },
	};
}

export interface ExportPageRequest {
	type: RecordType;
	after?: string;
	limit?: number;
}

/**
 * One page of a collection in identifier order, strictly after `after`. Reads at most
 * `limit + 2` documents: a participant added meanwhile never shifts a page, and nothing is
 * repeated or skipped that stayed in place.
 */
export async function keysetPage<T extends StoredDoc>(
	collection: Collection<T>,
	request: Omit<ExportPageRequest, "type">,
): Promise<{ docs: T[]; next: string | null; total?: number }> {
	const limit = request.limit ?? DEFAULT_EXPORT_PAGE;
	const after = request.after;
	const found = await collection.find({
		filter: after === undefined ? {} : { identifier: { gte: after } },
		limit: limit + 2,
	});
	const rest = found.filter((doc) => doc.identifier !== after);
	const docs = rest.slice(0, limit);
	const page: { docs: T[]; next: string | null; total?: number } = {
		docs,
		next: rest.length > limit ? docs[docs.length - 1].identifier : null,
	};
	if (after === undefined) page.total = await collection.count();
	return page;
}

/** A `keysetPage` as an `exportRecords` answer: each document turned into its line. */
export function linesOf<T extends StoredDoc>(
	page: { docs: T[]; next: string | null; total?: number },
	line: (doc: T) => object,
): ExportPage {
	return {
		records: page.docs.map(line) as Record<string, unknown>[],
		next: page.next,
		...(page.total === undefined ? {} : { total: page.total }),
	};
}

/** Walks every page of one type through `call` (an `exportRecords` action). */
export async function* exportedRecords<T = Record<string, unknown>>(
	call: (request: ExportPageRequest) => Promise<ExportPage<T>>,
	type: RecordType,
	onTotal?: (total: number) => void,
	limit = DEFAULT_EXPORT_PAGE,
): AsyncGenerator<T> {
	let after: string | undefined;
	for (;;) {
		const page = await call({ type, limit, ...(after === undefined ? {} : { after }) });
		if (page.total !== undefined) onTotal?.(page.total);
		for (const record of page.records) yield record;
		if (page.next === null) return;
		after = page.next;
	}
}

// ---------------------------------------------------------------------------------------
// Participant lines (also the HTTP export's lines, without `type`).

/** The stored instant of an imported calendar date: the stored one when it is that day, else midnight UTC. */
export function instantOf(date: string, stored?: string): string {
	return stored && calendarDate(stored) === date ? stored : `${date}T00:00:00.000Z`;
}

// ---------------------------------------------------------------------------------------
// Line checks (import): the seed's item shapes with `type`, strict (a misspelt field is a reason).

type Schema = Record<string, unknown>;

const uuid = (extra: Schema = {}): Schema => ({
	type: "uuid",
	messages: { required: "NotNull", uuid: "Pattern", uuidVersion: "Pattern" },
	...extra,
});
const calendarDateRule = (extra: Schema = {}): Schema => ({
	type: "string",
	pattern: /^\d{4}-\d{2}-\d{2}$/,
	messages: { required: "NotNull", stringPattern: "Pattern" },
	...extra,
});
const references = (): Schema => ({
	type: "array",
	messages: { required: "NotNull" },
	items: { type: "object", strict: true, props: { identifier: uuid() } },
});

/** Deep copy with `strict: "remove"` turned into `strict: true` (unknown fields are reasons). */
function strictly<T>(schema: T): T {
	if (Array.isArray(schema)) return schema.map(strictly) as T;
	if (schema === null || typeof schema !== "object" || schema instanceof RegExp) return schema;
	return Object.fromEntries(
		Object.entries(schema as Schema).map(([key, value]) => [
			key,
			key === "strict" && value === "remove" ? true : strictly(value),
		]),
	) as T;
}

function withType(type: RecordType, schema: Schema): Schema {
	return { ...schema, props: { type: { type: "equal", value: type }, ...(schema.props as Schema) } };
}

const LINE_SCHEMAS: Record<RecordType, Schema> = {
	serviceProvider: withType("serviceProvider", SEED_ITEM_SCHEMAS.serviceProviders),
	accessPointProvider: withType("accessPointProvider", SEED_ITEM_SCHEMAS.accessPointProviders),
	accessPoint: withType("accessPoint", SEED_ITEM_SCHEMAS.accessPoints),
	capability: withType("capability", SEED_ITEM_SCHEMAS.capabilities),
	process: withType("process", SEED_ITEM_SCHEMAS.processes),
	documentType: withType("documentType", SEED_ITEM_SCHEMAS.documentTypes),
	account: withType("account", {
		type: "object",
		strict: true,
		props: {
			username: rules.notEmptyString({ pattern: USERNAME_PATTERN, messages: { stringPattern: "Pattern" } }),
			passwordHash: rules.notEmptyString(),
			role: { type: "enum", values: ACCOUNT_ROLES, messages: { required: "NotNull", enumValue: "Pattern" } },
			serviceProvider: uuid({ optional: true }),
			accessPointProvider: uuid({ optional: true }),
			disabled: { type: "boolean", optional: true },
		},
	}),
	participant: withType("participant", {
		type: "object",
		strict: true,
		props: {
			identifier: uuid(),
			qualifiedIdentifier: { type: "string", optional: true },
			icd: rules.notNullString({ pattern: /^\d{1,4}$/, messages: { stringPattern: "Pattern" } }),
			organizationIdentifier: rules.notEmptyString({ max: 35, messages: { stringMax: "Size" } }),
			name: rules.optionalString({ max: 500 }),
			registrationDate: calendarDateRule(),
			lastModificationDate: calendarDateRule(),
			deleteDate: calendarDateRule({ optional: true, nullable: true }),
			contact: strictly(CONTACT_SCHEMA),
			provider: {
				type: "object",
				strict: true,
				messages: { required: "NotNull" },
				props: { identifier: uuid(), title: { type: "string", optional: true } },
			},
			processes: references(),
		},
	}),
};

const validator = new Validator({ useNewCustomCheckerFunction: true, haltOnFirstError: false });
const CHECKERS = Object.fromEntries(
	RECORD_TYPES.map((type) => [type, validator.compile({ $$root: true, ...LINE_SCHEMAS[type] })]),
) as unknown as Record<RecordType, (value: unknown) => true | FailedCheck[]>;

export interface LineReason {
	/** Field path within the line ("" for the line itself). */
	field: string;
	message: string;
}

function isCalendarDate(value: unknown): boolean {
	if (typeof value !== "string") return true;
	const parsed = new Date(`${value}T00:00:00Z`);
	return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}

/**
 * What is wrong with one parsed line on its own (shape and the rules that need no other
 * line): its type, when it has a known one, and every reason.
 */
export function lineReasons(value: unknown): { type?: RecordType; reasons: LineReason[] } {
	if (value === null || typeof value !== "object" || Array.isArray(value))
		return { reasons: [{ field: "", message: "a line is one JSON object" }] };
	const type = (value as { type?: unknown }).type;
	if (!(RECORD_TYPES as readonly unknown[]).includes(type)) {
		return { reasons: [{ field: "type", message: `must be one of ${RECORD_TYPES.join(", ")}` }] };
	}
	const recordType = type as RecordType;
	const result = CHECKERS[recordType](value);
	const reasons: LineReason[] =
		result === true
			? []
			: result.map((check) => {
					const field = check.field === "$$root" ? "" : (check.field ?? "");
					if (check.type === "objectStrict")
						return { field, message: `unknown field(s): ${String(check.actual)}` };
					const [violation] = toViolations([{ ...check, field }], value, "");
					return { field, message: violation.defaultMessage };
				});
	const line = value as Record<string, unknown>;
	if (recordType === "account") {
		reasons.push(...accountLinkReasons(line as Partial<AccountSeed>));
		if (typeof line.passwordHash === "string" && line.passwordHash !== "" && !isPasswordHash(line.passwordHash)) {
			reasons.push({ field: "passwordHash", message: "must be a hash like scrypt$N$r$p$salt$hash" });
		}
	}
	if (recordType === "accessPoint" && Array.isArray(line.endpoints)) {
		// Certificates that expired since the export are taken: a restore brings back what the registry held.
		const endpoints = (line.endpoints as unknown[]).filter(
			(endpoint): endpoint is EndpointInput => endpoint !== null && typeof endpoint === "object",
		);
		for (const { field, defaultMessage } of endpointViolations(endpoints, "endpoints", null))
			reasons.push({ field, message: defaultMessage });
	}
	if (recordType === "participant") {
		const { icd, organizationIdentifier, qualifiedIdentifier } = line;
		if (typeof icd === "string" && typeof organizationIdentifier === "string" && /^\d{1,4}$/.test(icd)) {
			const fault = organizationIdentifierFault(icd, organizationIdentifier);
			if (fault) reasons.push({ field: "organizationIdentifier", message: DEFAULT_MESSAGES[fault] });
			const expected = participantQualifiedIdentifier(icd, organizationIdentifier);
			if (
				typeof qualifiedIdentifier === "string" &&
				qualifiedIdentifier.toLowerCase() !== expected.toLowerCase()
			) {
				reasons.push({
					field: "qualifiedIdentifier",
					message: `must be ${expected} (from icd and organizationIdentifier)`,
				});
			}
		}
		for (const field of ["registrationDate", "lastModificationDate", "deleteDate"]) {
			if (!isCalendarDate(line[field])) reasons.push({ field, message: "must be a calendar date YYYY-MM-DD" });
		}
	}
	return { type: recordType, reasons };
}

/** The line as its owner's importSeed section item (`type` dropped; an account keeps no `disabled`). */
export function seedItemOf(line: Record<string, unknown>): Record<string, unknown> {
	const item: Record<string, unknown> = { ...line };
	delete item.type;
	if (line.type === "account") delete item.disabled;
	return item;
}

/** A participant line as `participants.importRecords` takes it. */
export interface ImportedParticipant {
	identifier: string;
	icd: string;
	organizationIdentifier: string;
	name?: string | null;
	registrationDate: string;
	lastModificationDate: string;
	deleteDate?: string | null;
	contact: Contact;
	serviceProvider: string;
	processes: Reference[];
}

export function importedParticipantOf(line: Record<string, unknown>): ImportedParticipant {
	const {
		identifier,
		icd,
		organizationIdentifier,
		name,
		registrationDate,
		lastModificationDate,
		deleteDate,
		contact,
		provider,
		processes,
	} = line as unknown as ExportedParticipant & {
		deleteDate?: string | null;
	};
	return {
		identifier,
		icd,
		organizationIdentifier,
		...(name === undefined ? {} : { name }),
		registrationDate,
		lastModificationDate,
		...(deleteDate === undefined ? {} : { deleteDate }),
		contact,
		serviceProvider: provider.identifier,
		processes,
	};
}
