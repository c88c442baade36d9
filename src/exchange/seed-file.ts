/**
 * The seed file itself (decisions §9): its sections and the record types each holds, the
 * reason type every refusal is told in, the API's request schemas made strict for each
 * section's items (a misspelt field is a reason, not a loss), and parsing a file's text.
 * What a file must satisfy beyond its shape is in seed-validation.ts.
 */
import { ADD_PARTICIPANT_FORM, CONTACT_SCHEMA, DOCUMENT_TYPE_FORM, PROCESS_FORM } from "../contract/schemas";
import {
	ACCOUNT_ROLES,
	MIN_PASSWORD_LENGTH,
	OAUTH_CLIENT_ID_PATTERN,
	USERNAME_PATTERN,
	type AccountRole,
	type Contact,
} from "../contract/model";
import { rules } from "../contract/validation";
import { ENDPOINT_SCHEMA, type EndpointInput } from "../contract/endpoints";
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
	/** The access points its participants receive through (decisions §13), as references. */
	accessPoints?: SeedReference[];
}
export interface AccessPointProviderSeed {
	identifier: string;
	title: string;
	contact: Contact;
}
/** An endpoint as a seed file gives it: the API's, with the extensions of decisions §13 (certificate, dates…). */
export type EndpointSeed = EndpointInput;
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
export type { AccountRole } from "../contract/model";
export interface AccountSeed {
	username: string;
	/** Exactly one of password and passwordHash. */
	password?: string;
	passwordHash?: string;
	role: AccountRole;
	serviceProvider?: string;
	accessPointProvider?: string;
	/** The OAuth client that acts as the account (decisions §15); null clears it, left out leaves it as it is. */
	oauthClientId?: string | null;
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

// ---------------------------------------------------------------------------------------
// Shape: the API's request schemas, made strict so a misspelt field is a reason, not a loss.

type Schema = Record<string, unknown>;

/** Deep copy of a schema with `strict: "remove"` turned into `strict: true`. */
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

const item = (props: Schema): Schema => ({
	type: "object",
	strict: true,
	messages: { required: "NotNull", object: "TypeMismatch" },
	props,
});
const uuid = (extra: Schema = {}): Schema => ({
	type: "uuid",
	messages: { required: "NotNull", uuid: "Pattern", uuidVersion: "Pattern" },
	...extra,
});
const title = () => rules.notEmptyString({ max: 1000 });
const formProps = (form: { props: Schema }) => strictly(form.props);

// The account vocabulary is the contract's (the accounts operations validate with it too).
export { ACCOUNT_ROLES, MIN_PASSWORD_LENGTH, USERNAME_PATTERN };

export const SEED_ITEM_SCHEMAS: Record<SeedSection, Schema> = {
	serviceProviders: item({
		identifier: uuid(),
		title: title(),
		accessPoints: { type: "array", optional: true, items: item({ identifier: uuid() }) },
	}),
	accessPointProviders: item({ identifier: uuid(), title: title(), contact: strictly(CONTACT_SCHEMA) }),
	accessPoints: item({
		identifier: uuid(),
		title: title(),
		provider: uuid(),
		endpoints: { type: "array", messages: { required: "NotNull" }, items: strictly(ENDPOINT_SCHEMA) },
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
		oauthClientId: {
			type: "string",
			optional: true,
			nullable: true,
			pattern: OAUTH_CLIENT_ID_PATTERN,
			messages: { stringPattern: "Pattern" },
		},
	}),
	participants: item({
		identifier: uuid({ optional: true }),
		serviceProvider: uuid(),
		...formProps(ADD_PARTICIPANT_FORM),
	}),
};

/** Parses a seed file's text; a syntax error is a reason like any other. */
export function parseSeed(text: string): { seed?: unknown; reasons: SeedReason[] } {
	try {
		return { seed: JSON.parse(text), reasons: [] };
	} catch (error) {
		return { reasons: [{ path: "", message: `not JSON: ${(error as Error).message}` }] };
	}
}
