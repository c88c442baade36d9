/**
 * The organization process lookup (spec "Organizations", architecture "Lookup"): the one
 * endpoint anonymous clients hit hardest, answered by every lookup node over HTTP (decisions
 * §12). It answers from its read model (organization → processes per participant) joined with
 * a copy of the catalog, behind the answer cache (services/lookup/answer-cache.ts: how fresh an
 * answer is). It never calls participants on the hot path.
 *
 * Participant changes reach it through the durable channel only. Applying one is idempotent (by
 * the participant's version): a redelivery that changes nothing sends nothing. A change that
 * keeps failing is tried again with back-off, then parked for an operator to replay
 * (`registry lookup replay`, docs/operations.md).
 */
import { Cachers, type Context, type Service, type ServiceBroker, type ServiceSchema } from "moleculer";
import type Redis from "ioredis";
import { JSON_TEXT, type RegistryContext } from "../../src/platform/context";
import { DbMixin } from "../../mixins/db.mixin";
import { NotFound, TypeMismatch } from "../../src/contract/errors";
import { parseParticipantIdentifier } from "../../src/contract/identifiers";
import type { Process } from "../../src/contract/model";
import { withBackoff } from "../../src/platform/backoff";
import { LOOKUP_GROUP, PARTICIPANTS_CHANGED, type ParticipantChange } from "../../src/platform/channels";
import { broadcastEvents, copyMaxAgeMs, EVENTS } from "../../src/platform/events";
import { PeriodicTask } from "../../src/platform/periodic-task";
import { newRecordIdentifier } from "../../src/platform/record-identifier";
import { REGISTRY_METRICS, setMetric } from "../../src/platform/registry-metrics";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";
import type { Collection } from "../../src/store/types";
import { env, registryCountry } from "../../src/config/settings";
import { businessCardXml } from "../../src/contract/business-card";
import type { AccessPointEndpoints } from "../../src/contract/endpoints";
import type { ServiceProvider } from "../../src/contract/model";
import { AnswerCache } from "./answer-cache";
import {
	nextCacheGeneration,
	otherStoresProblem,
	readModelStore,
	READ_MODEL_STORE_METADATA,
	READ_MODEL_STORE_MODEL,
	type ReadModelStoreDoc,
} from "./read-model-store";
import { ReferenceCopy } from "./reference-copy";
import { bdxrServiceGroup, bdxrServiceMetadata } from "./smp/bdxr-smp2";
import { splitQualifiedIdentifier } from "./smp/identifiers";
import type { SmpServiceGroup } from "./smp/model";
import { peppolServiceGroup, peppolServiceMetadata } from "./smp/peppol-smp";
import {
	accessPointDirectory,
	serviceGroupOf,
	serviceMetadataOf,
	type AccessPointDirectory,
	type DirectorySources,
} from "./smp/publication";
import { loadOrCreateSigningPair, SmpSigner } from "./smp/signing";
import {
	applyChange,
	businessEntitiesOf,
	holdersMissingFrom,
	mergeParticipantSets,
	organizationAnswer,
	ORGANIZATION_PROCESSES_MODEL,
	PARKED_CHANGES_MODEL,
	type OrganizationProcessesDoc,
	type ParkedChangeDoc,
} from "./read-model";

type ParticipantSet = Omit<ParticipantChange, "deleted">;

interface Settings {
	/** In a cluster, how long a node keeps an answer in memory and how often it reloads its catalog copy (answer-cache.ts). */
	localTtlMs: number;
	/** How long an answer lives in Redis; changes mark it stale earlier. */
	sharedTtlMs: number;
	maxLocalOrganizations: number;
	/** Tries of one change, the first wait, the longest wait (the channel's back-off). */
	applyAttempts: number;
	applyFirstDelayMs: number;
	applyMaxDelayMs: number;
	/** Participants read per call during a rebuild. */
	rebuildPageSize: number;
	/** How often the parked changes are counted for the metric. */
	parkedCountIntervalMs: number;
}

