/**
 * Seed files (decisions §9): the shape, every reason a file is refused, and the import
 * that hands each section to the service that owns it.
 *
 * A file is checked whole before anything is written: its shape (with the same request
 * schemas the API uses, unknown fields reported rather than dropped), duplicates, and every
 * reference, which must name a record of the same file or one already in the registry.
 * Each owning service checks its sections again and writes them in one atomic batch; an
 * import is an idempotent upsert by `identifier` (accounts: by `username`).
 */
import type { ServiceBroker } from "moleculer";
import Validator from "fastest-validator";
import { RegistryError } from "../contract/errors";
import { organizationIdentifierIsValid, organizationKey } from "../contract/identifiers";
import type { Contact, Role } from "../contract/model";
import { isPasswordHash } from "../platform/passwords";
import { ADD_PARTICIPANT_FORM, CONTACT_SCHEMA, DOCUMENT_TYPE_FORM, PROCESS_FORM } from "../contract/schemas";
import { DEFAULT_MESSAGES, rules, toViolations, type FailedCheck } from "../contract/validation";
import type { StoredDoc } from "../store/types";
import type { DocumentTypeForm, ProcessForm } from "../contract/schemas";

export const SEED_SECTIONS = [
	"serviceProviders",
	"accessPointProviders",
	"accessPoints",
	"capabilities",
	"processes",
	"documentTypes",
	"accounts",
	"participants",
] as const;
export type SeedSection = (typeof SEED_SECTIONS)[number];

export interface SeedReference {
	identifier: string;
}
export interface ServiceProviderSeed {
	identifier: string;
	title: string;
}
export interface AccessPointProviderSeed {
	identifier: string;
	title: string;
	contact: Contact;
}
export interface EndpointSeed {
	url: string;
	transportProfile: { title: string; value: string; certificateTypes: string[] };
}
export interface AccessPointSeed {
	identifier: string;
	title: string;
	/** The access point provider's identifier. */
	provider: string;
	endpoints: EndpointSeed[];
}
export interface CapabilitySeed {
	identifier: string;
	title: string;
}
export type ProcessSeed = ProcessForm & { identifier: string };
export type DocumentTypeSeed = DocumentTypeForm & { identifier: string };
export type AccountRole = Exclude<Role, "ANONYMOUS">;
export interface AccountSeed {
	username: string;
	/** Exactly one of password and passwordHash. */
	password?: string;
	passwordHash?: string;
	role: AccountRole;
	serviceProvider?: string;
	accessPointProvider?: string;
}
export interface ParticipantSeed {
	identifier?: string;
	serviceProvider: string;
	icd: string;
	organizationIdentifier: string;
	name?: string;
	processes: SeedReference[];
	contact: Contact;
}

export interface Seed {
	serviceProviders?: ServiceProviderSeed[];
	accessPointProviders?: AccessPointProviderSeed[];
	accessPoints?: AccessPointSeed[];
	capabilities?: CapabilitySeed[];
	processes?: ProcessSeed[];
	documentTypes?: DocumentTypeSeed[];
	accounts?: AccountSeed[];
	participants?: ParticipantSeed[];
}

/** Why a file (or a section handed to a service) is refused: where, and what is wrong. */
export interface SeedReason {
	/** e.g. `processes[2].dependencies[0].identifier`; "" for the file itself. */
	path: string;
	message: string;
}

/** A refused seed: 400 with every reason in `data.reasons` (they survive a trip over NATS). */
export class SeedRefused extends RegistryError {
	constructor(public readonly reasons: SeedReason[]) {
		super(400, "MethodArgumentNotValidException", `Seed refused. Reason count: ${reasons.length}`, { reasons });
	}
}

/** Reads the reasons of a SeedRefused, also one that crossed the broker as a plain error. */
export function reasonsOf(error: unknown): SeedReason[] | null {
	const data = (error as { data?: { reasons?: unknown } } | null)?.data;
	return Array.isArray(data?.reasons) ? (data.reasons as SeedReason[]) : null;
}

