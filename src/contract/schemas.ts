/**
 * Request body schemas of the contract (spec "Document types", "Processes", "Add participant
 * request", "Update participant request"), in fastest-validator form. They are the actions'
 * `params.body` and the source of the OpenAPI request schemas: one definition serves both.
 * Unknown fields are removed (`$$strict: "remove"`), as the reference service ignores them.
 */
import { isValidPhoneNumber } from "libphonenumber-js";
import type { CountryCode } from "libphonenumber-js";
import { env } from "../config/settings";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type SortableNames } from "./paging";
import {
	ACCOUNT_ROLES,
	MAX_PASSWORD_LENGTH,
	MIN_PASSWORD_LENGTH,
	OAUTH_CLIENT_ID_PATTERN,
	USERNAME_PATTERN,
	type AccountRole,
	type Reference,
} from "./model";
import { rules } from "./validation";
import { ENDPOINT_SCHEMA, type EndpointInput } from "./endpoints";

/** A request body: an object whose unknown fields are dropped. */
function form(props: Record<string, unknown>) {
	return { type: "object", strict: "remove", messages: { required: "NotNull", object: "TypeMismatch" }, props };
}

export const DEFAULT_PHONE_REGION = env("DEFAULT_PHONE_REGION").toUpperCase() as CountryCode;

/** fastest-validator custom checker (new style): pushes a Phone violation for an invalid number. */
function phoneNumberCheck(value: unknown, errors: { type: string; actual?: unknown }[]): unknown {
	if (typeof value === "string" && value.trim() !== "") {
		const valid = value.trim().startsWith("+")
			? isValidPhoneNumber(value.trim())
			: isValidPhoneNumber(value.trim(), DEFAULT_PHONE_REGION);
		if (!valid) errors.push({ type: "phoneNumber", actual: value });
	}
	return value;
}

export const CONTACT_SCHEMA = {
	type: "object",
	strict: "remove",
	messages: { required: "NotNull", object: "TypeMismatch" },
	props: {
		name: rules.notEmptyString({ max: 255, messages: { stringMax: "Size" } }),
		email: { type: "email", max: 254, messages: { required: "NotNull", email: "Email", emailEmpty: "NotEmpty" } },
		phoneNumber: rules.notEmptyString({ max: 40, custom: phoneNumberCheck, messages: { phoneNumber: "Phone" } }),
	},
};

export const DOCUMENT_TYPE_FORM = form({
	title: rules.notEmptyString({ max: 1000 }),
	qualifiedIdentifier: rules.optionalString({ max: 1000 }),
	visible: rules.optionalBoolean(),
	processes: rules.optionalReferences(),
});

export const PROCESS_FORM = form({
	domain: rules.notNullString({ max: 1000 }),
	title: rules.optionalString({ max: 1000 }),
	alias: rules.optionalString({ max: 1000 }),
	qualifiedIdentifier: rules.optionalString({ max: 1000 }),
	restricted: rules.optionalBoolean(),
	visible: rules.optionalBoolean(),
	capabilities: rules.optionalReferences(),
	documentTypes: rules.optionalReferences(),
	dependencies: rules.optionalReferences(),
	requiredICDs: {
		type: "array",
		optional: true,
		nullable: true,
		items: { type: "string", pattern: /^\d{1,4}$/, messages: { stringPattern: "Pattern" } },
	},
});

export const ADD_PARTICIPANT_FORM = form({
	icd: rules.notNullString({ pattern: /^\d{1,4}$/, messages: { stringPattern: "Pattern" } }),
	organizationIdentifier: rules.notEmptyString({ max: 35, messages: { stringMax: "Size" } }),
	name: rules.optionalString({ max: 500 }),
	processes: rules.requiredReferences(),
	contact: CONTACT_SCHEMA,
});

/**
 * Update: contact and processes only. `deleteDate` (YYYY-MM-DD, or null to clear) is this
 * project's documented extension for scheduled removal (decisions §6).
 */
export const UPDATE_PARTICIPANT_FORM = form({
	processes: rules.requiredReferences(),
	contact: CONTACT_SCHEMA,
	deleteDate: rules.optionalString({ pattern: /^\d{4}-\d{2}-\d{2}$/, messages: { stringPattern: "Pattern" } }),
});

/**
 * Transfers (docs/decisions.md "Transfers", the registry's extension): start one with the
 * receiving provider and, optionally, the first day it may complete and how many days it stays open.
 */
export const START_TRANSFER_FORM = form({
	participant: rules.notEmptyString({ max: 1000 }),
	serviceProviderIdentifier: { type: "uuid", messages: { required: "NotNull", uuid: "Pattern" } },
	effectiveDate: rules.optionalString({ pattern: /^\d{4}-\d{2}-\d{2}$/, messages: { stringPattern: "Pattern" } }),
	validDays: {
		type: "number",
		integer: true,
		min: 1,
		max: 30,
		optional: true,
		nullable: true,
		messages: { numberMin: "Range", numberMax: "Range", numberInteger: "Range" },
	},
});

