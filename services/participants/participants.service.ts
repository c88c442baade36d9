/**
 * Participants (spec "Participants", decisions §4–§7): an organization's customer relation
 * with one service provider. Owns `participants`, `processClaims` and `auditOutbox`.
 *
 * Every change is one store batch: the participant, the process claims that make "one
 * provider per organization and process" a store rule, and the audit record. Uniqueness
 * is decided by unique keys inside that batch, never by a read before the write; changes
 * to an existing participant carry its version, so concurrent ones serialize or retry.
 * A committed change is announced on the durable channel `registry.participants.changed`
 * and, when the lookup runs in this process, applied to it before the request answers. The
 * batch also holds the change in an outbox until it is published; a relay retries the rest.
 */
import type { Context, Service, ServiceSchema } from "moleculer";
import { envNumber } from "../../src/config/settings";
import { OutboxMixin, type OutboxThis } from "../../mixins/outbox.mixin";
import { DbMixin } from "../../mixins/db.mixin";
import { auditRecord, auditWrite, type AuditRecord } from "../../src/platform/audit";
import { PARTICIPANTS_CHANGED, publishParticipantChange, type ParticipantChange } from "../../src/platform/channels";
import { NOTICES, NOTICES_RESET, noticesOf } from "../../src/platform/notices";
import { isActionAvailable } from "../../src/platform/broker";
import { BadRequest, Conflict, NotFound, TypeMismatch, ValidationFailed, type Violation } from "../../src/contract/errors";
import { DuplicateKey, StaleVersion } from "../../src/store/errors";
import { organizationKey, parseParticipantIdentifier, participantQualifiedIdentifier } from "../../src/contract/identifiers";
import { OutboxRelay } from "../../src/platform/outbox-relay";
import type { Caller, Contact, Participant, Process, Reference, ServiceProvider } from "../../src/contract/model";
import { DEFAULT_PAGE_SIZE, pageOf, type Page, type PageRequest } from "../../src/contract/paging";
import { deleteDateViolations, isDue, organizationViolations, processChanges, processViolations, readParticipantQuery, type ProcessFacts } from "./rules";
import { calendarDate } from "../../src/contract/dates";
import { ADD_PARTICIPANT_FORM, UPDATE_PARTICIPANT_FORM } from "../../src/contract/schemas";
import { SeedRefused, type SeedReason } from "../../src/exchange/seed";
import type { Collection, Filter, Query, Store, StoredDoc, WriteOp } from "../../src/store/types";
import { participantAnswer, processesOf } from "./answers";
import { KeyedMutex } from "../../src/platform/keyed-mutex";
import { exportPage, exportStream, importRecords, IMPORT_RECORDS_PARAMS, type ImportResult } from "./export-import";
import { exportPageParams, type ExportPage, type ExportPageRequest, type ImportedParticipant } from "../../src/exchange/registry-export";
import { RegistryError } from "../../src/contract/errors";
import type { Readable } from "node:stream";
import { claimDoc, claimIdentifier, PARTICIPANT_MODELS, type ChangeOutboxDoc, type ParticipantDoc, type ProcessClaimDoc } from "./model";
import { canDelete, canRead, readScope, requireServiceProvider, serviceProviderOf } from "./ownership";
import { ReadAnswers } from "./read-answers";
import { CachedResolver } from "./resolver";
import { newRecordIdentifier } from "../../src/platform/record-identifier";

interface Settings {
	/** How often the sweeper removes participants whose deleteDate has arrived (0: never). */
	sweepIntervalMs: number;
	/** Attempts of a change that lost an optimistic version race before it answers 409. */
	maxWriteAttempts: number;
	/** How often unpublished changes are published again (0: never). */
	relayIntervalMs: number;
	/** A change still in the outbox after this long is the relay's to publish. */
	relayAfterMs: number;
	/** Read answers held for the gateway's short path (~0.8 KB of RSS each; 0: none), on the embedded store only. */
	heldReadAnswers: number;
	/** How long a change's apply on a lookup of another process may take before the channel is left to bring it. */
	lookupApplyTimeoutMs: number;
}

interface Meta {
	user?: Caller | null;
}

interface AddForm {
	icd: string;
	organizationIdentifier: string;
	name?: string | null;
	processes: Reference[];
	contact: Contact;
}

interface UpdateForm {
	processes: Reference[];
	contact: Contact;
	deleteDate?: string | null;
}

/** A participant path value, as the gateway passes it (docs/internals.md). */
interface Address {
	identifier?: string;
	qualifiedIdentifier?: string;
}

type Purpose = "read" | "write" | "delete";

/** What the process rules are checked against (decisions §6). */
interface ProcessCheck {
	icd: string;
	organizationKey: string;
	requested: string[];
	/** Processes the participant holds now (empty for a new one). */
	current: string[];
	/** The participant itself, excluded from "other participants of the organization". */
	self: string | null;
	/** Processes held by the organization's other participants, when the caller knows them already. */
	heldElsewhere?: Set<string>;
}

interface SeedParticipant extends AddForm {
	serviceProvider: string;
	identifier?: string;
}

/** A seed section with what the store and accounts already hold for it. */
interface SeedContext {
	/** Rows with the service provider identifier lower-cased. */
	rows: SeedParticipant[];
	/** Organization key of each row. */
	keys: string[];
	/** Stored participants of the organizations the rows name. */
	existing: ParticipantDoc[];
	knownProviders: Set<string>;
}

type SeedRowOutcome = { reasons: SeedReason[] } | { result: "created" | "updated" | "unchanged"; change?: PlannedChange };