// ---------------------------------------------------------------------------------------
// Shape: the API's request schemas, made strict so a misspelt field is a reason, not a loss.

type Schema = Record<string, unknown>;

/** Deep copy of a schema with `strict: "remove"` turned into `strict: true`. */
function strictly<T>(schema: T): T {
	if (Array.isArray(schema)) return schema.map(strictly) as T;
	if (schema === null || typeof schema !== "object" || schema instanceof RegExp) return schema;
	return Object.fromEntries(
		Object.entries(schema as Schema).map(([key, value]) => [key, key === "strict" && value === "remove" ? true : strictly(value)]),
	) as T;
}

const item = (props: Schema): Schema => ({ type: "object", strict: true, messages: { required: "NotNull", object: "TypeMismatch" }, props });
const uuid = (extra: Schema = {}): Schema => ({ type: "uuid", messages: { required: "NotNull", uuid: "Pattern", uuidVersion: "Pattern" }, ...extra });
const title = () => rules.notEmptyString({ max: 1000 });
const formProps = (form: { props: Schema }) => strictly(form.props);

export const ACCOUNT_ROLES: AccountRole[] = ["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", "ADMIN", "NETWORK_AUTHORITY"];
/** A Basic-auth user name cannot hold a colon (RFC 7617); whitespace would be invisible in a header. */
export const USERNAME_PATTERN = /^[^\s:]{1,100}$/;
export const MIN_PASSWORD_LENGTH = 12;

export const SEED_ITEM_SCHEMAS: Record<SeedSection, Schema> = {
	serviceProviders: item({ identifier: uuid(), title: title() }),
	accessPointProviders: item({ identifier: uuid(), title: title(), contact: strictly(CONTACT_SCHEMA) }),
	accessPoints: item({
		identifier: uuid(),
		title: title(),
		provider: uuid(),
		endpoints: {
			type: "array",
			messages: { required: "NotNull" },
			items: item({
				url: { type: "url", messages: { required: "NotNull", url: "Pattern" } },
				transportProfile: item({
					title: title(),
					value: title(),
					certificateTypes: { type: "array", messages: { required: "NotNull" }, items: title() },
				}),
			}),
		},
	}),
	capabilities: item({ identifier: uuid(), title: title() }),
	processes: item({ identifier: uuid(), ...formProps(PROCESS_FORM) }),
	documentTypes: item({ identifier: uuid(), ...formProps(DOCUMENT_TYPE_FORM) }),
	accounts: item({
		username: rules.notEmptyString({ pattern: USERNAME_PATTERN, messages: { stringPattern: "Pattern" } }),
		password: { type: "string", optional: true, min: MIN_PASSWORD_LENGTH, max: 1024 },
		passwordHash: { type: "string", optional: true },
		role: { type: "enum", values: ACCOUNT_ROLES, messages: { required: "NotNull", enumValue: "Pattern" } },
		serviceProvider: uuid({ optional: true }),
		accessPointProvider: uuid({ optional: true }),
	}),
	participants: item({ identifier: uuid({ optional: true }), serviceProvider: uuid(), ...formProps(ADD_PARTICIPANT_FORM) }),
};

const validator = new Validator({ useNewCustomCheckerFunction: true, haltOnFirstError: false });
const CHECKERS = Object.fromEntries(
	SEED_SECTIONS.map((section) => [section, validator.compile({ $$root: true, ...SEED_ITEM_SCHEMAS[section] })]),
) as unknown as Record<SeedSection, (value: unknown) => true | FailedCheck[]>;

function at(section: string, index: number, field = ""): string {
	return `${section}[${index}]${field ? `.${field}` : ""}`;
}

function shapeReasons(section: SeedSection, items: unknown[]): SeedReason[] {
	return items.flatMap((value, index) => {
		const result = CHECKERS[section](value);
		if (result === true) return [];
		return result.map((check) => {
			const field = check.field === "$$root" ? "" : check.field ?? "";
			if (check.type === "objectStrict") return { path: at(section, index, field), message: `unknown field(s): ${String(check.actual)}` };
			const [violation] = toViolations([{ ...check, field }], value, "");
			return { path: at(section, index, field), message: violation.defaultMessage };
		});
	});
}

