/**
 * participants: organizations' customer relations with service providers (spec "Participants",
 * decisions §4–§7). Owns `participants`, `processClaims`, the audit outbox and the change
 * outbox. The rules and changes live in services/participants/participants.ts; this file
 * adapts actions to them and publishes each committed change on the durable channel
 * `registry.participants.changed`, the one way it reaches the lookups (a relay publishes what a
 * failure left in the change outbox).
 */
import { countMetric, REGISTRY_METRICS } from "../../src/platform/registry-metrics";
import type { Readable } from "node:stream";
import type { Context, Service, ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { DbMixin } from "../../mixins/db.mixin";
import { OutboxMixin, type ChangeDeliverer, type OutboxThis } from "../../mixins/outbox.mixin";
import { envNumber } from "../../src/config/settings";
import { calendarDate } from "../../src/contract/dates";
import { IF_MATCH_PARAM } from "../../src/contract/entity-tags";
import { AccessDenied } from "../../src/contract/errors";
import type { Participant, Process, ServiceProvider } from "../../src/contract/model";
import { DEFAULT_PAGE_SIZE, type Page, type PageRequest } from "../../src/contract/paging";
import { ADD_PARTICIPANT_FORM, UPDATE_PARTICIPANT_FORM } from "../../src/contract/schemas";
import {
	exportPageParams,
	type ExportPage,
	type ExportPageRequest,
	type ImportedParticipant,
} from "../../src/exchange/registry-export";
import {
	channelsSubscribed,
	PARTICIPANTS_CHANGED,
	publishOnChannel,
	type ParticipantChange,
} from "../../src/platform/channels";
import { KeyedMutex } from "../../src/platform/keyed-mutex";
import { copyMaxAgeMs, EVENTS } from "../../src/platform/events";
import { PeriodicTask } from "../../src/platform/periodic-task";
import type { Collection, Filter, Store } from "../../src/store/types";
import { exportPage, exportStream, importRecords, IMPORT_RECORDS_PARAMS, type ImportResult } from "./export-import";
import {
	PARTICIPANT_MODELS,
	type ParticipantChangeOutboxDoc,
	type ParticipantDoc,
	type ProcessClaimDoc,
	type TransferDoc,
} from "./model";
import { Participants, type AddForm, type Address, type FindFilters, type UpdateForm } from "./participants";
import { cardFactsOf, type OrganizationCardEntry } from "./changes";
import { CachedResolver } from "./resolver";
import { participantReadCacheKey, participantReadsOf, READ_CACHE_ACTION, READ_CACHE_TTL_SECONDS } from "./read-cache";
import { PROCESS_REPLACEMENT_ACTIONS, type ProcessReplacementHost } from "./process-replacement.actions";
import { ProcessReplacements } from "./process-replacement";
import {
	PROCESS_REPLACEMENT_MODELS,
	type JobLockDoc,
	type ProcessReplacementJobDoc,
	type ProcessReplacementResultDoc,
} from "./process-replacement-model";
import { importSeedParticipants, type SeedParticipant } from "./seed";
import { TransfersMixin, type TransfersThis } from "./transfers.mixin";

interface Settings {
	/** How often the sweeper removes participants whose deleteDate has arrived (0: never). */
	sweepIntervalMs: number;
	/** Attempts of a change that lost an optimistic version race before it answers 409. */
	maxWriteAttempts: number;
	/** In a cluster, how long a process or provider fetched from its owner is used (its owner's event drops it earlier). */
	resolvedMaxAgeMs: number;
	/** Process replacement jobs (services/participants/process-replacement.ts); unset: PROCESS_REPLACEMENT_BATCH_SIZE, read when a job starts. */
	jobBatchSize?: number;
	/** Unset: PROCESS_REPLACEMENT_BATCH_DELAY_MS. */
	jobBatchDelayMs?: number;
	jobHeartbeatMs: number;
	/** A RUNNING job whose heartbeat is older than this is marked INTERRUPTED (by the next start and the periodic check). */
	jobStaleAfterMs: number;
	/** How often the periodic check looks for such jobs (0: never). */
	jobCheckIntervalMs: number;
}

interface ParticipantsThis
	extends
		Service<Settings>,
		OutboxThis,
		ChangeDeliverer,
		ProcessReplacementHost,
		Pick<TransfersThis, "transfers" | "transferSweeper" | "startTransfers"> {
	store: Store;
	collections: {
		participants: Collection<ParticipantDoc>;
		processClaims: Collection<ProcessClaimDoc>;
		changeOutbox: Collection<ParticipantChangeOutboxDoc>;
		transfers: Collection<TransferDoc>;
		processReplacementJobs: Collection<ProcessReplacementJobDoc>;
		processReplacementResults: Collection<ProcessReplacementResultDoc>;
		jobLocks: Collection<JobLockDoc>;
	};
	participants: Participants;
	processResolver: CachedResolver<Process>;
	providerResolver: CachedResolver<ServiceProvider>;
	sweeper: PeriodicTask;
	jobCheck: PeriodicTask;
	/** Background work awaited on stop, so none meets a closed store. */
	leftovers: Promise<unknown> | null;
	deliverChange(change: ParticipantChange): Promise<void>;
	forgetAllReads(): Promise<void>;
	sweep(today: string): Promise<number>;
}

const ADDRESS_PARAMS = {
	identifier: { type: "string", optional: true },
	qualifiedIdentifier: { type: "string", optional: true },
};

const IF_MATCH_PARAMS = { ifMatch: IF_MATCH_PARAM };
type IfMatch = { ifMatch?: string };

const FIND_PARAMS = {
	query: { type: "string", optional: true },
	modifiedSince: { type: "string", optional: true, max: 100 },
	processes: { type: "boolean", optional: true, convert: true },
};

const SEED_PARTICIPANT = {
	...ADD_PARTICIPANT_FORM,
	props: {
		...ADD_PARTICIPANT_FORM.props,
		serviceProvider: { type: "uuid" },
		identifier: { type: "uuid", optional: true },
	},
};

function todayUtc(): string {
	return calendarDate(new Date());
}

const ParticipantsService: ServiceSchema<Settings, ParticipantsThis> = {
	name: "participants",
	// The transfer actions (POST /transfers…) and their sweeper; started below once participants are.
	mixins: [TransfersMixin, OutboxMixin(), DbMixin({ ...PARTICIPANT_MODELS, ...PROCESS_REPLACEMENT_MODELS })],

	settings: {
		sweepIntervalMs: envNumber("PARTICIPANT_SWEEP_INTERVAL_SECONDS") * 1000,
		maxWriteAttempts: 8,
		resolvedMaxAgeMs: 500,
		jobHeartbeatMs: 5000,
		jobStaleAfterMs: 60_000,
		jobCheckIntervalMs: 60_000,
	},

	actions: {
		find: {
			params: { ...FIND_PARAMS, pageRequest: { type: "object", optional: true } },
			handler(
				this: ParticipantsThis,
				ctx: RegistryContext<FindFilters & { pageRequest?: PageRequest; processes?: boolean }>,
			): Promise<Page<Participant>> {
				const page = ctx.params.pageRequest ?? { page: 0, size: DEFAULT_PAGE_SIZE, sort: [] };
				return this.participants.find(ctx.meta.user, page, ctx.params, ctx.params.processes === true);
			},
		},

		stream: {
			params: FIND_PARAMS,
			handler(
				this: ParticipantsThis,
				ctx: RegistryContext<FindFilters & { processes?: boolean }>,
			): Promise<Readable> {
				return this.participants.stream(ctx.meta.user, ctx.params, ctx.params.processes === true);
			},
		},

		get: {
			params: ADDRESS_PARAMS,
			// Cached per caller and participant; a change drops its reads (`deliverChange`), the TTL bounds a node that missed that.
			cache: { keygen: participantReadCacheKey, ttl: READ_CACHE_TTL_SECONDS },
			handler(this: ParticipantsThis, ctx: RegistryContext<Address>): Promise<Participant> {
				return this.participants.get(ctx.meta.user, ctx.params);
			},
		},

		processes: {
			params: ADDRESS_PARAMS,
			handler(this: ParticipantsThis, ctx: RegistryContext<Address>): Promise<Process[]> {
				return this.participants.processesOf(ctx.meta.user, ctx.params);
			},
		},

		add: {
			params: { body: ADD_PARTICIPANT_FORM },
			handler(this: ParticipantsThis, ctx: RegistryContext<{ body: AddForm }>): Promise<Participant> {
				return this.participants.add(ctx.meta.user, ctx.params.body);
			},
		},

		update: {
			params: { ...ADDRESS_PARAMS, ...IF_MATCH_PARAMS, body: UPDATE_PARTICIPANT_FORM },
			handler(
				this: ParticipantsThis,
				ctx: RegistryContext<Address & IfMatch & { body: UpdateForm }>,
			): Promise<Participant> {
				return this.participants.update(
					ctx.meta.user,
					ctx.params,
					ctx.params.body,
					todayUtc(),
					ctx.params.ifMatch,
				);
			},
		},

		delete: {
			params: { ...ADDRESS_PARAMS, ...IF_MATCH_PARAMS },
			handler(this: ParticipantsThis, ctx: RegistryContext<Address & IfMatch>): Promise<void> {
				return this.participants.remove(ctx.meta.user, ctx.params, ctx.params.ifMatch);
			},
		},

		transfer: {
			params: { ...ADDRESS_PARAMS, ...IF_MATCH_PARAMS, serviceProviderIdentifier: { type: "uuid" } },
			handler(
				this: ParticipantsThis,
				ctx: RegistryContext<Address & IfMatch & { serviceProviderIdentifier: string }>,
			): Promise<void> {
				return this.participants.transfer(
					ctx.meta.user,
					ctx.params,
					ctx.params.serviceProviderIdentifier.toLowerCase(),
					ctx.params.ifMatch,
				);
			},
		},

		/** How many participants hold a process (catalog asks before deleting one). One claim per holder. */
		countUsingProcess: {
			params: { identifier: { type: "string" } },
			handler(this: ParticipantsThis, ctx: Context<{ identifier: string }>): Promise<number> {
				return this.collections.processClaims.count({
					filter: { processId: ctx.params.identifier.toLowerCase() },
				});
			},
		},

		/**
		 * The lookup rebuild's source: every participant's processes, version and card facts, in identifier
		 * order. `after` + `limit` page by key, so participants added meanwhile never shift a page.
		 */
		/** The organizations' participants as their business cards (and network's access check) need them: network's delivery. */
		organizationCards: {
			params: { organizationKeys: { type: "array", items: "string", max: 1000 } },
			async handler(
				this: ParticipantsThis,
				ctx: Context<{ organizationKeys: string[] }>,
			): Promise<Record<string, OrganizationCardEntry[]>> {
				const docs = await this.collections.participants.find({
					filter: { organizationKey: { in: ctx.params.organizationKeys } },
				});
				const cards: Record<string, OrganizationCardEntry[]> = {};
				for (const doc of docs)
					(cards[doc.organizationKey] ??= []).push({
						participant: doc.identifier,
						serviceProvider: doc.serviceProvider,
						...cardFactsOf(doc),
					});
				return cards;
			},
		},

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
				const docs = await this.collections.participants.find({
					filter,
					limit: limit === undefined ? undefined : limit + 1,
				});
				const page = docs.filter((doc) => doc.identifier !== after).slice(0, limit);
				return page.map((doc) => ({
					participant: doc.identifier,
					incarnation: doc.incarnation ?? "",
					organizationKey: doc.organizationKey,
					processes: doc.processIds,
					version: doc.version ?? 1,
					serviceProvider: doc.serviceProvider,
					...cardFactsOf(doc),
				}));
			},
		},

		/** Seed participants (decisions §9): upsert by (serviceProvider, organization); all or nothing (SeedRefused). */
		importSeed: {
			params: { participants: { type: "array", optional: true, items: SEED_PARTICIPANT } },
			async handler(this: ParticipantsThis, ctx: RegistryContext<{ participants?: SeedParticipant[] }>) {
				const rows = ctx.params.participants ?? [];
				if (rows.length === 0) return { participants: { created: 0, updated: 0, unchanged: 0 } };
				const providers = await ctx.call<ServiceProvider[], { identifiers: string[] }>(
					"accounts.serviceProviders",
					{
						identifiers: [...new Set(rows.map((row) => row.serviceProvider.toLowerCase()))],
					},
				);
				const known = new Set(providers.map((provider) => provider.identifier.toLowerCase()));
				return {
					participants: await importSeedParticipants(this.participants, ctx.meta.user ?? null, rows, known),
				};
			},
		},

		/**
		 * Every participant as NDJSON (GET /rest/api/exports/participants, ADMIN): a Readable of
		 * lines in the spec's Participant shape with `provider` and processes as `[{ identifier }]`,
		 * read from the store in pages as it is consumed (services/participants/export-import.ts).
		 */
		export: {
			async handler(this: ParticipantsThis, ctx: RegistryContext<unknown>): Promise<Readable> {
				// The table allows a signed ADMIN only (src/platform/permissions.ts): this repeats it where the stream is made.
				if (ctx.meta.user && ctx.meta.user.role !== "ADMIN") throw new AccessDenied();
				return exportStream(this.participants);
			},
		},

		/** Operator CLI `export`: one page by key of participant lines (src/exchange/registry-export.ts). */
		exportRecords: {
			visibility: "public",
			params: exportPageParams(["participant"]),
			handler(this: ParticipantsThis, ctx: Context<ExportPageRequest>): Promise<ExportPage> {
				return exportPage(this.participants, ctx.params);
			},
		},

		/** Operator CLI `import`: a batch of exported participants, upserted by identifier, all or nothing; `dryRun` only checks. */
		importRecords: {
			visibility: "public",
			params: IMPORT_RECORDS_PARAMS,
			handler(
				this: ParticipantsThis,
				ctx: RegistryContext<{ participants: ImportedParticipant[]; dryRun?: boolean }>,
			): Promise<ImportResult> {
				return importRecords(this.participants, ctx);
			},
		},

		/** Delivers changes still in the outbox now (operators, tests); `olderThanMs` defaults to 0: all of them. */
		relayChanges: {
			params: { olderThanMs: { type: "number", integer: true, min: 0, optional: true } },
			async handler(
				this: ParticipantsThis,
				ctx: Context<{ olderThanMs?: number }>,
			): Promise<{ published: number }> {
				return { published: await this.relayChangesNow(ctx.params.olderThanMs ?? 0) };
			},
		},

		/** Runs the sweeper now (operators, tests); `today` defaults to the current UTC date. */
		sweep: {
			params: { today: { type: "string", pattern: /^\d{4}-\d{2}-\d{2}$/, optional: true } },
			async handler(this: ParticipantsThis, ctx: Context<{ today?: string }>): Promise<{ removed: number }> {
				return { removed: await this.sweep(ctx.params.today ?? todayUtc()) };
			},
		},

		// Bulk jobs: replace a process with another for every participant holding it (docs/decisions.md "Bulk jobs").
		...PROCESS_REPLACEMENT_ACTIONS,
	},

	// Events (src/platform/events.ts): every participants node hears them, whichever node made the change.
	events: {
		[EVENTS.catalogChanged](this: ParticipantsThis) {
			// A renamed, hidden or deleted process (or a document type nested in one) must show at once.
			this.processResolver.clear();
			return this.forgetAllReads();
		},
		[EVENTS.accountsChanged](this: ParticipantsThis) {
			// A provider's title is in its participants' answers.
			this.providerResolver.clear();
			return this.forgetAllReads();
		},
	},

	methods: {
		/**
		 * A committed change: its cached reads are dropped, then it is published on the durable channel; a failed
		 * publish throws and the change stays in the outbox.
		 */
		async deliverChange(this: ParticipantsThis, change: ParticipantChange): Promise<void> {
			await this.broker.cacher?.del(participantReadsOf(change));
			await publishOnChannel(this.broker, PARTICIPANTS_CHANGED, change);
		},

		async forgetAllReads(this: ParticipantsThis): Promise<void> {
			await this.broker.cacher?.clean(`${READ_CACHE_ACTION}:**`);
		},

		async sweep(this: ParticipantsThis, today: string): Promise<number> {
			const removed = await this.participants.sweep(today);
			if (removed > 0)
				this.logger.info(`sweeper removed ${removed} participant(s) whose deleteDate arrived (${today})`);
			return removed;
		},
	},

	created(this: ParticipantsThis) {
		this.leftovers = null;
		this.processResolver = new CachedResolver<Process>(
			(identifiers) =>
				this.broker.call<Process[], { identifiers: string[] }>("catalog.processesByIds", { identifiers }),
			copyMaxAgeMs(this.broker, this.settings.resolvedMaxAgeMs),
		);
		this.providerResolver = new CachedResolver<ServiceProvider>(
			(identifiers) =>
				this.broker.call<ServiceProvider[], { identifiers: string[] }>("accounts.serviceProviders", {
					identifiers,
				}),
			copyMaxAgeMs(this.broker, this.settings.resolvedMaxAgeMs),
		);
		this.sweeper = new PeriodicTask(
			() => this.sweep(todayUtc()),
			(error) => this.logger.error("participants sweeper failed:", String(error)),
		);
		this.jobCheck = new PeriodicTask(
			() => this.processReplacements.interruptStale(),
			(error) => this.logger.error("process replacement job check failed:", String(error)),
		);
	},

	async started(this: ParticipantsThis) {
		this.participants = new Participants({
			participants: this.collections.participants,
			claims: this.collections.processClaims,
			processes: this.processResolver,
			providers: this.providerResolver,
			mutex: new KeyedMutex(),
			writer: this,
			serviceProvider: (identifier) =>
				this.broker.call<ServiceProvider | null, { identifier: string }>("accounts.getServiceProvider", {
					identifier,
				}),
			maxWriteAttempts: this.settings.maxWriteAttempts,
		});
		// Every final state has a series from the start, so a first INTERRUPTED is an increase.
		for (const state of ["SUCCEEDED", "FAILED", "INTERRUPTED"])
			countMetric(this.broker, REGISTRY_METRICS.processReplacementJobs, { state }, 0);
		this.processReplacements = new ProcessReplacements({
			store: this.store,
			participants: this.participants,
			jobs: this.collections.processReplacementJobs,
			results: this.collections.processReplacementResults,
			locks: this.collections.jobLocks,
			settings: () => ({
				batchSize: Math.max(1, this.settings.jobBatchSize ?? envNumber("PROCESS_REPLACEMENT_BATCH_SIZE")),
				batchDelayMs: this.settings.jobBatchDelayMs ?? envNumber("PROCESS_REPLACEMENT_BATCH_DELAY_MS"),
				heartbeatMs: this.settings.jobHeartbeatMs,
				staleAfterMs: this.settings.jobStaleAfterMs,
			}),
			node: this.broker.nodeID,
			ended: (state) => countMetric(this.broker, REGISTRY_METRICS.processReplacementJobs, { state }),
			logger: this.logger,
		});
		this.sweeper.start(this.settings.sweepIntervalMs);
		this.startTransfers();
		this.jobCheck.start(this.settings.jobCheckIntervalMs);
		// What a killed process committed but never delivered is in the outbox: deliver it as soon as a
		// lookup listens (an in-process channel drops what it is sent before), not a relay interval later.
		this.leftovers = channelsSubscribed(this.broker)
			.then(() => this.broker.waitForServices(["lookup"], 15000))
			.then(() => this.relayChangesNow(0))
			.catch((error) =>
				this.logger.warn("participant changes left in the outbox wait for the relay:", String(error)),
			);
	},

	async stopped(this: ParticipantsThis) {
		await this.sweeper.stop();
		await this.jobCheck.stop();
		// A running job stops between batches and is marked INTERRUPTED while the store is still open.
		await this.processReplacements?.stopAll();
		await this.leftovers;
	},
};

export default ParticipantsService;
