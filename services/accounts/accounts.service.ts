/**
 * accounts: who may call the registry, with which role (decisions §3), and the service
 * providers that SERVICE_PROVIDER accounts act for. Owns the collections accounts,
 * serviceProviders and its audit outbox. Passwords are kept only as scrypt hashes
 * (src/platform/passwords.ts); audit records never carry them (src/platform/audit.ts redacts).
 *
 * The operator actions (addAccount, disableAccount, resetPassword, addServiceProvider,
 * listServiceProviders) are for the operator CLI; no HTTP operation reaches them.
 * Nothing here is cached: the gateway caches verified credentials itself and drops them on
 * `accounts.changed`.
 */
import { createHash } from "node:crypto";
import type { Service, ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { OutboxMixin, type OutboxThis } from "../../mixins/outbox.mixin";
import { DbMixin } from "../../mixins/db.mixin";
import { AUDIT_OUTBOX_MODEL, auditRecord, auditWrite, type AuditRecord } from "../../src/platform/audit";
import { NOTICE_OUTBOX_MODEL, NOTICES, noticeWrite } from "../../src/platform/notices";
import { Conflict, NotFound, ValidationFailed, violation, type Violation } from "../../src/contract/errors";
import type { Caller, ServiceProvider } from "../../src/contract/model";
import { hashPassword, prepareDummyHash, spendVerificationTime, verifyPassword } from "../../src/platform/passwords";
import { SeedRefused } from "../../src/exchange/seed";
import { ACCOUNT_ROLES, MIN_PASSWORD_LENGTH, USERNAME_PATTERN, type AccountRole, type AccountSeed, type ServiceProviderSeed } from "../../src/exchange/seed-file";
import { accountLinkReasons, referencesOutside, validateSeed } from "../../src/exchange/seed-validation";
import { planUpserts, type SeedCounts } from "../../src/exchange/upserts";
import type { Collection, ModelSpec, Store, StoredDoc, WriteOp } from "../../src/store/types";
import { DEFAULT_MESSAGES } from "../../src/contract/validation";
import { exportPageParams, keysetPage, linesOf, type AccountLine, type ExportPage, type ExportPageRequest } from "../../src/exchange/registry-export";
import { newRecordIdentifier } from "../../src/platform/record-identifier";

export interface AccountRecord extends StoredDoc {
	/** Case-sensitive, as the credential is. */
	username: string;
	role: AccountRole;
	serviceProvider?: string;
	accessPointProvider?: string;
	passwordHash: string;
	disabled: boolean;
}

export interface ServiceProviderRecord extends StoredDoc {
	title: string;
}

/** An account as the operator CLI shows it: never the hash. */
export interface AccountSummary {
	identifier: string;
	username: string;
	role: AccountRole;
	serviceProvider?: string;
	accessPointProvider?: string;
	disabled: boolean;
}

const USERNAME_INDEX = "username";

const ACCOUNT_MODEL: ModelSpec = {
	collection: "accounts",
	fields: {
		username: { kind: "string" },
		role: { kind: "string" },
		serviceProvider: { kind: "string" },
		accessPointProvider: { kind: "string" },
		disabled: { kind: "boolean" },
	},
	indexes: [
		{ name: USERNAME_INDEX, fields: ["username"], unique: true },
		{ name: "serviceProvider", fields: ["serviceProvider"] },
	],
};

const SERVICE_PROVIDER_MODEL: ModelSpec = {
	collection: "serviceProviders",
	fields: { title: { kind: "string", caseInsensitive: true } },
	indexes: [{ name: "title", fields: ["title"] }],
};

/** Longer "passwords" are not checked at all: scrypt would hash them, but nobody has one. */
const MAX_PASSWORD_LENGTH = 1024;

interface AccountCollections {
	accounts: Collection<AccountRecord>;
	serviceProviders: Collection<ServiceProviderRecord>;
}

interface AccountsService extends Service, OutboxThis {
	store: Store;
	collections: AccountCollections;
	linkViolations(ctx: RegistryContext<unknown>, account: AccountLinks): Promise<Violation[]>;
	write(ops: WriteOp[], changed: AccountsChanged[]): Promise<void>;
	existingAccount(username: string): Promise<AccountRecord>;
	changeAccount(ctx: RegistryContext<unknown>, operation: string, before: AccountRecord, after: AccountRecord): Promise<AccountSummary>;
}

type AccountLinks = Pick<AccountSeed, "role" | "serviceProvider" | "accessPointProvider">;
/** Payload of the `accounts.changed` notice (docs/internals.md "Notices"). */
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
	const { identifier, username, role, serviceProvider, accessPointProvider, disabled } = account;
	return { identifier, username, role, serviceProvider, accessPointProvider, disabled };
}