// ---------------------------------------------------------------------------------------
// References: one table drives both the check and the question "what must the registry have?".

export type ReferenceTarget = "serviceProviders" | "accessPointProviders" | "capabilities" | "processes" | "documentTypes";
type Item = Record<string, unknown>;
interface Pointer {
	field: string;
	identifier: unknown;
}
interface ReferenceRule {
	section: SeedSection;
	target: ReferenceTarget;
	read(item: Item): Pointer[];
}

const NOUN: Record<ReferenceTarget, string> = {
	serviceProviders: "service provider",
	accessPointProviders: "access point provider",
	capabilities: "capability",
	processes: "process",
	documentTypes: "document type",
};

function listed(item: Item, field: string): Pointer[] {
	const list = item[field];
	if (!Array.isArray(list)) return [];
	return list.map((entry, index) => ({ field: `${field}[${index}].identifier`, identifier: (entry as Item | null)?.identifier }));
}

const single = (field: string) => (item: Item): Pointer[] => (item[field] === undefined ? [] : [{ field, identifier: item[field] }]);

const REFERENCES: ReferenceRule[] = [
	{ section: "accessPoints", target: "accessPointProviders", read: single("provider") },
	{ section: "processes", target: "capabilities", read: (item) => listed(item, "capabilities") },
	{ section: "processes", target: "documentTypes", read: (item) => listed(item, "documentTypes") },
	{ section: "processes", target: "processes", read: (item) => listed(item, "dependencies") },
	{ section: "documentTypes", target: "processes", read: (item) => listed(item, "processes") },
	{ section: "accounts", target: "serviceProviders", read: single("serviceProvider") },
	{ section: "accounts", target: "accessPointProviders", read: single("accessPointProvider") },
	{ section: "participants", target: "serviceProviders", read: single("serviceProvider") },
	{ section: "participants", target: "processes", read: (item) => listed(item, "processes") },
];

/** Identifiers the registry may already hold, by kind (what a file may refer to without defining). */
export type ExistingRecords = Partial<Record<ReferenceTarget, Iterable<string>>>;

const lower = (value: unknown) => (typeof value === "string" ? value.toLowerCase() : undefined);

/** The objects of a section with their positions in the file (anything else is a shape reason already). */
function itemsOf(seed: Item, section: SeedSection): { index: number; entry: Item }[] {
	const list = seed[section];
	if (!Array.isArray(list)) return [];
	return list
		.map((entry: unknown, index) => ({ index, entry: entry as Item }))
		.filter(({ entry }) => entry !== null && typeof entry === "object" && !Array.isArray(entry));
}

function definedIn(seed: Item, section: ReferenceTarget): Set<string> {
	return new Set(itemsOf(seed, section).map(({ entry }) => lower(entry.identifier)).filter((id): id is string => id !== undefined));
}

/** Identifiers the file refers to but does not define: the registry must already have them. */
export function referencesOutside(json: unknown): Record<ReferenceTarget, string[]> {
	const seed = (json !== null && typeof json === "object" ? json : {}) as Item;
	const outside: Record<ReferenceTarget, Set<string>> = {
		serviceProviders: new Set(), accessPointProviders: new Set(), capabilities: new Set(), processes: new Set(), documentTypes: new Set(),
	};
	for (const rule of REFERENCES) {
		const defined = definedIn(seed, rule.target);
		for (const { entry } of itemsOf(seed, rule.section)) {
			for (const pointer of rule.read(entry)) {
				const identifier = lower(pointer.identifier);
				if (identifier && !defined.has(identifier)) outside[rule.target].add(identifier);
			}
		}
	}
	return Object.fromEntries(Object.entries(outside).map(([kind, ids]) => [kind, [...ids]])) as Record<ReferenceTarget, string[]>;
}