interface LookupThis extends Service<Settings> {
	collections: {
		organizationProcesses: Collection<OrganizationProcessesDoc>;
		parkedChanges: Collection<ParkedChangeDoc>;
		readModelStore: Collection<ReadModelStoreDoc>;
	};
	/** The read-model store's identity (read-model-store.ts), and what is wrong with the lookup nodes around, if anything. */
	storeId: string;
	storeProblem: string | null;
	/** In a cluster, the cache generation read again for an event this node missed. */
	generationReload: PeriodicTask;
	catalog: ReferenceCopy<Process[], Map<string, Process>>;
	/** Who receives through which endpoints, for the SMP answers. */
	directory: ReferenceCopy<DirectorySources, AccessPointDirectory>;
	signer: SmpSigner;
	/** Part of every signed answer's name: answers signed with another certificate are not taken. */
	signerName: string;
	answers: AnswerCache;
	/** REGISTRY_COUNTRY: the business cards' CountryCode. */
	country: string;
	parkedCount: PeriodicTask;
	rebuilding: Promise<{ organizations: number; participants: number }> | null;
	applyChange(change: ParticipantChange): Promise<boolean>;
	announce(doc: OrganizationProcessesDoc): Promise<void>;
	writeModel(
		organizationKey: string,
		next: (doc: OrganizationProcessesDoc | null) => OrganizationProcessesDoc | null,
	): Promise<{ doc: OrganizationProcessesDoc | null; written: boolean }>;
	readinessProblem(): string | null;
	park(payload: unknown, error: unknown): Promise<void>;
	countParked(): Promise<number>;
	rebuildNow(): Promise<{ organizations: number; participants: number }>;
	readParticipantSets(organizationKey?: string): Promise<ParticipantSet[]>;
	serviceGroup(participant: string, format: SmpFormat, host?: string): Promise<string>;
	serviceMetadata(participant: string, documentType: string, format: SmpFormat): Promise<string>;
}

/** The two SMP interfaces (decisions §13): Peppol SMP 1.x at the root, OASIS SMP 2.0 under /bdxr-smp-2/. */
type SmpFormat = "peppol" | "bdxr";

const SMP_GROUP_PARAMS = { participant: { type: "string" }, host: { type: "string", optional: true } } as const;
const SMP_METADATA_PARAMS = { participant: { type: "string" }, documentType: { type: "string" } } as const;

/** 404 of an SMP lookup: no participant of that identifier is registered here (or it is not one). */
function unpublishedParticipant(participant: string): NotFound {
	return new NotFound(`participant ${participant} is not published by this registry`);
}

/** A Host header that may go into a link: a host name or address and a port, nothing else. */
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

const MAX_WRITE_ATTEMPTS = 10;

function isChange(payload: unknown): payload is ParticipantChange {
	const change = payload as Partial<ParticipantChange> | null;
	return (
		!!change &&
		typeof change.participant === "string" &&
		(change.incarnation === undefined || typeof change.incarnation === "string") &&
		typeof change.organizationKey === "string" &&
		Array.isArray(change.processes) &&
		change.processes.every((id) => typeof id === "string") &&
		Number.isInteger(change.version) &&
		typeof change.deleted === "boolean" &&
		(change.serviceProvider === undefined || typeof change.serviceProvider === "string") &&
		[change.name, change.registrationDate, change.icd, change.organizationIdentifier].every(
			(fact) => fact === undefined || typeof fact === "string",
		)
	);
}

/** The cacher's Redis client and key prefix in a cluster; none in one process (a memory cacher). */
function redisOf(broker: ServiceBroker): { client: Redis | null; prefix: string } {
	const cacher = broker.cacher as unknown as { client?: Redis; prefix?: string } | null;
	if (!cacher || broker.cacher instanceof Cachers.Memory) return { client: null, prefix: "" };
	return { client: cacher.client ?? null, prefix: cacher.prefix ?? "" };
}