/** Complete a transfer: the key its sender was given. */
export const COMPLETE_TRANSFER_FORM = form({
	key: rules.notEmptyString({ max: 64, messages: { stringMax: "Size" } }),
});

export interface StartTransferForm {
	participant: string;
	serviceProviderIdentifier: string;
	effectiveDate?: string | null;
	validDays?: number | null;
}

/**
 * Start a process replacement job (docs/decisions.md "Bulk jobs"): for every participant holding
 * `from`, replace it with `to`; `dryRun` only computes the outcomes.
 */
export const PROCESS_REPLACEMENT_FORM = form({
	from: { type: "uuid", messages: { required: "NotNull", uuid: "Pattern" } },
	to: { type: "uuid", messages: { required: "NotNull", uuid: "Pattern" } },
	dryRun: { type: "boolean", optional: true, nullable: true },
});

export interface ProcessReplacementForm {
	from: string;
	to: string;
	dryRun?: boolean | null;
}

/** A process request body after PROCESS_FORM validated it; absent and null both mean "not sent". */
export interface ProcessForm {
	domain: string;
	title?: string | null;
	alias?: string | null;
	qualifiedIdentifier?: string | null;
	restricted?: boolean | null;
	visible?: boolean | null;
	capabilities?: Reference[] | null;
	documentTypes?: Reference[] | null;
	dependencies?: Reference[] | null;
	requiredICDs?: string[] | null;
}

export interface DocumentTypeForm {
	title: string;
	qualifiedIdentifier?: string | null;
	visible?: boolean | null;
	processes?: Reference[] | null;
}

/**
 * Accounts and service providers (docs/decisions.md "Accounts over HTTP", the registry's
 * extension): what an ADMIN sends to add an account, to set its password, to add a provider.
 * The operator CLI calls the same actions with the same bodies.
 */
export const ACCOUNT_FORM = form({
	username: rules.notEmptyString({ pattern: USERNAME_PATTERN, messages: { stringPattern: "Pattern" } }),
	password: rules.notEmptyString({
		min: MIN_PASSWORD_LENGTH,
		max: MAX_PASSWORD_LENGTH,
		messages: { stringMin: "Size", stringMax: "Size" },
	}),
	role: { type: "enum", values: ACCOUNT_ROLES, messages: { required: "NotNull", enumValue: "Pattern" } },
	serviceProvider: { type: "uuid", optional: true, nullable: true, messages: { uuid: "Pattern" } },
	accessPointProvider: { type: "uuid", optional: true, nullable: true, messages: { uuid: "Pattern" } },
});

export const PASSWORD_FORM = form({
	password: rules.notEmptyString({
		min: MIN_PASSWORD_LENGTH,
		max: MAX_PASSWORD_LENGTH,
		messages: { stringMin: "Size", stringMax: "Size" },
	}),
});

/** PUT /rest/api/accounts/{username}/oauth-client (decisions §15): the client that acts as the account; null clears it. */
export const OAUTH_CLIENT_FORM = form({
	oauthClientId: rules.notNullString({
		nullable: true,
		pattern: OAUTH_CLIENT_ID_PATTERN,
		messages: { stringPattern: "Pattern" },
	}),
});

export const SERVICE_PROVIDER_FORM = form({
	title: rules.notEmptyString({ max: 1000 }),
	identifier: { type: "uuid", optional: true, nullable: true, messages: { uuid: "Pattern" } },
});

/**
 * SMP publishing data (decisions §13, the registry's extension): an access point's endpoints,
 * replaced as a whole by its provider, and the access points a service provider's
 * participants receive through, replaced as a whole by ADMIN.
 */
export const ACCESS_POINT_ENDPOINTS_FORM = form({
	endpoints: { type: "array", items: ENDPOINT_SCHEMA, messages: { required: "NotNull" } },
});

export const SERVICE_PROVIDER_ACCESS_POINTS_FORM = form({
	accessPoints: rules.requiredReferences(),
});

export interface AccessPointEndpointsForm {
	endpoints: EndpointInput[];
}

export interface ServiceProviderAccessPointsForm {
	accessPoints: Reference[];
}

export interface AccountForm {
	username: string;
	password: string;
	role: AccountRole;
	serviceProvider?: string | null;
	accessPointProvider?: string | null;
}

export interface ServiceProviderForm {
	title: string;
	identifier?: string | null;
}

/**
 * The `pageRequest` parameter of a paged find (the gateway parses page, size and sort; decisions
 * §7): sort fields limited to the resource's sortable names.
 */
export function pageRequestRule(sortable: SortableNames) {
	return {
		type: "object",
		optional: true,
		default: () => ({ page: 0, size: DEFAULT_PAGE_SIZE, sort: [] }),
		props: {
			page: { type: "number", integer: true, min: 0 },
			size: { type: "number", integer: true, min: 1, max: MAX_PAGE_SIZE },
			sort: {
				type: "array",
				items: {
					type: "object",
					props: {
						field: { type: "enum", values: [...new Set(Object.values(sortable))] },
						direction: { type: "enum", values: ["asc", "desc"] },
					},
				},
			},
		},
	};
}