function accountLineOf(account: AccountRecord): AccountLine {
	const { username, passwordHash, role, serviceProvider, accessPointProvider, disabled } = account;
	return {
		username,
		passwordHash,
		role,
		...(serviceProvider ? { serviceProvider } : {}),
		...(accessPointProvider ? { accessPointProvider } : {}),
		disabled: disabled === true,
	};
}

function serviceProviderOf(record: ServiceProviderRecord): ServiceProvider {
	return { identifier: record.identifier, title: record.title };
}

/** The store owns `version`; writes carry the expected one separately. */
function withoutVersion<T extends StoredDoc>(record: T): T {
	const copy = { ...record };
	delete copy.version;
	return copy;
}

function audited(caller: Caller | null | undefined, operation: string, resource: AuditRecord["resource"], before: StoredDoc | null, after: StoredDoc | null): WriteOp {
	const image = (record: StoredDoc | null) => (record ? withoutVersion(record) : null);
	return auditWrite(auditRecord(caller, { operation, resource, resourceId: (after ?? before)?.identifier ?? "", before: image(before), after: image(after) }));
}

const USERNAME = { type: "string", pattern: USERNAME_PATTERN, messages: { stringPattern: "Pattern" } };
const PASSWORD = { type: "string", min: MIN_PASSWORD_LENGTH, max: MAX_PASSWORD_LENGTH, messages: { stringMin: "Size", stringMax: "Size" } };

type AccountSections = { serviceProviders?: ServiceProviderSeed[]; accounts?: AccountSeed[] };