/** One participant change: the writes of its batch and what is announced once it committed. */
interface PlannedChange {
	ops: WriteOp[];
	change: ParticipantChange;
	/** The change's outbox document, removed once published. */
	outboxId: string;
	before: ParticipantDoc | null;
	after: ParticipantDoc | null;
}

interface ParticipantsThis extends Service<Settings>, OutboxThis {
	store: Store;
	collections: {
		participants: Collection<ParticipantDoc>;
		processClaims: Collection<ProcessClaimDoc>;
		auditOutbox: Collection<AuditRecord & StoredDoc>;
		changeOutbox: Collection<ChangeOutboxDoc>;
	};
	processResolver: CachedResolver<Process>;
	providerResolver: CachedResolver<ServiceProvider>;
	/** Finished answers of service providers' reads by qualified identifier, for the gateway's short path. */
	readAnswers: ReadAnswers;
	holdsReadAnswers(): boolean;
	heldReadAnswer(caller: Caller, organizationKey: string): Buffer | undefined;
	mutex: KeyedMutex;
	sweepTimer?: NodeJS.Timeout;
	relayTimer?: NodeJS.Timeout;
	/** Publishes what stayed in the change outbox (src/platform/outbox-relay.ts). */
	changeRelay: OutboxRelay<ChangeOutboxDoc>;
	/** Background runs in progress, awaited on stop so none meets a closed store. */
	running: Set<Promise<unknown>>;

	addressed(caller: Caller | null | undefined, address: Address, purpose: Purpose): Promise<ParticipantDoc>;
	changeAddressed<T>(ctx: Context<Address, Meta>, purpose: Purpose, work: (before: ParticipantDoc) => Promise<T>): Promise<T>;
	withRetries<T>(attempt: () => Promise<T>): Promise<T>;
	checkProcesses(input: ProcessCheck): Promise<Violation[]>;
	heldByOthers(organizationKey: string, self: string | null): Promise<Set<string>>;
	newParticipant(serviceProvider: string, form: AddForm, identifier?: string): Promise<ParticipantDoc>;
	plan(caller: Caller | null, operation: string, before: ParticipantDoc | null, after: ParticipantDoc | null): PlannedChange;
	commit(ctx: Context<unknown, Meta> | null, changes: PlannedChange[]): Promise<void>;
	writeConflict(error: unknown, changes: PlannedChange[]): Promise<unknown>;
	announce(ctx: Context<unknown, Meta> | null, planned: PlannedChange): Promise<void>;
	deliver(ctx: Context<unknown, Meta> | null, change: ParticipantChange): Promise<void>;
	applyToLookup(ctx: Context<unknown, Meta> | null, change: ParticipantChange): Promise<void>;
	relay(olderThanMs: number): Promise<number>;
	every(interval: number, task: () => Promise<number>, name: string): NodeJS.Timeout | undefined;
	answers(docs: ParticipantDoc[], withProcesses: boolean): Promise<Participant[]>;
	singleAnswer(doc: ParticipantDoc): Promise<Participant>;
	storeQuery(scope: Filter, text: string | undefined): Promise<Pick<Query, "filter" | "words">>;
	sweep(today: string): Promise<number>;
	importSeedParticipants(ctx: Context<{ participants: SeedParticipant[] }, Meta>): Promise<{ created: number; updated: number; unchanged: number }>;
	seedContext(ctx: Context<{ participants: SeedParticipant[] }, Meta>): Promise<SeedContext>;
	seedRow(caller: Caller | null, seed: SeedContext, index: number): Promise<SeedRowOutcome>;
}

const ADDRESS_PARAMS = {
	identifier: { type: "string", optional: true },
	qualifiedIdentifier: { type: "string", optional: true },
};

const FIND_PARAMS = {
	query: { type: "string", optional: true },
	processes: { type: "boolean", optional: true, convert: true },
};

const SEED_PARTICIPANT = {
	...ADD_PARTICIPANT_FORM,
	props: { ...ADD_PARTICIPANT_FORM.props, serviceProvider: { type: "uuid" }, identifier: { type: "uuid", optional: true } },
};

function requestedIdentifiers(processes: Reference[]): string[] {
	return processes.map((process) => process.identifier.toLowerCase());
}

function factsOf(process: Process): ProcessFacts {
	return {
		identifier: process.identifier,
		restricted: process.restricted === true,
		requiredICDs: process.requiredICDs ?? [],
		dependencies: process.dependencies ?? [],
	};
}

function isStale(error: unknown): boolean {
	return error instanceof StaleVersion || (error as { name?: string })?.name === "StaleVersion";
}

function isDuplicate(error: unknown): error is DuplicateKey {
	return error instanceof DuplicateKey || (error as { name?: string })?.name === "DuplicateKey";
}

function todayUtc(): string {
	return calendarDate(new Date());
}

/**
 * What the organization's other participants will hold once the seed is imported: a row of
 * the file replaces the stored participant of the same provider.
 */
function seedHoldingsOfOthers(seed: SeedContext, index: number): Set<string> {
	const { rows, keys, existing } = seed;
	const key = keys[index];
	const self = rows[index].serviceProvider;
	const fromFile = rows.filter((row, at) => keys[at] === key && row.serviceProvider !== self);
	const replaced = new Set(fromFile.map((row) => row.serviceProvider));
	const stored = existing.filter((doc) => doc.organizationKey === key && doc.serviceProvider !== self && !replaced.has(doc.serviceProvider));
	return new Set([...fromFile.flatMap((row) => requestedIdentifiers(row.processes)), ...stored.flatMap((doc) => doc.processIds)]);
}

