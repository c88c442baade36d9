/**
 * accounts: who may call the registry, with which role (decisions §3), and the service
 * providers that SERVICE_PROVIDER accounts act for. Owns the collections accounts,
 * serviceProviders and its audit outbox. Passwords are kept only as scrypt hashes
 * (src/platform/passwords.ts); audit records never carry them (src/platform/audit.ts redacts).
 *
 * The operator actions (addAccount, disableAccount, resetPassword, addServiceProvider and the
 * finds) answer the ADMIN's HTTP operations (tag "Accounts") and the operator CLI alike.
 * Nothing here is cached: the gateway caches verified credentials itself and drops them on
 * `accounts.changed`.
 */
import { createHash } from "node:crypto";
import type { Service, ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { OutboxMixin, type OutboxThis } from "../../mixins/outbox.mixin";
import { DbMixin } from "../../mixins/db.mixin";
import { AUDIT_OUTBOX_MODEL, auditWrite, type AuditRecord } from "../../src/platform/audit";
import { EVENTS } from "../../src/platform/events";
import {
	AccessDenied,
	Conflict,
	NotFound,
	ValidationFailed,
	violation,
	type Violation,
} from "../../src/contract/errors";
import {
	MAX_PASSWORD_LENGTH,
	type AccountSummary,
	type Caller,
	type OwnAccount,
	type Reference,
	type ServiceProvider,
} from "../../src/contract/model";
import { SORTABLE } from "../../src/contract/operations";
import { pageOf, type Page, type PageRequest } from "../../src/contract/paging";
import {
	ACCOUNT_FORM,
	OAUTH_CLIENT_FORM,
	PASSWORD_FORM,
	SERVICE_PROVIDER_ACCESS_POINTS_FORM,
	SERVICE_PROVIDER_FORM,
	type AccountForm,
	type ServiceProviderAccessPointsForm,
	type ServiceProviderForm,
	pageRequestRule,
} from "../../src/contract/schemas";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";
import { isSignedAuthentication, isSignedClientResolution } from "../../src/platform/caller-signature";
import { hashPassword, prepareDummyHash, spendVerificationTime, verifyPassword } from "../../src/platform/passwords";
import { SeedRefused } from "../../src/exchange/seed";
import { type AccountRole, type AccountSeed, type ServiceProviderSeed } from "../../src/exchange/seed-file";
import { accountLinkReasons, referencesOutside, validateSeed } from "../../src/exchange/seed-validation";
import { planUpserts, type SeedCounts } from "../../src/exchange/upserts";
import type { Collection, Filter, ModelSpec, Store, StoredDoc, WriteOp } from "../../src/store/types";
import { DEFAULT_MESSAGES } from "../../src/contract/validation";
import {
	exportPageParams,
	keysetPage,
	linesOf,
	type AccountLine,
	type ExportPage,
	type ExportPageRequest,
} from "../../src/exchange/registry-export";
import { newRecordIdentifier } from "../../src/platform/record-identifier";

export interface AccountRecord extends StoredDoc {
	/** Case-sensitive, as the credential is. */
	username: string;
	role: AccountRole;
	serviceProvider?: string;
	accessPointProvider?: string;
	/** The OAuth client whose access tokens act as this account (decisions §15); unique. */
	oauthClientId?: string;
	passwordHash: string;
	disabled: boolean;
}

export interface ServiceProviderRecord extends StoredDoc {
	title: string;
	/** Identifiers of the access points its participants receive through (decisions §13); absent when none. */
	accessPoints?: string[];
}

export type { AccountSummary };

const USERNAME_INDEX = "username";
const OAUTH_CLIENT_INDEX = "oauthClientId";
/** Attempts of a change that meets a concurrent one (each re-reads the record). */
const MAX_WRITE_ATTEMPTS = 8;

const ACCOUNT_MODEL: ModelSpec = {
	collection: "accounts",
	fields: {
		username: { kind: "string" },
		role: { kind: "string" },
		serviceProvider: { kind: "string" },
		accessPointProvider: { kind: "string" },
		oauthClientId: { kind: "string" },
		disabled: { kind: "boolean" },
	},
	indexes: [
		{ name: USERNAME_INDEX, fields: ["username"], unique: true },
		{ name: OAUTH_CLIENT_INDEX, fields: ["oauthClientId"], unique: true },
		{ name: "serviceProvider", fields: ["serviceProvider"] },
	],
};

const SERVICE_PROVIDER_MODEL: ModelSpec = {
	collection: "serviceProviders",
	fields: { title: { kind: "string", caseInsensitive: true } },
	indexes: [{ name: "title", fields: ["title"] }],
};

interface AccountCollections {
	accounts: Collection<AccountRecord>;
	serviceProviders: Collection<ServiceProviderRecord>;
}

interface AccountsService extends Service, OutboxThis {
	store: Store;
	collections: AccountCollections;
	linkViolations(ctx: RegistryContext<unknown>, account: AccountLinks): Promise<Violation[]>;
	accessPointViolations(ctx: RegistryContext<unknown>, identifiers: string[]): Promise<Violation[]>;
	write(ops: WriteOp[], changed: AccountsChanged[]): Promise<void>;
	existingAccount(key: { username: string } | { identifier: string }): Promise<AccountRecord>;
	changeAccount(
		ctx: RegistryContext<unknown>,
		operation: string,
		before: AccountRecord,
		after: AccountRecord,
	): Promise<AccountSummary>;
}

type AccountLinks = Pick<AccountSeed, "role" | "serviceProvider" | "accessPointProvider">;
/** Payload of the `accounts.changed` event (src/platform/events.ts). */
type AccountsChanged = { username: string } | { serviceProvider: string };

/**
 * An account's identifier follows from its username (a version 8 UUID of a SHA-256), so that
 * nodes importing the same seed at the same time agree on it instead of racing on the
 * username index.
 */
export function accountIdentifier(username: string): string {
	const hex = createHash("sha256").update(`account\u0000${username}`).digest("hex");
	const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function callerOf(account: AccountRecord): Caller {
	return {
		username: account.username,
		role: account.role,
		...(account.serviceProvider ? { serviceProvider: account.serviceProvider } : {}),
		...(account.accessPointProvider ? { accessPointProvider: account.accessPointProvider } : {}),
	};
}

function summaryOf(account: AccountRecord): AccountSummary {
	const { identifier, username, role, serviceProvider, accessPointProvider, oauthClientId, disabled } = account;
	return { identifier, username, role, serviceProvider, accessPointProvider, oauthClientId, disabled };
}

function accountLineOf(account: AccountRecord): AccountLine {
	const { username, passwordHash, role, serviceProvider, accessPointProvider, oauthClientId, disabled } = account;
	return {
		username,
		passwordHash,
		role,
		...(serviceProvider ? { serviceProvider } : {}),
		...(accessPointProvider ? { accessPointProvider } : {}),
		...(oauthClientId ? { oauthClientId } : {}),
		disabled: disabled === true,
	};
}

function serviceProviderOf(record: ServiceProviderRecord): ServiceProvider {
	return {
		identifier: record.identifier,
		title: record.title,
		accessPoints: (record.accessPoints ?? []).map((identifier) => ({ identifier })),
	};
}

/** The stored list: lower case, absent when empty (so a seed without the field matches it). */
function accessPointIdentifiers(references: Reference[] | undefined): Pick<ServiceProviderRecord, "accessPoints"> {
	const identifiers = (references ?? []).map((reference) => reference.identifier.toLowerCase());
	return identifiers.length ? { accessPoints: identifiers } : {};
}

/** The store owns `version`; writes carry the expected one separately. */
function withoutVersion<T extends StoredDoc>(record: T): T {
	const copy = { ...record };
	delete copy.version;
	return copy;
}

function audited(
	caller: Caller | null | undefined,
	operation: string,
	resource: AuditRecord["resource"],
	before: StoredDoc | null,
	after: StoredDoc | null,
): WriteOp {
	const image = (record: StoredDoc | null) => (record ? withoutVersion(record) : null);
	return auditWrite(caller, {
		operation,
		resource,
		resourceId: (after ?? before)?.identifier ?? "",
		before: image(before),
		after: image(after),
	});
}

/** A paged find's `pageRequest` (the gateway parsed it; the CLI may leave it out). */
type AccountSections = { serviceProviders?: ServiceProviderSeed[]; accounts?: AccountSeed[] };

const AccountsServiceSchema: ServiceSchema = {
	name: "accounts",
	mixins: [
		OutboxMixin(),
		DbMixin({
			accounts: ACCOUNT_MODEL,
			serviceProviders: SERVICE_PROVIDER_MODEL,
			auditOutbox: AUDIT_OUTBOX_MODEL,
		}),
	],

	actions: {
		/**
		 * Never throws for wrong credentials; spends the same time whether the username exists or not.
		 * Answers a gateway only (its signature for the username): no other node may test passwords here.
		 */
		authenticate: {
			visibility: "public",
			params: { username: "string", password: "string" },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ username: string; password: string }>,
			): Promise<Caller | null> {
				const { username, password } = ctx.params;
				if (!isSignedAuthentication(this.broker, username, ctx.meta.authenticationSignature))
					throw new AccessDenied();
				const account =
					password.length <= MAX_PASSWORD_LENGTH
						? await this.collections.accounts.findOne({ username })
						: null;
				if (!account) return spendVerificationTime(password.slice(0, MAX_PASSWORD_LENGTH)).then(() => null);
				const verified = await verifyPassword(password, account.passwordHash);
				return verified && !account.disabled ? callerOf(account) : null;
			},
		},

		/**
		 * The caller an OAuth client acts as (decisions §15): the enabled account whose oauthClientId it is, else null.
		 * Answers a gateway only (its signature for the client), like authenticate.
		 */
		oauthClient: {
			visibility: "public",
			params: { clientId: "string" },
			async handler(this: AccountsService, ctx: RegistryContext<{ clientId: string }>): Promise<Caller | null> {
				const { clientId } = ctx.params;
				if (!isSignedClientResolution(this.broker, clientId, ctx.meta.authenticationSignature))
					throw new AccessDenied();
				const account = await this.collections.accounts.findOne({ oauthClientId: clientId });
				return account && !account.disabled ? callerOf(account) : null;
			},
		},

		getServiceProvider: {
			visibility: "public",
			params: { identifier: "string" },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ identifier: string }>,
			): Promise<ServiceProvider | null> {
				const record = await this.collections.serviceProviders.get(ctx.params.identifier.toLowerCase());
				return record ? serviceProviderOf(record) : null;
			},
		},

		/** The service providers asked for, in that order (unknown ones left out); all of them when none are named (the lookup's directory). */
		serviceProviders: {
			visibility: "public",
			params: { identifiers: { type: "array", items: "string", optional: true } },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ identifiers?: string[] }>,
			): Promise<ServiceProvider[]> {
				if (!ctx.params.identifiers) {
					const all: ServiceProvider[] = [];
					for await (const record of this.collections.serviceProviders.iterate({}))
						all.push(serviceProviderOf(record));
					return all;
				}
				const asked = ctx.params.identifiers.map((identifier) => identifier.toLowerCase());
				const found = new Map(
					(await this.collections.serviceProviders.getMany([...new Set(asked)])).map((record) => [
						record.identifier,
						record,
					]),
				);
				return asked.flatMap((identifier) =>
					found.has(identifier) ? [serviceProviderOf(found.get(identifier) as ServiceProviderRecord)] : [],
				);
			},
		},

		/**
		 * Upserts service providers by identifier and accounts by username, in one batch. A
		 * seed `password` that still matches keeps the stored hash (nothing to write); the
		 * `disabled` flag is the operator's and a seed never changes it.
		 */
		importSeed: {
			visibility: "public",
			params: {
				serviceProviders: { type: "array", optional: true },
				accounts: { type: "array", optional: true },
			},
			async handler(
				this: AccountsService,
				ctx: RegistryContext<AccountSections>,
			): Promise<Record<"serviceProviders" | "accounts", SeedCounts>> {
				const sections = {
					serviceProviders: ctx.params.serviceProviders ?? [],
					accounts: ctx.params.accounts ?? [],
				};
				const outside = referencesOutside(sections);
				const existing = {
					serviceProviders: (await this.collections.serviceProviders.getMany(outside.serviceProviders)).map(
						(record) => record.identifier,
					),
					accessPointProviders: outside.accessPointProviders.length
						? (
								await ctx.call<{ identifier: string }[], { identifiers: string[] }>(
									"accessPoints.providers",
									{ identifiers: outside.accessPointProviders },
								)
							).map((provider) => provider.identifier)
						: [],
					accessPoints: outside.accessPoints.length
						? await ctx.call<string[], { identifiers: string[] }>("accessPoints.knownIdentifiers", {
								identifiers: outside.accessPoints,
							})
						: [],
				};
				const reasons = validateSeed(sections, existing);
				if (reasons.length) throw new SeedRefused(reasons);

				const providers = sections.serviceProviders.map(
					({ identifier, title, accessPoints }): ServiceProviderRecord => ({
						identifier: identifier.toLowerCase(),
						title,
						...accessPointIdentifiers(accessPoints),
					}),
				);
				const providerPlan = planUpserts(
					await this.collections.serviceProviders.getMany(providers.map((record) => record.identifier)),
					providers,
				);
				const stored = await Promise.all(
					sections.accounts.map((account) =>
						this.collections.accounts.findOne({ username: account.username }),
					),
				);
				const accounts = await Promise.all(
					sections.accounts.map((account, index) => seedAccountRecord(account, stored[index])),
				);
				const accountPlan = planUpserts(
					stored.filter((record): record is AccountRecord => record !== null),
					accounts,
				);

				const caller = ctx.meta.user;
				const written = this.write(
					[
						...providerPlan.writes.flatMap(({ before, after }): WriteOp[] => [
							{ kind: "upsert", collection: SERVICE_PROVIDER_MODEL.collection, doc: after },
							audited(caller, "seed", "serviceProvider", before, after),
						]),
						...accountPlan.writes.flatMap(({ before, after }): WriteOp[] => [
							{ kind: "upsert", collection: ACCOUNT_MODEL.collection, doc: after },
							audited(caller, "seed", "account", before, after),
						]),
					],
					[
						...providerPlan.writes.map(({ after }) => ({ serviceProvider: after.identifier })),
						...accountPlan.writes.map(({ after }) => ({ username: after.username })),
					],
				);
				await written.catch((error: unknown) => {
					if (isDuplicateKey(error) && error.index === OAUTH_CLIENT_INDEX)
						throw new SeedRefused([
							{
								path: "accounts",
								message: "an oauthClientId acts as another account of the registry already",
							},
						]);
					throw error;
				});
				return { serviceProviders: providerPlan.counts, accounts: accountPlan.counts };
			},
		},

		// ---- the caller's own account, and the operators' actions ----------------------
		// The HTTP operations (src/contract/operations.ts, tag "Accounts") and the operator CLI
		// call these same actions with the same parameters: one way to change an account.

		/** GET /rest/api/account: who the caller is (the console learns its role and provider here). */
		getOwnAccount: {
			async handler(this: AccountsService, ctx: RegistryContext<unknown>): Promise<OwnAccount> {
				const caller = ctx.meta.user;
				if (!caller) throw new AccessDenied();
				const account = await this.existingAccount({ username: caller.username });
				const provider = account.serviceProvider
					? await this.collections.serviceProviders.get(account.serviceProvider)
					: null;
				return { ...summaryOf(account), ...(provider ? { serviceProviderTitle: provider.title } : {}) };
			},
		},

		findAccounts: {
			params: { pageRequest: pageRequestRule(SORTABLE.accounts), role: { type: "string", optional: true } },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ pageRequest: PageRequest; role?: string }>,
			): Promise<Page<AccountSummary>> {
				const { page, size, sort } = ctx.params.pageRequest;
				const filter: Filter = ctx.params.role ? { role: ctx.params.role } : {};
				const [records, total] = await Promise.all([
					this.collections.accounts.find({ filter, sort, offset: page * size, limit: size }),
					this.collections.accounts.count({ filter }),
				]);
				return pageOf(records.map(summaryOf), total, ctx.params.pageRequest);
			},
		},

		getAccount: {
			params: { identifier: "uuid" },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ identifier: string }>,
			): Promise<AccountSummary> {
				return summaryOf(await this.existingAccount({ identifier: ctx.params.identifier.toLowerCase() }));
			},
		},

		addAccount: {
			params: { body: ACCOUNT_FORM },
			async handler(this: AccountsService, ctx: RegistryContext<{ body: AccountForm }>): Promise<AccountSummary> {
				const { username, password, role } = ctx.params.body;
				const links: AccountLinks = {
					role,
					serviceProvider: ctx.params.body.serviceProvider ?? undefined,
					accessPointProvider: ctx.params.body.accessPointProvider ?? undefined,
				};
				const violations = await this.linkViolations(ctx, links);
				if (violations.length) throw new ValidationFailed(violations);
				const account: AccountRecord = {
					identifier: accountIdentifier(username),
					username,
					role,
					serviceProvider: links.serviceProvider?.toLowerCase(),
					accessPointProvider: links.accessPointProvider?.toLowerCase(),
					passwordHash: await hashPassword(password),
					disabled: false,
				};
				try {
					await this.write(
						[
							{ kind: "insert", collection: ACCOUNT_MODEL.collection, doc: account },
							audited(ctx.meta.user, "addAccount", "account", null, account),
						],
						[{ username }],
					);
				} catch (error) {
					if (isDuplicateKey(error)) throw new Conflict(`account ${username} already exists`);
					throw error;
				}
				return summaryOf(account);
			},
		},

		disableAccount: {
			params: { identifier: "uuid" },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ identifier: string }>,
			): Promise<AccountSummary> {
				const before = await this.existingAccount({ identifier: ctx.params.identifier.toLowerCase() });
				return this.changeAccount(ctx, "disableAccount", before, { ...before, disabled: true });
			},
		},

		resetPassword: {
			params: { identifier: "uuid", body: PASSWORD_FORM },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ identifier: string; body: { password: string } }>,
			): Promise<AccountSummary> {
				const before = await this.existingAccount({ identifier: ctx.params.identifier.toLowerCase() });
				return this.changeAccount(ctx, "resetPassword", before, {
					...before,
					passwordHash: await hashPassword(ctx.params.body.password),
				});
			},
		},

		/** PUT /rest/api/accounts/{username}/oauth-client (decisions §15): null clears; another account's client is 409. */
		setOAuthClient: {
			params: { username: "string", body: OAUTH_CLIENT_FORM },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ username: string; body: { oauthClientId: string | null } }>,
			): Promise<AccountSummary> {
				const before = await this.existingAccount({ username: ctx.params.username });
				const oauthClientId = ctx.params.body.oauthClientId ?? undefined;
				if (before.oauthClientId === oauthClientId) return summaryOf(before);
				const after: AccountRecord = { ...before, oauthClientId };
				if (oauthClientId === undefined) delete after.oauthClientId;
				try {
					return await this.changeAccount(ctx, "setOAuthClient", before, after);
				} catch (error) {
					if (isDuplicateKey(error))
						throw new Conflict(`OAuth client ${oauthClientId} acts as another account already`);
					throw error;
				}
			},
		},

		findServiceProviders: {
			params: { pageRequest: pageRequestRule(SORTABLE.serviceProviders) },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ pageRequest: PageRequest }>,
			): Promise<Page<ServiceProvider>> {
				const { page, size, sort } = ctx.params.pageRequest;
				const [records, total] = await Promise.all([
					this.collections.serviceProviders.find({ sort, offset: page * size, limit: size }),
					this.collections.serviceProviders.count(),
				]);
				return pageOf(records.map(serviceProviderOf), total, ctx.params.pageRequest);
			},
		},

		/** GET /rest/api/service-providers/{identifier}: 404 when absent (getServiceProvider answers null, for the other services). */
		getServiceProviderRecord: {
			params: { identifier: "uuid" },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ identifier: string }>,
			): Promise<ServiceProvider> {
				const record = await this.collections.serviceProviders.get(ctx.params.identifier.toLowerCase());
				if (!record) throw NotFound.instance("service provider", ctx.params.identifier);
				return serviceProviderOf(record);
			},
		},

		addServiceProvider: {
			params: { body: SERVICE_PROVIDER_FORM },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ body: ServiceProviderForm }>,
			): Promise<ServiceProvider> {
				const provider: ServiceProviderRecord = {
					identifier: ctx.params.body.identifier?.toLowerCase() ?? newRecordIdentifier(),
					title: ctx.params.body.title,
				};
				try {
					await this.write(
						[
							{ kind: "insert", collection: SERVICE_PROVIDER_MODEL.collection, doc: provider },
							audited(ctx.meta.user, "addServiceProvider", "serviceProvider", null, provider),
						],
						[{ serviceProvider: provider.identifier }],
					);
				} catch (error) {
					if (isDuplicateKey(error))
						throw new Conflict(`service provider ${provider.identifier} already exists`);
					throw error;
				}
				return serviceProviderOf(provider);
			},
		},

		/**
		 * PUT /rest/api/service-providers/{identifier}/access-points (ADMIN): replaces the access
		 * points the provider's participants receive through, which SMP answers publish for them.
		 */
		setServiceProviderAccessPoints: {
			params: { identifier: "uuid", body: SERVICE_PROVIDER_ACCESS_POINTS_FORM },
			async handler(
				this: AccountsService,
				ctx: RegistryContext<{ identifier: string; body: ServiceProviderAccessPointsForm }>,
			): Promise<ServiceProvider> {
				const identifier = ctx.params.identifier.toLowerCase();
				const wanted = ctx.params.body.accessPoints.map((reference) => reference.identifier.toLowerCase());
				for (let attempt = 1; ; attempt++) {
					const before = await this.collections.serviceProviders.get(identifier);
					if (!before) throw NotFound.instance("service provider", ctx.params.identifier);
					const violations = await this.accessPointViolations(
						ctx,
						ctx.params.body.accessPoints.map((reference) => reference.identifier),
					);
					if (violations.length) throw new ValidationFailed(violations);
					const after: ServiceProviderRecord = {
						...withoutVersion(before),
						...accessPointIdentifiers(ctx.params.body.accessPoints),
					};
					if (wanted.length === 0) delete after.accessPoints;
					try {
						await this.write(
							[
								{
									kind: "replace",
									collection: SERVICE_PROVIDER_MODEL.collection,
									doc: after,
									expectedVersion: before.version,
								},
								audited(
									ctx.meta.user,
									"setServiceProviderAccessPoints",
									"serviceProvider",
									before,
									after,
								),
							],
							[{ serviceProvider: identifier }],
						);
					} catch (error) {
						// The list is replaced whole: against a concurrent change the last writer wins, as with any PUT.
						if (isStaleVersion(error) && attempt < MAX_WRITE_ATTEMPTS) continue;
						if (isStaleVersion(error))
							throw new Conflict(`service provider ${identifier} is being changed; retry`);
						throw error;
					}
					return serviceProviderOf(after);
				}
			},
		},

		/** Operator CLI `service-providers list`: every provider by title. */
		listServiceProviders: {
			visibility: "public",
			async handler(this: AccountsService): Promise<ServiceProvider[]> {
				return (
					await this.collections.serviceProviders.find({ sort: [{ field: "title", direction: "asc" }] })
				).map(serviceProviderOf);
			},
		},

		/** Operator CLI `accounts list`: every account by username, never a hash. */
		listAccounts: {
			visibility: "public",
			async handler(this: AccountsService): Promise<AccountSummary[]> {
				const accounts = (await this.collections.accounts.find({})).map(summaryOf);
				return accounts.sort((a, b) => (a.username < b.username ? -1 : a.username > b.username ? 1 : 0));
			},
		},

		/**
		 * Operator CLI `export`: one page by key of service providers or accounts (src/exchange/registry-export.ts);
		 * accounts with their hash, so for a signed ADMIN only (src/platform/permissions.ts), such as the CLI's operator.
		 */
		exportRecords: {
			visibility: "public",
			roles: ["ADMIN"],
			params: exportPageParams(["serviceProvider", "account"]),
			async handler(this: AccountsService, ctx: RegistryContext<ExportPageRequest>): Promise<ExportPage> {
				if (ctx.params.type === "serviceProvider") {
					return linesOf(await keysetPage(this.collections.serviceProviders, ctx.params), (record) => ({
						type: "serviceProvider",
						...serviceProviderOf(record),
					}));
				}
				return linesOf(await keysetPage(this.collections.accounts, ctx.params), (record) => ({
					type: "account",
					...accountLineOf(record),
				}));
			},
		},
	},

	methods: {
		/** The role decides which provider an account names, and that provider must exist. */
		async linkViolations(
			this: AccountsService,
			ctx: RegistryContext<unknown>,
			account: AccountLinks,
		): Promise<Violation[]> {
			const shape = accountLinkReasons(account).map(({ field, message }) =>
				violation(
					field,
					account[field as keyof AccountLinks] === undefined ? "NotNull" : "Null",
					message,
					account[field as keyof AccountLinks],
				),
			);
			if (shape.length) return shape;
			if (
				account.serviceProvider &&
				!(await this.collections.serviceProviders.get(account.serviceProvider.toLowerCase()))
			) {
				return [violation("serviceProvider", "Exists", DEFAULT_MESSAGES.Exists, account.serviceProvider)];
			}
			if (account.accessPointProvider) {
				const found = await ctx.call<unknown[], { identifiers: string[] }>("accessPoints.providers", {
					identifiers: [account.accessPointProvider],
				});
				if (!found.length)
					return [
						violation(
							"accessPointProvider",
							"Exists",
							DEFAULT_MESSAGES.Exists,
							account.accessPointProvider,
						),
					];
			}
			return [];
		},

		/** Each access point named once (`Unique`) and known to the accessPoints service (`Exists`). */
		async accessPointViolations(
			this: AccountsService,
			ctx: RegistryContext<unknown>,
			identifiers: string[],
		): Promise<Violation[]> {
			const known = new Set(
				identifiers.length
					? await ctx.call<string[], { identifiers: string[] }>("accessPoints.knownIdentifiers", {
							identifiers,
						})
					: [],
			);
			const seen = new Set<string>();
			// UUIDs compare in any case; the rejected value is the one sent.
			return identifiers.flatMap((sent, index) => {
				const identifier = sent.toLowerCase();
				const field = `accessPoints[${index}].identifier`;
				if (seen.has(identifier)) return [violation(field, "Unique", DEFAULT_MESSAGES.Unique, sent)];
				seen.add(identifier);
				return known.has(identifier) ? [] : [violation(field, "Exists", DEFAULT_MESSAGES.Exists, sent)];
			});
		},

		async existingAccount(
			this: AccountsService,
			key: { username: string } | { identifier: string },
		): Promise<AccountRecord> {
			const account =
				"username" in key
					? await this.collections.accounts.findOne({ username: key.username })
					: await this.collections.accounts.get(key.identifier);
			if (!account) throw NotFound.instance("account", "username" in key ? key.username : key.identifier);
			return account;
		},

		async changeAccount(
			this: AccountsService,
			ctx: RegistryContext<unknown>,
			operation: string,
			before: AccountRecord,
			after: AccountRecord,
		): Promise<AccountSummary> {
			await this.write(
				[
					{
						kind: "replace",
						collection: ACCOUNT_MODEL.collection,
						doc: withoutVersion(after),
						expectedVersion: before.version,
					},
					audited(ctx.meta.user, operation, "account", before, after),
				],
				[{ username: after.username }],
			);
			return summaryOf(after);
		},

		/** One atomic batch (the change and its audit record), then the event for credential caches. */
		async write(this: AccountsService, ops: WriteOp[], changed: AccountsChanged[]): Promise<void> {
			if (!ops.length) return;
			// Sent before the request answers: gateways forget cached credentials.
			await this.writeAudited(
				ops,
				changed.map((payload) => ({ name: EVENTS.accountsChanged, payload })),
			);
		},
	},

	async started() {
		// The first unknown-username check must not be measurably slower than the rest.
		await prepareDummyHash();
	},
};

/** The stored account a seed entry asks for; an unchanged password keeps its stored hash. */
async function seedAccountRecord(account: AccountSeed, stored: AccountRecord | null): Promise<AccountRecord> {
	const keepsHash =
		stored && account.password !== undefined && (await verifyPassword(account.password, stored.passwordHash));
	const passwordHash =
		account.passwordHash ??
		(keepsHash && stored ? stored.passwordHash : await hashPassword(account.password as string));
	return {
		identifier: stored?.identifier ?? accountIdentifier(account.username),
		username: account.username,
		role: account.role,
		serviceProvider: account.serviceProvider?.toLowerCase(),
		accessPointProvider: account.accessPointProvider?.toLowerCase(),
		// Left out: as it is; null: cleared (decisions §15).
		...(account.oauthClientId === undefined
			? stored?.oauthClientId !== undefined && { oauthClientId: stored.oauthClientId }
			: account.oauthClientId !== null && { oauthClientId: account.oauthClientId }),
		passwordHash,
		disabled: stored?.disabled ?? false,
	};
}

export default AccountsServiceSchema;