const AccountsServiceSchema: ServiceSchema = {
	name: "accounts",
	mixins: [OutboxMixin(), DbMixin({ accounts: ACCOUNT_MODEL, serviceProviders: SERVICE_PROVIDER_MODEL, auditOutbox: AUDIT_OUTBOX_MODEL, noticeOutbox: NOTICE_OUTBOX_MODEL })],

	actions: {
		/** Never throws for wrong credentials; spends the same time whether the username exists or not. */
		authenticate: {
			visibility: "public",
			params: { username: "string", password: "string" },
			async handler(this: AccountsService, ctx: RegistryContext<{ username: string; password: string }>): Promise<Caller | null> {
				const { username, password } = ctx.params;
				const account = password.length <= MAX_PASSWORD_LENGTH ? await this.collections.accounts.findOne({ username }) : null;
				if (!account) return spendVerificationTime(password.slice(0, MAX_PASSWORD_LENGTH)).then(() => null);
				const verified = await verifyPassword(password, account.passwordHash);
				return verified && !account.disabled ? callerOf(account) : null;
			},
		},

		getServiceProvider: {
			visibility: "public",
			params: { identifier: "string" },
			async handler(this: AccountsService, ctx: RegistryContext<{ identifier: string }>): Promise<ServiceProvider | null> {
				const record = await this.collections.serviceProviders.get(ctx.params.identifier.toLowerCase());
				return record ? serviceProviderOf(record) : null;
			},
		},

		serviceProviders: {
			visibility: "public",
			params: { identifiers: { type: "array", items: "string" } },
			async handler(this: AccountsService, ctx: RegistryContext<{ identifiers: string[] }>): Promise<ServiceProvider[]> {
				const asked = ctx.params.identifiers.map((identifier) => identifier.toLowerCase());
				const found = new Map((await this.collections.serviceProviders.getMany([...new Set(asked)])).map((record) => [record.identifier, record]));
				return asked.flatMap((identifier) => (found.has(identifier) ? [serviceProviderOf(found.get(identifier) as ServiceProviderRecord)] : []));
			},
		},

		/**
		 * Upserts service providers by identifier and accounts by username, in one batch. A
		 * seed `password` that still matches keeps the stored hash (nothing to write); the
		 * `disabled` flag is the operator's and a seed never changes it.
		 */
		importSeed: {
			visibility: "public",
			params: { serviceProviders: { type: "array", optional: true }, accounts: { type: "array", optional: true } },
			async handler(this: AccountsService, ctx: RegistryContext<AccountSections>): Promise<Record<"serviceProviders" | "accounts", SeedCounts>> {
				const sections = { serviceProviders: ctx.params.serviceProviders ?? [], accounts: ctx.params.accounts ?? [] };
				const outside = referencesOutside(sections);
				const existing = {
					serviceProviders: (await this.collections.serviceProviders.getMany(outside.serviceProviders)).map((record) => record.identifier),
					accessPointProviders: outside.accessPointProviders.length
						? (await ctx.call<{ identifier: string }[], { identifiers: string[] }>("accessPoints.providers", { identifiers: outside.accessPointProviders })).map(
								(provider) => provider.identifier,
							)
						: [],
				};
				const reasons = validateSeed(sections, existing);
				if (reasons.length) throw new SeedRefused(reasons);

				const providers = sections.serviceProviders.map(({ identifier, title }) => ({ identifier: identifier.toLowerCase(), title }));
				const providerPlan = planUpserts(await this.collections.serviceProviders.getMany(providers.map((record) => record.identifier)), providers);
				const stored = await Promise.all(sections.accounts.map((account) => this.collections.accounts.findOne({ username: account.username })));
				const accounts = await Promise.all(sections.accounts.map((account, index) => seedAccountRecord(account, stored[index])));
				const accountPlan = planUpserts(
					stored.filter((record): record is AccountRecord => record !== null),
					accounts,
				);

				const caller = ctx.meta.user;
				await this.write(
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
					[...providerPlan.writes.map(({ after }) => ({ serviceProvider: after.identifier })), ...accountPlan.writes.map(({ after }) => ({ username: after.username }))],
				);
				return { serviceProviders: providerPlan.counts, accounts: accountPlan.counts };
			},
		},

		// ---- operator actions ---------------------------------------------------------

		addAccount: {
			visibility: "public",
			params: {
				username: USERNAME,
				password: PASSWORD,
				role: { type: "enum", values: ACCOUNT_ROLES },
				serviceProvider: { type: "uuid", optional: true },
				accessPointProvider: { type: "uuid", optional: true },
			},
			async handler(this: AccountsService, ctx: RegistryContext<AccountLinks & { username: string; password: string }>): Promise<AccountSummary> {
				const violations = await this.linkViolations(ctx, ctx.params);
				if (violations.length) throw new ValidationFailed(violations);
				const { username, password, role } = ctx.params;
				const account: AccountRecord = {
					identifier: accountIdentifier(username),
					username,
					role,
					serviceProvider: ctx.params.serviceProvider?.toLowerCase(),
					accessPointProvider: ctx.params.accessPointProvider?.toLowerCase(),
					passwordHash: await hashPassword(password),
					disabled: false,
				};
				try {
					await this.write([{ kind: "insert", collection: ACCOUNT_MODEL.collection, doc: account }, audited(ctx.meta.user, "addAccount", "account", null, account)], [{ username }]);
				} catch (error) {
					if ((error as { name?: string }).name === "DuplicateKey") throw new Conflict(`account ${username} already exists`);
					throw error;
				}
				return summaryOf(account);
			},
		},

		disableAccount: {
			visibility: "public",
			params: { username: "string" },
			async handler(this: AccountsService, ctx: RegistryContext<{ username: string }>): Promise<AccountSummary> {
				const before = await this.existingAccount(ctx.params.username);
				return this.changeAccount(ctx, "disableAccount", before, { ...before, disabled: true });
			},
		},

		resetPassword: {
			visibility: "public",
			params: { username: "string", password: PASSWORD },
			async handler(this: AccountsService, ctx: RegistryContext<{ username: string; password: string }>): Promise<AccountSummary> {
				const before = await this.existingAccount(ctx.params.username);
				return this.changeAccount(ctx, "resetPassword", before, { ...before, passwordHash: await hashPassword(ctx.params.password) });
			},
		},

		addServiceProvider: {
			visibility: "public",
			params: { title: { type: "string", empty: false, max: 1000 }, identifier: { type: "uuid", optional: true } },
			async handler(this: AccountsService, ctx: RegistryContext<{ title: string; identifier?: string }>): Promise<ServiceProvider> {
				const provider: ServiceProviderRecord = { identifier: ctx.params.identifier?.toLowerCase() ?? newRecordIdentifier(), title: ctx.params.title };
				try {
					await this.write(
						[{ kind: "insert", collection: SERVICE_PROVIDER_MODEL.collection, doc: provider }, audited(ctx.meta.user, "addServiceProvider", "serviceProvider", null, provider)],
						[{ serviceProvider: provider.identifier }],
					);
				} catch (error) {
					if ((error as { name?: string }).name === "DuplicateKey") throw new Conflict(`service provider ${provider.identifier} already exists`);
					throw error;
				}
				return serviceProviderOf(provider);
			},
		},

		listServiceProviders: {
			visibility: "public",
			async handler(this: AccountsService): Promise<ServiceProvider[]> {
				return (await this.collections.serviceProviders.find({ sort: [{ field: "title", direction: "asc" }] })).map(serviceProviderOf);
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

		/** Operator CLI `export`: one page by key of service providers or accounts (src/exchange/registry-export.ts); accounts with their hash. */
		exportRecords: {
			visibility: "public",
			params: exportPageParams(["serviceProvider", "account"]),
			async handler(this: AccountsService, ctx: RegistryContext<ExportPageRequest>): Promise<ExportPage> {
				if (ctx.params.type === "serviceProvider") {
					return linesOf(await keysetPage(this.collections.serviceProviders, ctx.params), (record) => ({ type: "serviceProvider", ...serviceProviderOf(record) }));
				}
				return linesOf(await keysetPage(this.collections.accounts, ctx.params), (record) => ({ type: "account", ...accountLineOf(record) }));
			},
		},
	},

	methods: {
		/** The role decides which provider an account names, and that provider must exist. */
		async linkViolations(this: AccountsService, ctx: RegistryContext<unknown>, account: AccountLinks): Promise<Violation[]> {
			const shape = accountLinkReasons(account).map(({ field, message }) =>
				violation(field, account[field as keyof AccountLinks] === undefined ? "NotNull" : "Null", message, account[field as keyof AccountLinks]),
			);
			if (shape.length) return shape;
			if (account.serviceProvider && !(await this.collections.serviceProviders.get(account.serviceProvider.toLowerCase()))) {
				return [violation("serviceProvider", "Exists", DEFAULT_MESSAGES.Exists, account.serviceProvider)];
			}
			if (account.accessPointProvider) {
				const found = await ctx.call<unknown[], { identifiers: string[] }>("accessPoints.providers", { identifiers: [account.accessPointProvider] });
				if (!found.length) return [violation("accessPointProvider", "Exists", DEFAULT_MESSAGES.Exists, account.accessPointProvider)];
			}
			return [];
		},

		async existingAccount(this: AccountsService, username: string): Promise<AccountRecord> {
			const account = await this.collections.accounts.findOne({ username });
			if (!account) throw NotFound.instance("account", username);
			return account;
		},

		async changeAccount(this: AccountsService, ctx: RegistryContext<unknown>, operation: string, before: AccountRecord, after: AccountRecord): Promise<AccountSummary> {
			await this.write(
				[{ kind: "replace", collection: ACCOUNT_MODEL.collection, doc: withoutVersion(after), expectedVersion: before.version }, audited(ctx.meta.user, operation, "account", before, after)],
				[{ username: after.username }],
			);
			return summaryOf(after);
		},

		/** One atomic batch (the change and its audit record), then the news for credential caches. */
		async write(this: AccountsService, ops: WriteOp[], changed: AccountsChanged[]): Promise<void> {
			if (!ops.length) return;
			// The notices are published before the request answers: gateways forget cached credentials.
			await this.writeAudited([...ops, ...changed.map((payload) => noticeWrite(NOTICES.accountsChanged, payload))]);
		},
	},

	async started() {
		// The first unknown-username check must not be measurably slower than the rest.
		await prepareDummyHash();
	},
};

/** The stored account a seed entry asks for; an unchanged password keeps its stored hash. */
async function seedAccountRecord(account: AccountSeed, stored: AccountRecord | null): Promise<AccountRecord> {
	const keepsHash = stored && account.password !== undefined && (await verifyPassword(account.password, stored.passwordHash));
	const passwordHash = account.passwordHash ?? (keepsHash && stored ? stored.passwordHash : await hashPassword(account.password as string));
	return {
		identifier: stored?.identifier ?? accountIdentifier(account.username),
		username: account.username,
		role: account.role,
		serviceProvider: account.serviceProvider?.toLowerCase(),
		accessPointProvider: account.accessPointProvider?.toLowerCase(),
		passwordHash,
		disabled: stored?.disabled ?? false,
	};
}

export default AccountsServiceSchema;