function referenceReasons(seed: Item, existing: ExistingRecords): SeedReason[] {
	const reasons: SeedReason[] = [];
	for (const rule of REFERENCES) {
		const known = new Set([...definedIn(seed, rule.target), ...[...(existing[rule.target] ?? [])].map((id) => id.toLowerCase())]);
		for (const { index, entry } of itemsOf(seed, rule.section)) {
			for (const pointer of rule.read(entry)) {
				const identifier = lower(pointer.identifier);
				if (identifier === undefined || known.has(identifier)) continue;
				reasons.push({
					path: at(rule.section, index, pointer.field),
					message: `${DEFAULT_MESSAGES.Exists}: no ${NOUN[rule.target]} ${identifier} in the file or the registry`,
				});
			}
		}
	}
	return reasons;
}

// ---------------------------------------------------------------------------------------
// Rules beyond shape and references.

function duplicates(seed: Item, section: SeedSection, field: string, key: (value: string) => string): SeedReason[] {
	const seen = new Map<string, number>();
	const reasons: SeedReason[] = [];
	(Array.isArray(seed[section]) ? (seed[section] as unknown[]) : []).forEach((entry, index) => {
		const value = (entry as Item | null)?.[field];
		if (typeof value !== "string" || value === "") return;
		const first = seen.get(key(value));
		if (first === undefined) seen.set(key(value), index);
		else reasons.push({ path: at(section, index, field), message: `duplicate ${field} (also ${at(section, first, field)})` });
	});
	return reasons;
}

const identity = (value: string) => value;
const caseless = (value: string) => value.toLowerCase();

function duplicateReasons(seed: Item): SeedReason[] {
	return [
		...(["serviceProviders", "accessPointProviders", "accessPoints", "capabilities", "processes", "documentTypes", "participants"] as const).flatMap(
			(section) => duplicates(seed, section, "identifier", caseless),
		),
		...duplicates(seed, "processes", "qualifiedIdentifier", caseless),
		...duplicates(seed, "documentTypes", "qualifiedIdentifier", caseless),
		// Usernames are case-sensitive, as the credentials are.
		...duplicates(seed, "accounts", "username", identity),
	];
}

/** A SERVICE_PROVIDER account names its service provider, an ACCESS_POINT_PROVIDER its access point provider, others neither. */
export function accountLinkReasons(account: Partial<AccountSeed>): { field: string; message: string }[] {
	const reasons: { field: string; message: string }[] = [];
	const needs = { serviceProvider: account.role === "SERVICE_PROVIDER", accessPointProvider: account.role === "ACCESS_POINT_PROVIDER" };
	for (const field of ["serviceProvider", "accessPointProvider"] as const) {
		const given = account[field] !== undefined && account[field] !== null;
		if (needs[field] && !given) reasons.push({ field, message: `${DEFAULT_MESSAGES.NotNull} for role ${account.role}` });
		if (!needs[field] && given) reasons.push({ field, message: `must not be given for role ${account.role}` });
	}
	return reasons;
}

function accountReasons(seed: Item): SeedReason[] {
	return itemsOf(seed, "accounts").flatMap(({ index, entry: account }) => {
		const reasons = ACCOUNT_ROLES.includes(account.role as AccountRole)
			? accountLinkReasons(account as Partial<AccountSeed>).map(({ field, message }) => ({ path: at("accounts", index, field), message }))
			: [];
		const hasPassword = account.password !== undefined;
		const hasHash = account.passwordHash !== undefined;
		if (hasPassword === hasHash) {
			reasons.push({ path: at("accounts", index, "password"), message: "give exactly one of password and passwordHash" });
		} else if (hasHash && typeof account.passwordHash === "string" && !isPasswordHash(account.passwordHash)) {
			reasons.push({ path: at("accounts", index, "passwordHash"), message: "must be a hash like scrypt$N$r$p$salt$hash" });
		}
		return reasons;
	});
}

