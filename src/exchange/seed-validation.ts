/**
 * Checking a whole seed file before anything is written (decisions §9): each item's shape
 * against the strict section schemas, unknown sections, duplicates, the rules the schemas
 * cannot say (account links and passwords, organization numbers, self-dependencies), and
 * every reference, which must name a record of the same file or one already in the registry.
 * `referencesOutside` tells the importer what to ask the registry for.
 */
import Validator from "fastest-validator";
import { organizationIdentifierFault, organizationKey } from "../contract/identifiers";
import { isPasswordHash } from "../platform/passwords";
import { DEFAULT_MESSAGES, toViolations, type FailedCheck } from "../contract/validation";
import { endpointViolations, type EndpointInput } from "../contract/endpoints";
import {
	ACCOUNT_ROLES,
	SEED_ITEM_SCHEMAS,
	SEED_SECTIONS,
	type AccountRole,
	type AccountSeed,
	type SeedReason,
	type SeedSection,
} from "./seed-file";

// ---------------------------------------------------------------------------------------
// Shape: every item against its section's strict schema.

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
			const field = check.field === "$$root" ? "" : (check.field ?? "");
			if (check.type === "objectStrict")
				return { path: at(section, index, field), message: `unknown field(s): ${String(check.actual)}` };
			const [violation] = toViolations([{ ...check, field }], value, "");
			return { path: at(section, index, field), message: violation.defaultMessage };
		});
	});
}

// ---------------------------------------------------------------------------------------
// References: one table drives both the check and the question "what must the registry have?".

export type ReferenceTarget =
	"serviceProviders" | "accessPointProviders" | "accessPoints" | "capabilities" | "processes" | "documentTypes";
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
	accessPoints: "access point",
	capabilities: "capability",
	processes: "process",
	documentTypes: "document type",
};

function listed(item: Item, field: string): Pointer[] {
	const list = item[field];
	if (!Array.isArray(list)) return [];
	return list.map((entry, index) => ({
		field: `${field}[${index}].identifier`,
		identifier: (entry as Item | null)?.identifier,
	}));
}

const single =
	(field: string) =>
	(item: Item): Pointer[] =>
		item[field] === undefined ? [] : [{ field, identifier: item[field] }];

const REFERENCES: ReferenceRule[] = [
	{ section: "accessPoints", target: "accessPointProviders", read: single("provider") },
	{ section: "serviceProviders", target: "accessPoints", read: (item) => listed(item, "accessPoints") },
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
	return new Set(
		itemsOf(seed, section)
			.map(({ entry }) => lower(entry.identifier))
			.filter((id): id is string => id !== undefined),
	);
}

/** Identifiers the file refers to but does not define: the registry must already have them. */
export function referencesOutside(json: unknown): Record<ReferenceTarget, string[]> {
	const seed = (json !== null && typeof json === "object" ? json : {}) as Item;
	const outside: Record<ReferenceTarget, Set<string>> = {
		serviceProviders: new Set(),
		accessPointProviders: new Set(),
		accessPoints: new Set(),
		capabilities: new Set(),
		processes: new Set(),
		documentTypes: new Set(),
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
	return Object.fromEntries(Object.entries(outside).map(([kind, ids]) => [kind, [...ids]])) as Record<
		ReferenceTarget,
		string[]
	>;
}

function referenceReasons(seed: Item, existing: ExistingRecords): SeedReason[] {
	const reasons: SeedReason[] = [];
	for (const rule of REFERENCES) {
		const known = new Set([
			...definedIn(seed, rule.target),
			...[...(existing[rule.target] ?? [])].map((id) => id.toLowerCase()),
		]);
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
		else
			reasons.push({
				path: at(section, index, field),
				message: `duplicate ${field} (also ${at(section, first, field)})`,
			});
	});
	return reasons;
}

const identity = (value: string) => value;
const caseless = (value: string) => value.toLowerCase();

function duplicateReasons(seed: Item): SeedReason[] {
	return [
		...(
			[
				"serviceProviders",
				"accessPointProviders",
				"accessPoints",
				"capabilities",
				"processes",
				"documentTypes",
				"participants",
			] as const
		).flatMap((section) => duplicates(seed, section, "identifier", caseless)),
		...duplicates(seed, "processes", "qualifiedIdentifier", caseless),
		...duplicates(seed, "documentTypes", "qualifiedIdentifier", caseless),
		// Usernames are case-sensitive, as the credentials are.
		...duplicates(seed, "accounts", "username", identity),
		...duplicates(seed, "accounts", "oauthClientId", identity),
	];
}

