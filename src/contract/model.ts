/**
 * Shapes of the resources as the spec shows them ("Resources and their fields"), and of
 * the caller every action receives in ctx.meta.user. Services store richer documents;
 * these are what clients see.
 */
import type { Endpoint } from "./endpoints";

export type Role = "SERVICE_PROVIDER" | "ACCESS_POINT_PROVIDER" | "ADMIN" | "NETWORK_AUTHORITY" | "ANONYMOUS";
export const ROLES: Role[] = ["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", "ADMIN", "NETWORK_AUTHORITY", "ANONYMOUS"];

/** The role an account has (never ANONYMOUS). */
export type AccountRole = Exclude<Role, "ANONYMOUS">;
export const ACCOUNT_ROLES: AccountRole[] = ["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", "ADMIN", "NETWORK_AUTHORITY"];
/** A Basic-auth user name cannot hold a colon (RFC 7617); whitespace would be invisible in a header. */
export const USERNAME_PATTERN = /^[^\s:]{1,100}$/;
export const MIN_PASSWORD_LENGTH = 12;
/** An OAuth client identifier (RFC 6749 Appendix A.1: visible ASCII), as a token's `client_id` or `sub` carries it. */
export const OAUTH_CLIENT_ID_PATTERN = /^[\x21-\x7E]{1,255}$/;
/** Longer "passwords" are not checked at all: scrypt would hash them, but nobody has one. */
export const MAX_PASSWORD_LENGTH = 1024;

/** An account as the operators (HTTP and CLI) see it: never its password hash. */
export interface AccountSummary {
	identifier: string;
	username: string;
	role: AccountRole;
	serviceProvider?: string;
	accessPointProvider?: string;
	/** The OAuth client (a token's `client_id`, else `sub`) that acts as this account (decisions §15). */
	oauthClientId?: string;
	disabled: boolean;
}

/** The caller's own account (GET /rest/api/account): its summary and the title of its service provider. */
export interface OwnAccount extends AccountSummary {
	serviceProviderTitle?: string;
}

/** The authenticated caller (ctx.meta.user); undefined for anonymous calls. Kept small: it travels with every call. */
export interface Caller {
	username: string;
	role: Exclude<Role, "ANONYMOUS">;
	/** SERVICE_PROVIDER accounts: the service provider's identifier. */
	serviceProvider?: string;
	/** ACCESS_POINT_PROVIDER accounts: the access point provider's identifier. */
	accessPointProvider?: string;
	/** Signed in with an OAuth access token (decisions §15) rather than Basic; audit records say so. */
	viaToken?: true;
}

/** Does the caller read every provider's records (decisions §4)? ADMIN and NETWORK_AUTHORITY do. */
export function seesEverything(caller: Caller | null | undefined): boolean {
	return caller?.role === "ADMIN" || caller?.role === "NETWORK_AUTHORITY";
}

export interface Contact {
	name: string;
	email: string;
	phoneNumber: string;
}

export interface Reference {
	identifier: string;
}

export interface Capability {
	identifier: string;
	title: string;
}

/** Document type as answered (spec "Document type"). */
export interface DocumentType {
	identifier: string;
	qualifiedIdentifier?: string;
	title: string;
	visible?: boolean;
	processes: ProcessSummary[];
}

/** A process as embedded in a document type (identifier, qualifiedIdentifier, title, visible, restricted). */
export interface ProcessSummary {
	identifier: string;
	qualifiedIdentifier?: string;
	title?: string;
	visible?: boolean;
	restricted?: boolean;
}

export interface DocumentTypeSummary {
	identifier: string;
	qualifiedIdentifier?: string;
	title: string;
	visible?: boolean;
}

/** Process as answered (spec "Process"). */
export interface Process {
	identifier: string;
	qualifiedIdentifier?: string;
	domain: string;
	title?: string;
	alias?: string;
	restricted: boolean;
	visible?: boolean;
	capabilities: Capability[];
	documentTypes: DocumentTypeSummary[];
	dependencies: ProcessSummary[];
	requiredICDs: string[];
}

export interface ServiceProvider {
	identifier: string;
	title: string;
	/** The access points its participants receive through (decisions §13); absent where only the name is shown. */
	accessPoints?: Reference[];
}

/** Participant as answered (spec "Participant"). */
export interface Participant {
	identifier: string;
	qualifiedIdentifier: string;
	icd: string;
	organizationIdentifier: string;
	name?: string;
	registrationDate: string;
	lastModificationDate: string;
	deleteDate?: string;
	contact: Contact;
	provider?: ServiceProvider;
	processes?: Process[];
}

export interface AccessPointProvider {
	identifier: string;
	title: string;
	contact: Contact;
}

export interface AccessPoint {
	identifier: string;
	title: string;
	provider: AccessPointProvider;
	endpoints: Endpoint[];
}