function participantReasons(seed: Item): SeedReason[] {
	const reasons: SeedReason[] = [];
	const organizations = new Map<string, number>();
	itemsOf(seed, "participants").forEach(({ index, entry: participant }) => {
		const { icd, organizationIdentifier, serviceProvider } = participant;
		if (typeof icd !== "string" || typeof organizationIdentifier !== "string") return;
		if (!organizationIdentifierIsValid(icd, organizationIdentifier)) {
			reasons.push({ path: at("participants", index, "organizationIdentifier"), message: DEFAULT_MESSAGES.OrganizationNumber });
		}
		const key = `${lower(serviceProvider)}|${organizationKey(icd, organizationIdentifier)}`;
		const first = organizations.get(key);
		if (first === undefined) organizations.set(key, index);
		else reasons.push({ path: at("participants", index), message: `the service provider already has this organization (also ${at("participants", first)})` });
	});
	return reasons;
}

function selfDependencyReasons(seed: Item): SeedReason[] {
	return itemsOf(seed, "processes").flatMap(({ index, entry: process }) =>
		listed(process, "dependencies")
			.filter((pointer) => lower(pointer.identifier) !== undefined && lower(pointer.identifier) === lower(process.identifier))
			.map((pointer) => ({ path: at("processes", index, pointer.field), message: "a process cannot depend on itself" })),
	);
}

/**
 * Every reason the file is refused; empty when it may be imported. `existing` lists what
 * the registry already holds (identifiers the file may refer to without defining them).
 */
export function validateSeed(json: unknown, existing: ExistingRecords = {}): SeedReason[] {
	if (json === null || typeof json !== "object" || Array.isArray(json)) return [{ path: "", message: "a seed file is a JSON object of sections" }];
	const seed = json as Item;
	const reasons: SeedReason[] = [];
	for (const [section, value] of Object.entries(seed)) {
		if (value === undefined) continue;
		if (!(SEED_SECTIONS as readonly string[]).includes(section)) {
			reasons.push({ path: section, message: `unknown section; sections are ${SEED_SECTIONS.join(", ")}` });
		} else if (!Array.isArray(value)) {
			reasons.push({ path: section, message: "must be an array" });
		} else {
			reasons.push(...shapeReasons(section as SeedSection, value));
		}
	}
	return [
		...reasons,
		...duplicateReasons(seed),
		...referenceReasons(seed, existing),
		...selfDependencyReasons(seed),
		...accountReasons(seed),
		...participantReasons(seed),
	];
}

/** Parses a seed file's text; a syntax error is a reason like any other. */
export function parseSeed(text: string): { seed?: unknown; reasons: SeedReason[] } {
	try {
		return { seed: JSON.parse(text), reasons: [] };
	} catch (error) {
		return { reasons: [{ path: "", message: `not JSON: ${(error as Error).message}` }] };
	}
}

// ---------------------------------------------------------------------------------------
// Upserts: what the owning services write. A record that would not change is not written,
// so a second import of the same file changes nothing (and audits nothing).

export interface SeedCounts {
	created: number;
	updated: number;
	unchanged: number;
}

/** Same content, whatever the key order or the store's bookkeeping (`version`, absent vs undefined). */
export function sameRecord(a: StoredDoc, b: StoredDoc): boolean {
	return canonical({ ...a, version: undefined }) === canonical({ ...b, version: undefined });
}

function canonical(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
	if (value !== null && typeof value === "object") {
		const entries = Object.entries(value as Record<string, unknown>)
			.filter(([, field]) => field !== undefined)
			.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
		return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonical(field)}`).join(",")}}`;
	}
	return JSON.stringify(value);
}

export interface UpsertPlan<T extends StoredDoc> {
	/** Records to write: `before` is the stored one (null when new). */
	writes: { before: T | null; after: T }[];
	counts: SeedCounts;
}

export function planUpserts<T extends StoredDoc>(stored: T[], wanted: T[]): UpsertPlan<T> {
	const byIdentifier = new Map(stored.map((record) => [record.identifier, record]));
	const plan: UpsertPlan<T> = { writes: [], counts: { created: 0, updated: 0, unchanged: 0 } };
	for (const after of wanted) {
		const before = byIdentifier.get(after.identifier) ?? null;
		if (before && sameRecord(before, after)) {
			plan.counts.unchanged++;
		} else {
			plan.writes.push({ before, after });
			plan.counts[before ? "updated" : "created"]++;
		}
	}
	return plan;
}