/** A SERVICE_PROVIDER account names its service provider, an ACCESS_POINT_PROVIDER its access point provider, others neither. */
export function accountLinkReasons(account: Partial<AccountSeed>): { field: string; message: string }[] {
	const reasons: { field: string; message: string }[] = [];
	const needs = {
		serviceProvider: account.role === "SERVICE_PROVIDER",
		accessPointProvider: account.role === "ACCESS_POINT_PROVIDER",
	};
	for (const field of ["serviceProvider", "accessPointProvider"] as const) {
		const given = account[field] !== undefined && account[field] !== null;
		if (needs[field] && !given)
			reasons.push({ field, message: `${DEFAULT_MESSAGES.NotNull} for role ${account.role}` });
		if (!needs[field] && given) reasons.push({ field, message: `must not be given for role ${account.role}` });
	}
	return reasons;
}

function accountReasons(seed: Item): SeedReason[] {
	return itemsOf(seed, "accounts").flatMap(({ index, entry: account }) => {
		const reasons = ACCOUNT_ROLES.includes(account.role as AccountRole)
			? accountLinkReasons(account as Partial<AccountSeed>).map(({ field, message }) => ({
					path: at("accounts", index, field),
					message,
				}))
			: [];
		const hasPassword = account.password !== undefined;
		const hasHash = account.passwordHash !== undefined;
		if (hasPassword === hasHash) {
			reasons.push({
				path: at("accounts", index, "password"),
				message: "give exactly one of password and passwordHash",
			});
		} else if (hasHash && typeof account.passwordHash === "string" && !isPasswordHash(account.passwordHash)) {
			reasons.push({
				path: at("accounts", index, "passwordHash"),
				message: "must be a hash like scrypt$N$r$p$salt$hash",
			});
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
		const fault = organizationIdentifierFault(icd, organizationIdentifier);
		if (fault)
			reasons.push({
				path: at("participants", index, "organizationIdentifier"),
				message: DEFAULT_MESSAGES[fault],
			});
		const key = `${lower(serviceProvider)}|${organizationKey(icd, organizationIdentifier)}`;
		const first = organizations.get(key);
		if (first === undefined) organizations.set(key, index);
		else
			reasons.push({
				path: at("participants", index),
				message: `the service provider already has this organization (also ${at("participants", first)})`,
			});
	});
	return reasons;
}

/** Endpoint rules beyond shape (src/contract/endpoints.ts): certificates, dates and their order. */
function endpointReasons(seed: Item, options: SeedCheckOptions): SeedReason[] {
	return itemsOf(seed, "accessPoints").flatMap(({ index, entry }) =>
		Array.isArray(entry.endpoints)
			? endpointViolations(
					(entry.endpoints as unknown[]).filter(
						(endpoint): endpoint is EndpointInput => endpoint !== null && typeof endpoint === "object",
					),
					at("accessPoints", index, "endpoints"),
					options.expiredCertificates ? null : new Date(),
				).map(({ field, defaultMessage }) => ({ path: field, message: defaultMessage }))
			: [],
	);
}

/** A service provider names each access point once. */
function accessPointLinkReasons(seed: Item): SeedReason[] {
	return itemsOf(seed, "serviceProviders").flatMap(({ index, entry }) => {
		const seen = new Set<string>();
		return listed(entry, "accessPoints").flatMap((pointer) => {
			const identifier = lower(pointer.identifier);
			if (identifier === undefined) return [];
			if (!seen.has(identifier)) {
				seen.add(identifier);
				return [];
			}
			return [
				{
					path: at("serviceProviders", index, pointer.field),
					message: "the same access point is listed twice",
				},
			];
		});
	});
}

function selfDependencyReasons(seed: Item): SeedReason[] {
	return itemsOf(seed, "processes").flatMap(({ index, entry: process }) =>
		listed(process, "dependencies")
			.filter(
				(pointer) =>
					lower(pointer.identifier) !== undefined && lower(pointer.identifier) === lower(process.identifier),
			)
			.map((pointer) => ({
				path: at("processes", index, pointer.field),
				message: "a process cannot depend on itself",
			})),
	);
}

/**
 * Every reason the file is refused; empty when it may be imported. `existing` lists what
 * the registry already holds (identifiers the file may refer to without defining them).
 */
export interface SeedCheckOptions {
	/** Take endpoint certificates that have expired (a restore from an export; docs/operations.md "Operator CLI"). */
	expiredCertificates?: boolean;
}

export function validateSeed(
	json: unknown,
	existing: ExistingRecords = {},
	options: SeedCheckOptions = {},
): SeedReason[] {
	if (json === null || typeof json !== "object" || Array.isArray(json))
		return [{ path: "", message: "a seed file is a JSON object of sections" }];
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
		...endpointReasons(seed, options),
		...accessPointLinkReasons(seed),
		...accountReasons(seed),
		...participantReasons(seed),
	];
}