const LookupService: ServiceSchema<Settings, LookupThis> & { channels: Record<string, unknown> } = {
	name: "lookup",
	mixins: [
		DbMixin({
			organizationProcesses: ORGANIZATION_PROCESSES_MODEL,
			parkedChanges: PARKED_CHANGES_MODEL,
			readModelStore: READ_MODEL_STORE_MODEL,
		}),
	],
	// The catalog copy is loaded at start: answers are never built without it.
	dependencies: ["catalog"],

	settings: {
		localTtlMs: 500,
		sharedTtlMs: 60_000,
		maxLocalOrganizations: 250_000,
		applyAttempts: 8,
		applyFirstDelayMs: 100,
		applyMaxDelayMs: 5000,
		rebuildPageSize: 5000,
		parkedCountIntervalMs: 30_000,
	},

	actions: {
		organizationProcesses: {
			params: { qualifiedIdentifier: { type: "string" } },
			async handler(
				this: LookupThis,
				ctx: RegistryContext<{ qualifiedIdentifier: string }>,
			): Promise<Process[] | string> {
				const organization = parseParticipantIdentifier(ctx.params.qualifiedIdentifier);
				if (!organization)
					throw new TypeMismatch(
						`'${ctx.params.qualifiedIdentifier}' is not an organization qualified identifier`,
					);
				await this.catalog.loaded;
				const { organizationKey } = organization;
				const anonymous = !ctx.meta.user;
				const { digest, value: processes } = this.catalog;
				const text = await this.answers.text(
					organizationKey,
					anonymous ? "visible" : "all",
					digest,
					async () => {
						const doc = await this.collections.organizationProcesses.get(organizationKey);
						return { version: doc?.version ?? 0, answer: organizationAnswer(doc, processes, anonymous) };
					},
				);
				if (text === "null") throw NotFound.organization(ctx.params.qualifiedIdentifier);
				// The gateway writes the text as it is kept; other callers get the object (src/platform/context.ts).
				if (ctx.meta.$textAnswer !== ctx.action?.name) return JSON.parse(text) as Process[];
				ctx.meta.$responseType = JSON_TEXT;
				return text;
			},
		},

		/** SMP lookups (decisions §13, docs/smp.md): the answers as XML text, signed where the specification signs. */
		peppolServiceGroup: {
			params: SMP_GROUP_PARAMS,
			handler(this: LookupThis, ctx: Context<{ participant: string; host?: string }>): Promise<string> {
				return this.serviceGroup(ctx.params.participant, "peppol", ctx.params.host);
			},
		},
		peppolServiceMetadata: {
			params: SMP_METADATA_PARAMS,
			handler(this: LookupThis, ctx: Context<{ participant: string; documentType: string }>): Promise<string> {
				return this.serviceMetadata(ctx.params.participant, ctx.params.documentType, "peppol");
			},
		},
		bdxrServiceGroup: {
			params: SMP_GROUP_PARAMS,
			handler(this: LookupThis, ctx: Context<{ participant: string }>): Promise<string> {
				return this.serviceGroup(ctx.params.participant, "bdxr");
			},
		},
		bdxrServiceMetadata: {
			params: SMP_METADATA_PARAMS,
			handler(this: LookupThis, ctx: Context<{ participant: string; documentType: string }>): Promise<string> {
				return this.serviceMetadata(ctx.params.participant, ctx.params.documentType, "bdxr");
			},
		},

		/**
		 * The organization's Peppol Directory business card (decisions §14, docs/smp.md), cached like the
		 * SMP answers; the network service asks it too, to see the new card is answered before telling
		 * the Directory.
		 */
		businessCard: {
			params: { participant: { type: "string" } },
			async handler(this: LookupThis, ctx: Context<{ participant: string }>): Promise<string> {
				const { participant } = ctx.params;
				const organization = parseParticipantIdentifier(participant);
				if (!organization) throw unpublishedParticipant(participant);
				const { organizationKey } = organization;
				const card = await this.answers.get<string | null>(
					organizationKey,
					"businesscard",
					this.country,
					async () => {
						const doc = await this.collections.organizationProcesses.get(organizationKey);
						const entities = businessEntitiesOf(doc);
						return {
							version: doc?.version ?? 0,
							answer: entities && businessCardXml(organizationKey, entities, this.country),
						};
					},
				);
				if (card === null) throw unpublishedParticipant(participant);
				return card;
			},
		},

		/** Rebuilds the read model from participants.organizationProcessSets (`npm run lookup:rebuild`). */
		rebuild: {
			handler(this: LookupThis): Promise<{ organizations: number; participants: number }> {
				this.rebuilding ??= this.rebuildNow().finally(() => {
					this.rebuilding = null;
				});
				return this.rebuilding;
			},
		},

		/** The changes parked after their retries, oldest first (`registry lookup parked`). */
		parkedChanges: {
			params: { limit: { type: "number", integer: true, min: 1, max: 1000, optional: true, convert: true } },
			handler(this: LookupThis, ctx: Context<{ limit?: number }>): Promise<ParkedChangeDoc[]> {
				return this.collections.parkedChanges.find({
					sort: [{ field: "at", direction: "asc" }],
					limit: ctx.params.limit ?? 100,
				});
			},
		},

		/** Removes a parked change an operator has dealt with (`registry lookup drop`). */
		dropParked: {
			params: { identifier: { type: "string" } },
			async handler(this: LookupThis, ctx: Context<{ identifier: string }>): Promise<{ dropped: boolean }> {
				const dropped = await this.collections.parkedChanges.delete(ctx.params.identifier);
				await this.countParked();
				return { dropped };
			},
		},

		/** Applies the parked changes again and removes those that applied (`registry lookup replay`). */
		replayParked: {
			async handler(this: LookupThis): Promise<{ replayed: number; failed: number }> {
				let replayed = 0;
				let failed = 0;
				for await (const parked of this.collections.parkedChanges.iterate({})) {
					try {
						if (!isChange(parked.change)) throw new Error("not a participant change");
						await this.applyChange(parked.change);
						await this.collections.parkedChanges.delete(parked.identifier);
						replayed++;
					} catch (error) {
						failed++;
						this.logger.warn(`parked change ${parked.identifier} still fails:`, String(error));
					}
				}
				await this.countParked();
				return { replayed, failed };
			},
		},
	},

	channels: {
		/** One message: applied with back-off, else parked (a failed park is the channel's to redeliver). */
		[PARTICIPANTS_CHANGED]: {
			group: LOOKUP_GROUP,
			async handler(this: LookupThis, payload: unknown, message?: { working?(): void }): Promise<void> {
				if (!isChange(payload)) return this.park(payload, new Error("malformed participant change"));
				try {
					await withBackoff(() => this.applyChange(payload), {
						attempts: this.settings.applyAttempts,
						firstDelayMs: this.settings.applyFirstDelayMs,
						maxDelayMs: this.settings.applyMaxDelayMs,
						// JetStream redelivers a message not acknowledged in time: the work goes on.
						beforeWait: () => message?.working?.(),
					});
				} catch (error) {
					await this.park(payload, error);
				}
			},
		},
	},

	// Events (src/platform/events.ts): every lookup node hears them, whichever node made the change.
	events: {
		[EVENTS.catalogChanged](this: LookupThis) {
			return this.catalog
				.reload()
				.catch((error) => this.logger.warn("lookup: catalog reload failed:", String(error)));
		},
		[EVENTS.accessPointsChanged](this: LookupThis) {
			return this.directory
				.reload()
				.catch((error) => this.logger.warn("lookup: access point directory reload failed:", String(error)));
		},
		[EVENTS.accountsChanged](this: LookupThis) {
			return this.directory
				.reload()
				.catch((error) => this.logger.warn("lookup: access point directory reload failed:", String(error)));
		},
		[EVENTS.lookupInvalidated](
			this: LookupThis,
			ctx: Context<{ organizationKey?: unknown; cacheGeneration?: unknown }>,
		) {
			const { organizationKey, cacheGeneration } = ctx.params;
			if (typeof cacheGeneration === "number") this.answers.useGeneration(cacheGeneration);
			this.answers.forget(typeof organizationKey === "string" ? organizationKey : undefined);
		},
		// Another lookup node came or went: is any on another read-model store (read-model-store.ts)?
		"$services.changed"(this: LookupThis) {
			if (!this.storeId) return;
			const problem = otherStoresProblem(this.broker, this.name, this.storeId);
			if (problem === this.storeProblem) return;
			if (problem) this.logger.error(`lookup: not ready: ${problem}`);
			else this.logger.info("lookup: no lookup node on another read-model store any more: ready");
			this.storeProblem = problem;
		},
	},

	methods: {
		/** A service group: its content cached like the lookup's answers, its links written for this request. */
		async serviceGroup(this: LookupThis, participant: string, format: SmpFormat, host?: string): Promise<string> {
			const organization = parseParticipantIdentifier(participant);
			if (!organization) throw unpublishedParticipant(participant);
			await this.catalog.loaded;
			const catalog = this.catalog.value;
			const group = await this.answers.get<SmpServiceGroup | null>(
				organization.organizationKey,
				"smp-group",
				this.catalog.digest,
				async () => {
					const doc = await this.collections.organizationProcesses.get(organization.organizationKey);
					return { version: doc?.version ?? 0, answer: serviceGroupOf(doc, catalog) };
				},
			);
			if (!group) throw unpublishedParticipant(participant);
			if (format === "bdxr") return bdxrServiceGroup(group);
			const publicUrl = env("SMP_PUBLIC_URL") || `http://${host && HOST.test(host) ? host : "localhost"}`;
			return peppolServiceGroup(group, publicUrl);
		},

		/** A signed service metadata answer, cached signed (signing costs milliseconds; a cached answer none). */
		async serviceMetadata(
			this: LookupThis,
			participant: string,
			documentType: string,
			format: SmpFormat,
		): Promise<string> {
			const organization = parseParticipantIdentifier(participant);
			if (!organization) throw unpublishedParticipant(participant);
			const asked = splitQualifiedIdentifier(documentType);
			const unknownDocumentType = () =>
				new NotFound(`document type ${documentType} is not published for ${participant}`);
			if (!asked) throw unknownDocumentType();
			await Promise.all([this.catalog.loaded, this.directory.loaded]);
			const [catalog, directory] = [this.catalog.value, this.directory.value];
			const answer = await this.answers.get<string | null>(
				organization.organizationKey,
				`smp-${format}|${this.signerName}|${documentType}`,
				`${this.catalog.digest}.${this.directory.digest}`,
				async () => {
					const doc = await this.collections.organizationProcesses.get(organization.organizationKey);
					const metadata = serviceMetadataOf(doc, catalog, directory, asked);
					const signed = !metadata
						? null
						: format === "peppol"
							? this.signer.signPeppol(peppolServiceMetadata(metadata))
							: this.signer.signBdxr(bdxrServiceMetadata(metadata));
					return { version: doc?.version ?? 0, answer: signed };
				},
			);
			if (answer !== null) return answer;
			// Which one is missing: an unknown participant's 404 names the participant.
			await this.serviceGroup(participant, format);
			throw unknownDocumentType();
		},

		/**
		 * Applies a change, and announces the model's last change while that lags (this delivery wrote it,
		 * or an earlier one did and its node stopped before announcing): a redelivery of an announced change sends nothing.
		 */
		async applyChange(this: LookupThis, change: ParticipantChange): Promise<boolean> {
			const { doc } = await this.writeModel(change.organizationKey, (current) => applyChange(current, change));
			if (!doc || (doc.announcedVersion ?? doc.version ?? 0) >= (doc.version ?? 0)) return false;
			await this.announce(doc);
			return true;
		},

		/**
		 * Redis marked (else the cache generation moved on), the announcement recorded in the model, then every
		 * node told: a redelivery once the change shows sends nothing, and a node that misses the event expires its copy.
		 */
		async announce(this: LookupThis, doc: OrganizationProcessesDoc): Promise<void> {
			const { identifier: organizationKey } = doc;
			const version = doc.version ?? 1;
			const marked = await this.answers.changed(organizationKey, version);
			const cacheGeneration = marked ? undefined : await nextCacheGeneration(this.collections.readModelStore);
			if (cacheGeneration !== undefined) this.answers.useGeneration(cacheGeneration);
			try {
				// The version this write gets: the model and its announcement agree.
				await this.collections.organizationProcesses.replace(
					{ ...doc, announcedVersion: version + 1 },
					version,
				);
			} catch (error) {
				// A newer change was written meanwhile: its writer announces it.
				if (!isStaleVersion(error)) throw error;
			}
			await broadcastEvents(this.broker, [
				{
					name: EVENTS.lookupInvalidated,
					payload: {
						organizationKey,
						version,
						...(cacheGeneration !== undefined ? { cacheGeneration } : {}),
					},
				},
			]);
		},

		/**
		 * Read, change, write back at the read version (another node's write makes it read again); the model
		 * as stored after it, and whether it was written. A written change is not announced yet.
		 */
		async writeModel(
			this: LookupThis,
			organizationKey: string,
			next: (doc: OrganizationProcessesDoc | null) => OrganizationProcessesDoc | null,
		): Promise<{ doc: OrganizationProcessesDoc | null; written: boolean }> {
			const models = this.collections.organizationProcesses;
			for (let attempt = 1; ; attempt++) {
				const doc = await models.get(organizationKey);
				const proposed = next(doc);
				if (!proposed) return { doc, written: false };
				const changed = { ...proposed, announcedVersion: doc?.announcedVersion ?? 0 };
				try {
					const written = doc ? await models.replace(changed, doc.version) : await models.insert(changed);
					return { doc: written, written: true };
				} catch (error) {
					const raced = isStaleVersion(error) || isDuplicateKey(error);
					if (!raced || attempt >= MAX_WRITE_ATTEMPTS) throw error;
				}
			}
		},

		/** For readiness (src/platform/health.ts): other lookup nodes on another read-model store. */
		readinessProblem(this: LookupThis): string | null {
			return this.storeId ? otherStoresProblem(this.broker, this.name, this.storeId) : null;
		},

		async park(this: LookupThis, payload: unknown, error: unknown): Promise<void> {
			this.logger.error("lookup: a participant change failed after its retries and is parked:", String(error));
			await this.collections.parkedChanges.insert({
				identifier: newRecordIdentifier(),
				at: new Date().toISOString(),
				change: payload,
				error: String(error),
			});
			await this.countParked();
		},

		async countParked(this: LookupThis): Promise<number> {
			const parked = await this.collections.parkedChanges.count();
			setMetric(this.broker, REGISTRY_METRICS.lookupParkedChanges, parked);
			return parked;
		},

		/**
		 * Merges the participants' current state into the read model, organization by organization,
		 * at each holder's newer version: a change another node applies meanwhile is kept. A holder
		 * the read misses is confirmed by a fresh read of its organization before it is removed.
		 */
		async rebuildNow(this: LookupThis): Promise<{ organizations: number; participants: number }> {
			const sets = await this.readParticipantSets();
			const byOrganization = new Map<string, ParticipantSet[]>();
			for (const set of sets)
				byOrganization.set(set.organizationKey, [...(byOrganization.get(set.organizationKey) ?? []), set]);
			const organizations = new Set(byOrganization.keys());
			for await (const doc of this.collections.organizationProcesses.iterate({}))
				if (holdersMissingFrom(doc, byOrganization.get(doc.identifier))) organizations.add(doc.identifier);
			let refused = false;
			for (const organizationKey of organizations) {
				let read = byOrganization.get(organizationKey) ?? [];
				const doc = await this.collections.organizationProcesses.get(organizationKey);
				if (doc && holdersMissingFrom(doc, read)) read = await this.readParticipantSets(organizationKey);
				const { doc: merged, written } = await this.writeModel(organizationKey, (current) =>
					mergeParticipantSets(current, organizationKey, read),
				);
				if (written && merged && !(await this.answers.changed(organizationKey, merged.version ?? 1)))
					refused = true;
			}
			// One event for all; a refused mark moves the cache generation on (the models' announcements
			// are not recorded: a redelivered change announces its organization once more).
			const cacheGeneration = refused ? await nextCacheGeneration(this.collections.readModelStore) : undefined;
			if (cacheGeneration !== undefined) this.answers.useGeneration(cacheGeneration);
			await broadcastEvents(this.broker, [
				{ name: EVENTS.lookupInvalidated, payload: cacheGeneration !== undefined ? { cacheGeneration } : {} },
			]);
			this.logger.info(`lookup rebuilt: ${byOrganization.size} organization(s), ${sets.length} participant(s)`);
			return { organizations: byOrganization.size, participants: sets.length };
		},

		/** Participants' processes (of one organization, or all), in keyset pages: a page boundary never skips one. */
		async readParticipantSets(this: LookupThis, organizationKey?: string): Promise<ParticipantSet[]> {
			const sets: ParticipantSet[] = [];
			let after: string | undefined;
			for (;;) {
				const page = await this.broker.call<
					ParticipantSet[],
					{ organizationKey?: string; after?: string; limit: number }
				>("participants.organizationProcessSets", {
					...(organizationKey !== undefined ? { organizationKey } : {}),
					...(after !== undefined ? { after } : {}),
					limit: this.settings.rebuildPageSize,
				});
				sets.push(...page);
				if (page.length < this.settings.rebuildPageSize) return sets;
				after = page[page.length - 1].participant;
			}
		},
	},

	created(this: LookupThis) {
		this.country = registryCountry();
		this.catalog = new ReferenceCopy(
			() => this.broker.call<Process[], Record<string, never>>("catalog.allProcesses", {}),
			(processes) => new Map(processes.map((process) => [process.identifier, process])),
			new Map(),
			(error) =>
				this.logger.warn("lookup: catalog reload failed (the previous copy answers meanwhile):", String(error)),
		);
		this.directory = new ReferenceCopy(
			async () => ({
				serviceProviders: await this.broker.call<ServiceProvider[], Record<string, never>>(
					"accounts.serviceProviders",
					{},
				),
				accessPoints: await this.broker.call<AccessPointEndpoints[], Record<string, never>>(
					"accessPoints.endpointsOf",
					{},
				),
			}),
			accessPointDirectory,
			new Map(),
			(error) =>
				this.logger.warn(
					"lookup: access point directory reload failed (the previous copy answers meanwhile):",
					String(error),
				),
		);
		const redis = redisOf(this.broker);
		this.answers = new AnswerCache({
			redis: redis.client,
			prefix: redis.prefix,
			localTtlMs: copyMaxAgeMs(this.broker, this.settings.localTtlMs),
			sharedTtlMs: this.settings.sharedTtlMs,
			maxLocalOrganizations: this.settings.maxLocalOrganizations,
			onRedisError: (error) =>
				this.logger.debug("lookup: Redis unavailable, answering from the store:", String(error)),
		});
		this.parkedCount = new PeriodicTask(
			() => this.countParked(),
			(error) => this.logger.warn("lookup: counting parked changes failed:", String(error)),
		);
		this.rebuilding = null;
		this.storeId = "";
		this.storeProblem = null;
		this.generationReload = new PeriodicTask(
			async () =>
				this.answers.useGeneration((await readModelStore(this.collections.readModelStore)).cacheGeneration),
			(error) => this.logger.warn("lookup: reading the cache generation failed:", String(error)),
		);
	},

	async started(this: LookupThis) {
		// Before this service is registered: the other nodes see the store's identity with it.
		const store = await readModelStore(this.collections.readModelStore);
		this.storeId = store.storeId;
		this.metadata[READ_MODEL_STORE_METADATA] = store.storeId;
		this.answers.useGeneration(store.cacheGeneration);
		if (redisOf(this.broker).client)
			this.generationReload.start(copyMaxAgeMs(this.broker, this.settings.localTtlMs));
		const pair = await loadOrCreateSigningPair({
			keyFile: env("SMP_KEY_FILE"),
			certificateFile: env("SMP_CERTIFICATE_FILE"),
			dataDir: env("DATA_DIR"),
			log: this.logger,
		});
		this.signer = new SmpSigner(pair.privateKey, pair.certificate);
		this.signerName = this.signer.fingerprint;
		await this.catalog.reload();
		this.catalog.start(copyMaxAgeMs(this.broker, this.settings.localTtlMs));
		// JSON lookups do not wait for the directory: only the SMP service metadata answers need it. The wait
		// ends when the broker stops (Moleculer's own polls on until its timeout and would keep a stopped process alive).
		void (async () => {
			while (!this.broker.stopping) {
				try {
					await this.broker.waitForServices(["accounts", "accessPoints"], 1000);
				} catch {
					continue; // not yet: wait again, unless stopping
				}
				return this.directory.reload();
			}
		})().catch((error) => this.logger.warn("lookup: access point directory not loaded yet:", String(error)));
		this.directory.start(copyMaxAgeMs(this.broker, this.settings.localTtlMs));
		await this.countParked();
		this.parkedCount.start(this.settings.parkedCountIntervalMs);
	},

	async stopped(this: LookupThis) {
		await this.generationReload.stop();
		await this.catalog.stop();
		await this.directory.stop();
		await this.parkedCount.stop();
		this.answers.stop();
	},
};

export default LookupService;