// ---------------------------------------------------------------------------------------
// Import: ask the owners what exists, refuse or hand each section to its owner.

function isRunning(broker: ServiceBroker, action: string): boolean {
	return !(broker.findNextActionEndpoint(action) instanceof Error);
}

async function existingRecords(broker: ServiceBroker, outside: Record<ReferenceTarget, string[]>): Promise<ExistingRecords> {
	const existing: ExistingRecords = {};
	const identifiersOf = (records: { identifier: string }[]) => records.map((record) => record.identifier);
	if (outside.serviceProviders.length && isRunning(broker, "accounts.serviceProviders")) {
		existing.serviceProviders = identifiersOf(await broker.call("accounts.serviceProviders", { identifiers: outside.serviceProviders }));
	}
	if (outside.accessPointProviders.length && isRunning(broker, "accessPoints.providers")) {
		existing.accessPointProviders = identifiersOf(await broker.call("accessPoints.providers", { identifiers: outside.accessPointProviders }));
	}
	const catalogKinds = { capabilities: outside.capabilities, processes: outside.processes, documentTypes: outside.documentTypes };
	if (Object.values(catalogKinds).some((ids) => ids.length) && isRunning(broker, "catalog.knownIdentifiers")) {
		Object.assign(existing, await broker.call("catalog.knownIdentifiers", catalogKinds));
	}
	return existing;
}

/** Which service imports which sections, in dependency order (accounts name access point providers). */
const IMPORTERS: { action: string; sections: SeedSection[] }[] = [
	{ action: "accessPoints.importSeed", sections: ["accessPointProviders", "accessPoints"] },
	{ action: "accounts.importSeed", sections: ["serviceProviders", "accounts"] },
	{ action: "catalog.importSeed", sections: ["capabilities", "processes", "documentTypes"] },
	{ action: "participants.importSeed", sections: ["participants"] },
];

export type SeedResult = Record<string, unknown>;

/** Optional news of an import's progress (the operator CLI's progress bar). */
export interface SeedProgress {
	/** The file is checked and will be imported: how many records it holds. */
	onChecked?(records: number): void;
	/** One owner imported its sections: how many records they held. */
	onImported?(action: string, records: number): void;
}

const SEED_IMPORT_TIMEOUT_MS = 10 * 60 * 1000;

/** Checks the whole file first; throws SeedRefused (nothing written) or imports every section. */
export async function importSeed(broker: ServiceBroker, json: unknown, progress: SeedProgress = {}): Promise<SeedResult> {
	const reasons = validateSeed(json, json && typeof json === "object" ? await existingRecords(broker, referencesOutside(json)) : {});
	const seed = (reasons.length ? {} : json) as Seed;
	const importers = IMPORTERS.filter(({ sections }) => sections.some((section) => (seed[section]?.length ?? 0) > 0));
	for (const { action, sections } of importers) {
		if (!isRunning(broker, action)) reasons.push({ path: sections.join(", "), message: `cannot be imported: ${action} is not running` });
	}
	if (reasons.length) throw new SeedRefused(reasons);
	const recordsOf = (sections: SeedSection[]) => sections.reduce((sum, section) => sum + (seed[section]?.length ?? 0), 0);
	progress.onChecked?.(importers.reduce((sum, { sections }) => sum + recordsOf(sections), 0));
	const result: SeedResult = {};
	for (const { action, sections } of importers) {
		const params = Object.fromEntries(sections.map((section) => [section, seed[section] ?? []]));
		// An import is bulk work (accounts hash every password with scrypt): it gets its own
		// generous timeout rather than REQUEST_TIMEOUT, which is sized for API requests.
		Object.assign(result, await broker.call(action, params, { timeout: SEED_IMPORT_TIMEOUT_MS }));
		progress.onImported?.(action, recordsOf(sections));
	}
	return result;
}