function seedParticipant(row: SeedParticipant, key: string, now: string): ParticipantDoc {
	return {
		identifier: row.identifier?.toLowerCase() ?? newRecordIdentifier(),
		icd: row.icd,
		organizationIdentifier: row.organizationIdentifier,
		organizationKey: key,
		qualifiedIdentifier: participantQualifiedIdentifier(row.icd, row.organizationIdentifier),
		name: row.name ?? null,
		contact: row.contact,
		processIds: requestedIdentifiers(row.processes),
		serviceProvider: row.serviceProvider,
		registrationDate: now,
		lastModificationDate: now,
		deleteDate: null,
	};
}

function sameContent(doc: ParticipantDoc, next: ParticipantDoc): boolean {
	return (
		doc.name === next.name &&
		JSON.stringify(doc.contact) === JSON.stringify(next.contact) &&
		JSON.stringify(doc.processIds) === JSON.stringify(next.processIds)
	);
}

const ParticipantsService: ServiceSchema<Settings, ParticipantsThis> = {
	name: "participants",
	mixins: [OutboxMixin(), DbMixin(PARTICIPANT_MODELS)],

	settings: {
		sweepIntervalMs: envNumber("PARTICIPANT_SWEEP_INTERVAL_SECONDS") * 1000,
		maxWriteAttempts: 8,
		relayIntervalMs: 15 * 1000,
		relayAfterMs: 10 * 1000,
		heldReadAnswers: 50_000,
		lookupApplyTimeoutMs: 1000,
	},

	actions: {
		find: {
			params: { ...FIND_PARAMS, pageRequest: { type: "object", optional: true } },
			async handler(this: ParticipantsThis, ctx: Context<{ pageRequest?: PageRequest; query?: string; processes?: boolean }, Meta>): Promise<Page<Participant>> {
				const scope = readScope(ctx.meta.user);
				const page = ctx.params.pageRequest ?? { page: 0, size: DEFAULT_PAGE_SIZE, sort: [] };
				const query = await this.storeQuery(scope, ctx.params.query);
				const [docs, total] = await Promise.all([
					this.collections.participants.find({ ...query, sort: page.sort, offset: page.page * page.size, limit: page.size }),
					this.collections.participants.count(query),
				]);
				return pageOf(await this.answers(docs, ctx.params.processes === true), total, page);
			},
		},

		stream: {
			params: FIND_PARAMS,
			async handler(this: ParticipantsThis, ctx: Context<{ query?: string; processes?: boolean }, Meta>): Promise<Participant[]> {
				const query = await this.storeQuery(readScope(ctx.meta.user), ctx.params.query);
				return this.answers(await this.collections.participants.find(query), ctx.params.processes === true);
			},
		},

		get: {
			params: ADDRESS_PARAMS,
			async handler(this: ParticipantsThis, ctx: Context<Address, Meta>): Promise<Participant> {
				const generation = this.readAnswers.generation;
				const doc = await this.addressed(ctx.meta.user, ctx.params, "read");
				const answer = await this.singleAnswer(doc);
				// A service provider's read of its own participant by qualified identifier: held
				// for the gateway's short path (services/participants/read-answers.ts).
				if (ctx.params.qualifiedIdentifier !== undefined && noticesOf(this.broker).trusted) this.readAnswers.remember(generation, doc.serviceProvider, doc.organizationKey, answer);
				return answer;
			},
		},

		processes: {
			params: ADDRESS_PARAMS,
			async handler(this: ParticipantsThis, ctx: Context<Address, Meta>): Promise<Process[]> {
				const doc = await this.addressed(ctx.meta.user, ctx.params, "read");
				return processesOf(doc, await this.processResolver.resolve(doc.processIds));
			},
		},

		add: {
			params: { body: ADD_PARTICIPANT_FORM },
			async handler(this: ParticipantsThis, ctx: Context<{ body: AddForm }, Meta>): Promise<Participant> {
				const owner = requireServiceProvider(ctx.meta.user);
				const doc = await this.newParticipant(owner.serviceProvider, ctx.params.body);
				const planned = this.plan(owner, "addParticipant", null, doc);
				await this.commit(ctx, [planned]);
				return this.singleAnswer(planned.after as ParticipantDoc);
			},
		},

		update: {
			params: { ...ADDRESS_PARAMS, body: UPDATE_PARTICIPANT_FORM },
			async handler(this: ParticipantsThis, ctx: Context<Address & { body: UpdateForm }, Meta>): Promise<Participant> {
				const body = ctx.params.body;
				const requested = requestedIdentifiers(body.processes);
				return this.changeAddressed(ctx, "write", async (before) => {
					const violations = await this.checkProcesses({
						icd: before.icd,
						organizationKey: before.organizationKey,
						requested,
						current: before.processIds,
						self: before.identifier,
					});
					violations.push(...deleteDateViolations(body.deleteDate, todayUtc()));
					if (violations.length > 0) throw new ValidationFailed(violations);
					const after: ParticipantDoc = {
						...before,
						contact: body.contact,
						processIds: requested,
						deleteDate: body.deleteDate === undefined ? before.deleteDate : body.deleteDate,
						lastModificationDate: new Date().toISOString(),
					};
					const planned = this.plan(ctx.meta.user ?? null, "updateParticipant", before, after);
					await this.commit(ctx, [planned]);
					return this.singleAnswer(planned.after as ParticipantDoc);
				});
			},
		},

		delete: {
			params: ADDRESS_PARAMS,
			async handler(this: ParticipantsThis, ctx: Context<Address, Meta>): Promise<void> {
				const operation = ctx.params.qualifiedIdentifier !== undefined ? "deleteParticipantByQualifiedIdentifier" : "deleteParticipant";
				await this.changeAddressed(ctx, "delete", (before) => this.commit(ctx, [this.plan(ctx.meta.user ?? null, operation, before, null)]));
			},
		},

		transfer: {
			params: { ...ADDRESS_PARAMS, serviceProviderIdentifier: { type: "uuid" } },
			async handler(this: ParticipantsThis, ctx: Context<Address & { serviceProviderIdentifier: string }, Meta>): Promise<void> {
				const target = ctx.params.serviceProviderIdentifier.toLowerCase();
				await this.changeAddressed(ctx, "write", async (before) => {
					if (target === before.serviceProvider) throw new BadRequest("A participant cannot be transferred to the service provider it already belongs to");
					const provider = await ctx.call<ServiceProvider | null, { identifier: string }>("accounts.getServiceProvider", { identifier: target });
					if (!provider) throw NotFound.instance("ServiceProvider", target);
					const after: ParticipantDoc = { ...before, serviceProvider: target, lastModificationDate: new Date().toISOString() };
					await this.commit(ctx, [this.plan(ctx.meta.user ?? null, "transferParticipant", before, after)]);
				});
			},
		},

		/** How many participants hold a process (catalog asks before deleting one). One claim per holder. */
		countUsingProcess: {
			params: { identifier: { type: "string" } },
			async handler(this: ParticipantsThis, ctx: Context<{ identifier: string }>): Promise<number> {
				return this.collections.processClaims.count({ filter: { processId: ctx.params.identifier.toLowerCase() } });
			},
		},

		/**
		 * The lookup rebuild's source: every participant's processes and version, in identifier
		 * order. `after` + `limit` page by key, so participants added meanwhile never shift a page.
		 */
		organizationProcessSets: {
			params: {
				organizationKey: { type: "string", optional: true },
				after: { type: "string", optional: true },
				limit: { type: "number", integer: true, min: 1, optional: true, convert: true },
			},
			async handler(
				this: ParticipantsThis,
				ctx: Context<{ organizationKey?: string; after?: string; limit?: number }>,
			): Promise<Omit<ParticipantChange, "deleted">[]> {
				const { organizationKey: key, after, limit } = ctx.params;
				const filter: Filter = {
					...(key === undefined ? {} : { organizationKey: key }),
					...(after === undefined ? {} : { identifier: { gte: after } }),
				};
				const docs = await this.collections.participants.find({ filter, limit: limit === undefined ? undefined : limit + 1 });
				const page = docs.filter((doc) => doc.identifier !== after).slice(0, limit);
				return page.map((doc) => ({ participant: doc.identifier, organizationKey: doc.organizationKey, processes: doc.processIds, version: doc.version ?? 1 }));
			},
		},

		/** Seed participants (decisions §9): upsert by (serviceProvider, organization); all or nothing (SeedRefused). */
		importSeed: {
			params: { participants: { type: "array", optional: true, items: SEED_PARTICIPANT } },
			async handler(this: ParticipantsThis, ctx: Context<{ participants?: SeedParticipant[] }, Meta>) {
				const rows = ctx.params.participants ?? [];
				const counts = rows.length > 0 ? await this.importSeedParticipants(ctx as Context<{ participants: SeedParticipant[] }, Meta>) : { created: 0, updated: 0, unchanged: 0 };
				return { participants: counts };
			},
		},

		/**
		 * Every participant as NDJSON (GET /rest/api/exports/participants, ADMIN): a Readable of
		 * lines in the spec's Participant shape with `provider` and processes as `[{ identifier }]`,
		 * read from the store in pages as it is consumed (services/participants/export-import.ts).
		 */
		export: {
			async handler(this: ParticipantsThis, ctx: Context<unknown, Meta>): Promise<Readable> {
				// The gateway allows ADMIN only; internal callers (no user) are operators' tools.
				if (ctx.meta.user && ctx.meta.user.role !== "ADMIN") throw new RegistryError(403, "AccessDeniedException", "Access is denied");
				return exportStream(this);
			},
		},

		/** Operator CLI `export`: one page by key of participant lines (src/exchange/registry-export.ts). */
		exportRecords: {
			visibility: "public",
			params: exportPageParams(["participant"]),
			handler(this: ParticipantsThis, ctx: Context<ExportPageRequest>): Promise<ExportPage> {
				return exportPage(this, ctx.params);
			},
		},

		/** Operator CLI `import`: a batch of exported participants, upserted by identifier, all or nothing; `dryRun` only checks. */
		importRecords: {
			visibility: "public",
			params: IMPORT_RECORDS_PARAMS,
			handler(this: ParticipantsThis, ctx: Context<{ participants: ImportedParticipant[]; dryRun?: boolean }, Meta>): Promise<ImportResult> {
				return importRecords(this, ctx);
			},
		},

		/** Publishes changes still in the outbox now (operators, tests); `olderThanMs` defaults to 0: all of them. */
		relayChanges: {
			params: { olderThanMs: { type: "number", integer: true, min: 0, optional: true } },
			async handler(this: ParticipantsThis, ctx: Context<{ olderThanMs?: number }>): Promise<{ published: number }> {
				return { published: await this.relay(ctx.params.olderThanMs ?? 0) };
			},
		},

		/** Runs the sweeper now (operators, tests); `today` defaults to the current UTC date. */
		sweep: {
			params: { today: { type: "string", pattern: /^\d{4}-\d{2}-\d{2}$/, optional: true } },
			async handler(this: ParticipantsThis, ctx: Context<{ today?: string }>): Promise<{ removed: number }> {
				return { removed: await this.sweep(ctx.params.today ?? todayUtc()) };
			},
		},
	},

	// Notices (src/platform/notices.ts): every participants node hears them, whichever node made the change.
	events: {
		[NOTICES.catalogChanged](this: ParticipantsThis) {
			// A renamed, hidden or deleted process (or a document type nested in one) must show at once.
			this.processResolver.clear();
			this.readAnswers.clear();
		},
		[NOTICES.accountsChanged](this: ParticipantsThis) {
			this.providerResolver.clear();
			this.readAnswers.clear();
		},
		/** Another node (sharing this store) changed a participant: its held answer here is stale. */
		[NOTICES.participantsChanged](this: ParticipantsThis, ctx: Context<{ organizationKey?: string; serviceProviders?: string[] | null }>) {
			const { organizationKey, serviceProviders } = ctx.params;
			if (typeof organizationKey !== "string" || !Array.isArray(serviceProviders)) return this.readAnswers.clear();
			for (const serviceProvider of serviceProviders) this.readAnswers.forget(serviceProvider, organizationKey);
		},
		[NOTICES_RESET](this: ParticipantsThis) {
			this.processResolver.clear();
			this.providerResolver.clear();
			this.readAnswers.clear();
		},
	},

	methods: {
		/**
		 * The participant a path value names, as this caller may see it (decisions §4). A
		 * qualified identifier means "my participant for that organization"; a UUID that is
		 * another provider's answers 404, exactly as if it did not exist.
		 */
		async addressed(this: ParticipantsThis, caller: Caller | null | undefined, address: Address, purpose: Purpose): Promise<ParticipantDoc> {
			if (address.qualifiedIdentifier !== undefined) {
				const organization = parseParticipantIdentifier(address.qualifiedIdentifier);
				if (!organization) throw new TypeMismatch(`'${address.qualifiedIdentifier}' is not a participant qualified identifier`);
				const owner = requireServiceProvider(caller);
				const doc = await this.collections.participants.findOne({ serviceProvider: owner.serviceProvider, organizationKey: organization.organizationKey });
				if (!doc) throw NotFound.organization(address.qualifiedIdentifier);
				return doc;
			}
			if (address.identifier === undefined) throw new TypeMismatch("A participant identifier or qualified identifier is required");
			const doc = await this.collections.participants.get(address.identifier.toLowerCase());
			const allowed =
				doc !== null &&
				(purpose === "read" ? canRead(caller as Caller, doc) : purpose === "delete" ? canDelete(caller, doc) : requireServiceProvider(caller).serviceProvider === doc.serviceProvider);
			if (!doc || !allowed) {
				readScope(caller); // a caller with no access at all gets 403, not a 404
				throw NotFound.instance("Participant", address.identifier);
			}
			return doc;
		},

		/**
		 * Read-modify-write of one participant: queued per participant in this process, and
		 * re-read on every attempt so a lost version race is retried on fresh data.
		 */
		async changeAddressed<T>(this: ParticipantsThis, ctx: Context<Address, Meta>, purpose: Purpose, work: (before: ParticipantDoc) => Promise<T>): Promise<T> {
			const first = await this.addressed(ctx.meta.user, ctx.params, purpose);
			return this.mutex.run(first.identifier, () =>
				this.withRetries(async () => work(await this.addressed(ctx.meta.user, ctx.params, purpose))),
			);
		},

		async withRetries<T>(this: ParticipantsThis, attempt: () => Promise<T>): Promise<T> {
			for (let attempts = 1; ; attempts++) {
				try {
					return await attempt();
				} catch (error) {
					if (!isStale(error)) throw error;
					if (attempts >= this.settings.maxWriteAttempts) throw new Conflict("The participant was changed concurrently; try again");
				}
			}
		},

		/** Process rules of decisions §6, on what the catalog and the organization's other participants hold now. */
		async checkProcesses(this: ParticipantsThis, input: ProcessCheck): Promise<Violation[]> {
			const [known, heldByOthers] = await Promise.all([
				this.processResolver.resolve(input.requested),
				input.heldElsewhere ? Promise.resolve(input.heldElsewhere) : this.heldByOthers(input.organizationKey, input.self),
			]);
			const facts = new Map([...known].map(([id, process]) => [id, factsOf(process)]));
			return processViolations({ icd: input.icd, requested: input.requested, known: facts, current: input.current, heldByOthers });
		},

		async heldByOthers(this: ParticipantsThis, key: string, self: string | null): Promise<Set<string>> {
			const others = await this.collections.participants.find({ filter: { organizationKey: key } });
			return new Set(others.filter((doc) => doc.identifier !== self).flatMap((doc) => doc.processIds));
		},

		async newParticipant(this: ParticipantsThis, serviceProvider: string, form: AddForm, identifier?: string): Promise<ParticipantDoc> {
			const key = organizationKey(form.icd, form.organizationIdentifier);
			const requested = requestedIdentifiers(form.processes);
			const violations = organizationViolations(form.icd, form.organizationIdentifier);
			violations.push(...(await this.checkProcesses({ icd: form.icd, organizationKey: key, requested, current: [], self: null })));
			if (violations.length > 0) throw new ValidationFailed(violations);
			const now = new Date().toISOString();
			return {
				identifier: identifier ?? newRecordIdentifier(),
				icd: form.icd,
				organizationIdentifier: form.organizationIdentifier,
				organizationKey: key,
				qualifiedIdentifier: participantQualifiedIdentifier(form.icd, form.organizationIdentifier),
				name: form.name ?? null,
				contact: form.contact,
				processIds: requested,
				serviceProvider,
				registrationDate: now,
				lastModificationDate: now,
				deleteDate: null,
			};
		},

		/**
		 * The writes of one change. A delete first replaces the participant at its expected
		 * version: a delete of a row that is already gone would otherwise succeed silently,
		 * and two racing deletes must answer 204 once and 404 once.
		 */
		plan(this: ParticipantsThis, caller: Caller | null, operation: string, before: ParticipantDoc | null, after: ParticipantDoc | null): PlannedChange {
			const subject = (after ?? before) as ParticipantDoc;
			const claims = this.collections.processClaims.spec.collection;
			const participants = this.collections.participants.spec.collection;
			const ops: WriteOp[] = [];
			let version: number;
			if (!before && after) {
				version = 1;
				ops.push({ kind: "insert", collection: participants, doc: after });
				for (const processId of after.processIds) ops.push({ kind: "insert", collection: claims, doc: claimDoc(after, processId) });
			} else if (before && after) {
				version = (before.version ?? 1) + 1;
				ops.push({ kind: "replace", collection: participants, doc: after, expectedVersion: before.version });
				const { added, removed } = processChanges(before.processIds, after.processIds);
				for (const processId of removed) ops.push({ kind: "delete", collection: claims, identifier: claimIdentifier(before.organizationKey, processId) });
				for (const processId of added) ops.push({ kind: "insert", collection: claims, doc: claimDoc(after, processId) });
			} else if (before) {
				version = (before.version ?? 1) + 1;
				ops.push({ kind: "replace", collection: participants, doc: before, expectedVersion: before.version });
				ops.push({ kind: "delete", collection: participants, identifier: before.identifier, expectedVersion: version });
				ops.push({ kind: "deleteWhere", collection: claims, filter: { participant: before.identifier } });
			} else {
				throw new Error("a participant change needs a before or an after image");
			}
			const image = after ? { ...after, version } : null;
			const serviceProviders = [...new Set([before?.serviceProvider, after?.serviceProvider].filter((id): id is string => typeof id === "string"))];
			ops.push(auditWrite(auditRecord(caller, { operation, resource: "participant", resourceId: subject.identifier, serviceProviders, before, after: image })));
			const change: ParticipantChange = {
				participant: subject.identifier,
				organizationKey: subject.organizationKey,
				processes: after ? after.processIds : [],
				version,
				deleted: !after,
				serviceProviders,
			};
			const outbox: ChangeOutboxDoc = { identifier: newRecordIdentifier(), at: new Date().toISOString(), change };
			ops.push({ kind: "insert", collection: this.collections.changeOutbox.spec.collection, doc: outbox });
			return { ops, before, after: image, change, outboxId: outbox.identifier };
		},

		/** One batch for all planned changes; a unique key that refuses it becomes a 409. Then announce. */
		async commit(this: ParticipantsThis, ctx: Context<unknown, Meta> | null, changes: PlannedChange[]): Promise<void> {
			// Held read answers of these participants go before the write (no answer is held from
			// a read that overlaps it) and after it (none read before it is kept).
			const forgetAnswers = () => {
				for (const planned of changes) for (const doc of [planned.before, planned.after]) if (doc) this.readAnswers.forget(doc.serviceProvider, doc.organizationKey);
			};
			forgetAnswers();
			try {
				await this.store.batch(changes.flatMap((planned) => planned.ops));
			} catch (error) {
				throw await this.writeConflict(error, changes);
			} finally {
				forgetAnswers();
			}
			this.relayOutboxes();
			for (const planned of changes) await this.announce(ctx, planned);
		},

		async writeConflict(this: ParticipantsThis, error: unknown, changes: PlannedChange[]): Promise<unknown> {
			if (!isDuplicate(error)) return error;
			const subject = changes.length === 1 ? changes[0].after : null;
			const organization = subject ? `organization ${subject.qualifiedIdentifier}` : "an organization of the request";
			if (error.collection === this.collections.participants.spec.collection) {
				const provider = subject ? `Service provider ${subject.serviceProvider}` : "A service provider";
				return new Conflict(`${provider} already has a participant for ${organization}`);
			}
			if (error.collection === this.collections.processClaims.spec.collection && subject) {
				// Name the processes held elsewhere: a read after the refusal, for the message only.
				const held = await this.collections.processClaims.getMany(subject.processIds.map((id) => claimIdentifier(subject.organizationKey, id)));
				const taken = held.filter((claim) => claim.participant !== subject.identifier).map((claim) => claim.processId);
				return new Conflict(`Process ${taken.join(", ") || "(one of the request)"} is already registered for ${organization} by another service provider`);
			}
			return new Conflict(`A process of the request is already registered for ${organization} by another service provider`);
		},

		/**
		 * After a commit: deliver the change, then take it out of the outbox. The change is
		 * committed already, so a failure here is logged, not answered: the relay publishes
		 * what stayed in the outbox.
		 */
		async announce(this: ParticipantsThis, ctx: Context<unknown, Meta> | null, planned: PlannedChange): Promise<void> {
			const { change } = planned;
			try {
				await this.deliver(ctx, change);
				await this.collections.changeOutbox.delete(planned.outboxId);
			} catch (error) {
				this.logger.warn(`${PARTICIPANTS_CHANGED} for participant ${change.participant} v${change.version} not published yet (the relay retries):`, String(error));
			}
		},

		/**
		 * Apply to a lookup first (this process's, else any node's), so the change is in the
		 * lookup by the time the request answers; then publish it on the durable channel, which
		 * brings it to the lookup in any case (a failed or skipped apply, a crash), and tell every
		 * process holding read answers (the `participants.changed` notice). All are idempotent;
		 * only a failed publish throws.
		 */
		async deliver(this: ParticipantsThis, ctx: Context<unknown, Meta> | null, change: ParticipantChange): Promise<void> {
			await this.applyToLookup(ctx, change);
			await publishParticipantChange(this.broker, change);
			const { participant, organizationKey, serviceProviders } = change;
			await noticesOf(this.broker).publish(NOTICES.participantsChanged, { participant, organizationKey, serviceProviders: serviceProviders ?? null });
		},

		/**
		 * One attempt on each of two lookup nodes, each bounded by `lookupApplyTimeoutMs`: a node
		 * that died is not noticed for seconds, and the channel delivers the change anyway.
		 */
		async applyToLookup(this: ParticipantsThis, ctx: Context<unknown, Meta> | null, change: ParticipantChange): Promise<void> {
			const local = Boolean(this.broker.getLocalService("lookup"));
			if (!local && !isActionAvailable(this.broker, "lookup.apply")) return;
			for (let attempt = 1; attempt <= 2; attempt++) {
				try {
					const options = local ? {} : { timeout: this.settings.lookupApplyTimeoutMs };
					await (ctx ? ctx.call("lookup.apply", change, options) : this.broker.call("lookup.apply", change, options));
					return;
				} catch (error) {
					if (local || attempt === 2) this.logger.warn(`lookup.apply failed for participant ${change.participant} v${change.version} (the channel brings it):`, String(error));
				}
				if (local) return;
			}
		},

		/** Publishes changes left in the outbox for longer than `olderThanMs`, oldest first; stops at the first failure. */
		async relay(this: ParticipantsThis, olderThanMs: number): Promise<number> {
			const published = await this.changeRelay.drain(olderThanMs);
			if (published > 0) this.logger.info(`relay published ${published} participant change(s) from the outbox`);
			return published;
		},

		/** A background task every `interval` ms (0: none) that never overlaps itself and never keeps the process alive. */
		every(this: ParticipantsThis, interval: number, task: () => Promise<number>, name: string): NodeJS.Timeout | undefined {
			if (interval <= 0) return undefined;
			let running: Promise<unknown> | null = null;
			const timer = setInterval(() => {
				if (running) return;
				const run = task()
					.catch((error) => this.logger.error(`participants ${name} failed:`, String(error)))
					.finally(() => {
						running = null;
						this.running.delete(run);
					});
				running = run;
				this.running.add(run);
			}, interval);
			timer.unref();
			return timer;
		},

		/** List items: provider always; processes when asked (one catalog call for the page). */
		async answers(this: ParticipantsThis, docs: ParticipantDoc[], withProcesses: boolean): Promise<Participant[]> {
			const providerIds = docs.map((doc) => doc.serviceProvider);
			const processIds = withProcesses ? docs.flatMap((doc) => doc.processIds) : null;
			const knownProviders = this.providerResolver.known(providerIds);
			const knownProcesses = processIds && this.processResolver.known(processIds);
			const [providers, processes] =
				knownProviders && (!processIds || knownProcesses)
					? [knownProviders, knownProcesses]
					: await Promise.all([this.providerResolver.resolve(providerIds), processIds ? this.processResolver.resolve(processIds) : Promise.resolve(null)]);
			return docs.map((doc) => participantAnswer(doc, providers.get(doc.serviceProvider), processes ? processesOf(doc, processes) : undefined));
		},

		/** The gateway's short path (services/api/participant-read-fast-path.ts): does this service hold read answers at all? */
		holdsReadAnswers(this: ParticipantsThis): boolean {
			return this.readAnswers.holding;
		},

		/** The answer `get` gave this caller for its own participant of that organization, when held. */
		heldReadAnswer(this: ParticipantsThis, caller: Caller, organizationKey: string): Buffer | undefined {
			const serviceProvider = serviceProviderOf(caller);
			return serviceProvider === null ? undefined : this.readAnswers.bytes(serviceProvider, organizationKey);
		},

		async singleAnswer(this: ParticipantsThis, doc: ParticipantDoc): Promise<Participant> {
			const [answer] = await this.answers([doc], true);
			return answer;
		},

		/**
		 * decisions §7: a query equal to an organization identifier (or icd:identifier) matches
		 * that participant exactly; only when it matches none is it read as name words.
		 */
		async storeQuery(this: ParticipantsThis, scope: Filter, text: string | undefined): Promise<Pick<Query, "filter" | "words">> {
			const query = readParticipantQuery(text);
			if (!query) return { filter: scope };
			const exact: Filter[] = [];
			if (query.organizationKey) exact.push({ ...scope, organizationKey: query.organizationKey });
			if (query.organizationIdentifier) exact.push({ ...scope, organizationIdentifier: query.organizationIdentifier });
			for (const filter of exact) {
				if ((await this.collections.participants.count({ filter })) > 0) return { filter };
			}
			return { filter: scope, words: query.words };
		},

		/** Removes every participant whose deleteDate has arrived; each removal is an audited change. */
		async sweep(this: ParticipantsThis, today: string): Promise<number> {
			let removed = 0;
			for (let round = 0; round < 1000; round++) {
				const due = await this.collections.participants.find({ filter: { deleteDate: { lte: today } }, limit: 100 });
				if (due.length === 0) break;
				for (const candidate of due) {
					const done = await this.mutex.run(candidate.identifier, () =>
						this.withRetries(async () => {
							const doc = await this.collections.participants.get(candidate.identifier);
							if (!doc || !isDue(doc.deleteDate, today)) return false;
							await this.commit(null, [this.plan(null, "sweepParticipant", doc, null)]);
							return true;
						}),
					);
					if (done) removed++;
				}
			}
			if (removed > 0) this.logger.info(`sweeper removed ${removed} participant(s) whose deleteDate arrived (${today})`);
			return removed;
		},

		/** Seed rows → one batch; any reason refuses the whole section (decisions §9) and writes nothing. */
		async importSeedParticipants(this: ParticipantsThis, ctx: Context<{ participants: SeedParticipant[] }, Meta>) {
			const seed = await this.seedContext(ctx);
			const reasons: SeedReason[] = [];
			const changes: PlannedChange[] = [];
			const counts = { created: 0, updated: 0, unchanged: 0 };
			for (const index of seed.rows.keys()) {
				const outcome = await this.seedRow(ctx.meta.user ?? null, seed, index);
				if ("reasons" in outcome) {
					reasons.push(...outcome.reasons);
					continue;
				}
				counts[outcome.result]++;
				if (outcome.change) changes.push(outcome.change);
			}
			if (reasons.length > 0) throw new SeedRefused(reasons);
			try {
				if (changes.length > 0) await this.commit(ctx, changes);
			} catch (error) {
				// The store's unique keys still decide: a race with a concurrent add refuses the section.
				if (error instanceof Conflict) throw new SeedRefused([{ path: "participants", message: error.message }]);
				throw error;
			}
			return counts;
		},

		async seedContext(this: ParticipantsThis, ctx: Context<{ participants: SeedParticipant[] }, Meta>): Promise<SeedContext> {
			const rows = ctx.params.participants.map((row) => ({ ...row, serviceProvider: row.serviceProvider.toLowerCase() }));
			const providers = await ctx.call<ServiceProvider[], { identifiers: string[] }>("accounts.serviceProviders", { identifiers: [...new Set(rows.map((row) => row.serviceProvider))] });
			const keys = rows.map((row) => organizationKey(row.icd, row.organizationIdentifier));
			const existing = await this.collections.participants.find({ filter: { organizationKey: { in: [...new Set(keys)] } } });
			return { rows, keys, existing, knownProviders: new Set(providers.map((provider) => provider.identifier.toLowerCase())) };
		},

		/** One seed row: the reasons it is refused, or what it changes (nothing when the stored participant is the same). */
		async seedRow(this: ParticipantsThis, caller: Caller | null, seed: SeedContext, index: number): Promise<SeedRowOutcome> {
			const row = seed.rows[index];
			const key = seed.keys[index];
			const at = (field: string) => `participants[${index}]${field ? `.${field}` : ""}`;
			if (!seed.knownProviders.has(row.serviceProvider)) return { reasons: [{ path: at("serviceProvider"), message: "names no existing service provider" }] };
			const current = seed.existing.find((doc) => doc.organizationKey === key && doc.serviceProvider === row.serviceProvider) ?? null;
			const requested = requestedIdentifiers(row.processes);
			const others = seedHoldingsOfOthers(seed, index);
			const violations = [
				...organizationViolations(row.icd, row.organizationIdentifier),
				...(await this.checkProcesses({ icd: row.icd, organizationKey: key, requested, current: current?.processIds ?? [], self: current?.identifier ?? null, heldElsewhere: others })),
			];
			const reasons = violations.map((violation) => ({ path: at(violation.field), message: violation.defaultMessage }));
			requested.forEach((processId, position) => {
				if (others.has(processId)) reasons.push({ path: at(`processes[${position}].identifier`), message: "is already registered for this organization by another service provider" });
			});
			if (reasons.length > 0) return { reasons };
			const now = new Date().toISOString();
			if (!current) return { result: "created", change: this.plan(caller, "seed", null, seedParticipant(row, key, now)) };
			const next: ParticipantDoc = { ...current, name: row.name ?? null, contact: row.contact, processIds: requested, lastModificationDate: now };
			if (sameContent(current, next)) return { result: "unchanged" };
			return { result: "updated", change: this.plan(caller, "seed", current, next) };
		},
	},

	created(this: ParticipantsThis) {
		this.running = new Set();
		this.changeRelay = new OutboxRelay<ChangeOutboxDoc>({
			name: "participant changes",
			outbox: () => this.collections?.changeOutbox,
			deliver: async (entries) => {
				for (const entry of entries) await this.deliver(null, entry.change);
			},
		});
		this.mutex = new KeyedMutex();
		this.readAnswers = new ReadAnswers(0); // until started knows the store
		this.processResolver = new CachedResolver<Process>((identifiers) =>
			this.broker.call<Process[], { identifiers: string[] }>("catalog.processesByIds", { identifiers }),
		);
		this.providerResolver = new CachedResolver<ServiceProvider>((identifiers) =>
			this.broker.call<ServiceProvider[], { identifiers: string[] }>("accounts.serviceProviders", { identifiers }),
		);
	},

	async started(this: ParticipantsThis) {
		// Only a store this process alone writes can tell it every change (read-answers.ts).
		this.readAnswers = new ReadAnswers(this.store.kind === "sqlite" ? this.settings.heldReadAnswers : 0);
		this.sweepTimer = this.every(this.settings.sweepIntervalMs, () => this.sweep(todayUtc()), "sweeper");
		this.relayTimer = this.every(this.settings.relayIntervalMs, () => this.relay(this.settings.relayAfterMs), "outbox relay");
		// What a killed process committed but never published is in the outbox: publish it as
		// soon as the lookup is up (before that, the in-process channel has no subscriber and a
		// local apply would fail), rather than a relay interval later. Redelivery is harmless:
		// the lookup applies by version.
		const leftover = this.broker
			.waitForServices(["lookup"], this.settings.relayIntervalMs || 15000)
			.then(() => this.relay(0))
			.catch((error) => this.logger.warn("participants outbox relay at start deferred to the next interval:", String(error)))
			.finally(() => this.running.delete(leftover));
		this.running.add(leftover);
	},

	async stopped(this: ParticipantsThis) {
		for (const timer of [this.sweepTimer, this.relayTimer]) if (timer) clearInterval(timer);
		this.sweepTimer = undefined;
		this.relayTimer = undefined;
		await Promise.all([...this.running]);
	},
};

export default ParticipantsService;
