/**
 * The organization process lookup (spec "Organizations", architecture "Lookup"): the one
 * endpoint anonymous clients hit hardest. It answers from its own read model
 * (organization → processes per participant), fed by participant changes over a durable
 * channel, joined with an in-memory copy of the catalog. It never calls participants on
 * the hot path: a cached answer costs no store read, a miss costs one.
 *
 * Every lookup node holds answers in memory, and all share finished answers in the cacher.
 * Whichever node applies a change publishes the `lookup.invalidated` notice once the read
 * model has it; every node drops its answers for that organization, and trusts no shared
 * answer older than the newest version it has heard of or read (docs/internals.md "Notices").
 */
import { createHash } from "node:crypto";
import type { Context, Service, ServiceSchema } from "moleculer";
import { DbMixin } from "../../mixins/db.mixin";
import { LOOKUP_GROUP, PARTICIPANTS_CHANGED, type ParticipantChange } from "../../src/platform/channels";
import { NotFound, TypeMismatch } from "../../src/contract/errors";
import { DuplicateKey, StaleVersion } from "../../src/store/errors";
import { parseParticipantIdentifier } from "../../src/contract/identifiers";
import type { Caller, Process } from "../../src/contract/model";
import { NOTICES, NOTICES_RESET, noticesOf } from "../../src/platform/notices";
import type { Collection, Store } from "../../src/store/types";
import { AnswerCache, type CachedAnswer, type Visibility } from "./answer-cache";
import {
	applyChange,
	hasParticipants,
	organizationAnswer,
	organizationProcessIds,
	ORGANIZATION_PROCESSES_MODEL,
	rebuildModels,
	type OrganizationProcessesDoc,
} from "./read-model";
import { KeyedMutex } from "../../src/platform/keyed-mutex";

interface Settings {
	/** Seconds a finished answer lives in the shared (Redis) cacher; changes delete it earlier. */
	sharedAnswerTtl: number;
	/**
	 * Organizations (per visibility) whose finished answer this node keeps in memory. Entries
	 * are small (the answers themselves are shared, see `finished`), so the default holds
	 * every organization of a 100,000-participant registry for both visibilities: a warm
	 * lookup never reads the store (docs/performance.md).
	 */
	maxCachedAnswers: number;
	/** Participants read per call during a rebuild. */
	rebuildPageSize: number;
}

interface Meta {
	user?: Caller | null;
}

interface LookupThis extends Service<Settings> {
	store: Store;
	collections: { organizationProcesses: Collection<OrganizationProcessesDoc> };
	catalog: Map<string, Process>;
	catalogLoading: Promise<void> | null;
	catalogGeneration: number;
	answers: AnswerCache<Process[]>;
	/** Finished answers by their JSON: one frozen copy per distinct answer (see `finished`). */
	finishedAnswers: Map<string, Process[]>;
	mutex: KeyedMutex;
	/** The newest read-model version heard of (notices) or read, per organization, while a shared answer could be older. */
	knownVersions: Map<string, { version: number; until: number }>;
	knownVersionsSweptAt: number;
	/** A digest of the catalog copy: a shared answer built from another copy is not taken. */
	catalogDigest: string;
	/** False from a reload's start until one succeeds. */
	catalogCurrent: boolean;
	/** Changes applied while a rebuild runs, re-applied after it wrote its snapshot. */
	rebuildLog: ParticipantChange[] | null;
	rebuilding: Promise<{ organizations: number; participants: number }> | null;

	answer(organizationKey: string, visibility: Visibility): Promise<CachedAnswer<Process[]>>;
	finished(answer: Process[]): Process[];
	memoryAnswer(organizationKey: string, visibility: Visibility): CachedAnswer<Process[]> | undefined;
	applyChange(change: ParticipantChange): Promise<boolean>;
	writeChange(change: ParticipantChange): Promise<{ applied: boolean; version: number }>;
	invalidate(organizationKey?: string, tellOthers?: boolean, version?: number): Promise<void>;
	knowVersion(organizationKey: string, version: number): void;
	knownVersion(organizationKey: string): number;
	sharedGet(organizationKey: string, key: string): Promise<Process[] | undefined>;
	sharedSet(key: string, answer: Process[], version: number, epoch: number): Promise<void>;
	reloadCatalog(cleanShared?: boolean): Promise<void>;
	dropAnswers(cleanShared: boolean): Promise<void>;
	rebuildNow(): Promise<{ organizations: number; participants: number }>;
	readParticipantSets(): Promise<Omit<ParticipantChange, "deleted">[]>;
}

const SHARED_PREFIX = "lookup.answers:";
const MAX_APPLY_ATTEMPTS = 10;
/** Known versions kept beyond this many are swept of expired ones. */
const KNOWN_VERSIONS_SWEEP = 10000;

/** A finished answer in the shared cacher, with what it was built from. */
interface SharedAnswer {
	answer: Process[];
	/** The organization's read-model version. */
	version: number;
	/** The catalog copy's digest. */
	catalog: string;
}

/**
 * Where a finished answer carries its own JSON (UTF-8 bytes). The gateway writes those bytes
 * instead of serializing the same answer again on every request (services/api/api.service.ts,
 * `encodeResponse`); a symbol key is invisible to JSON, to callers' equality checks, and it
 * does not travel over the transporter, so a remote caller simply serializes as before.
 */
const SERIALIZED = Symbol.for("registry.serialized");
/** Distinct finished answers kept; a registry has few (they depend only on the process set). */
const MAX_FINISHED_ANSWERS = 20000;

function deepFreeze<T>(value: T): T {
	if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
		Object.freeze(value);
		for (const child of Object.values(value as object)) deepFreeze(child);
	}
	return value;
}

const CHANGE_PARAMS = {
	participant: { type: "string" },
	organizationKey: { type: "string" },
	processes: { type: "array", items: "string" },
	version: { type: "number", integer: true, min: 1 },
	deleted: { type: "boolean" },
};

function isRetryable(error: unknown): boolean {
	const name = (error as { name?: string })?.name;
	return error instanceof StaleVersion || error instanceof DuplicateKey || name === "StaleVersion" || name === "DuplicateKey";
}

function isChange(payload: unknown): payload is ParticipantChange {
	const change = payload as Partial<ParticipantChange> | null;
	return (
		!!change &&
		typeof change.participant === "string" &&
		typeof change.organizationKey === "string" &&
		Array.isArray(change.processes) &&
		typeof change.version === "number" &&
		typeof change.deleted === "boolean"
	);
}

const LookupService: ServiceSchema<Settings, LookupThis> & { channels: Record<string, unknown> } = {
	name: "lookup",
	mixins: [DbMixin({ organizationProcesses: ORGANIZATION_PROCESSES_MODEL })],
	// The catalog copy is loaded at start: answers are never built without it.
	dependencies: ["catalog"],

	settings: {
		sharedAnswerTtl: 60,
		maxCachedAnswers: 250000,
		rebuildPageSize: 5000,
	},

	actions: {
		organizationProcesses: {
			params: { qualifiedIdentifier: { type: "string" } },
			async handler(this: LookupThis, ctx: Context<{ qualifiedIdentifier: string }, Meta>): Promise<Process[]> {
				const organization = parseParticipantIdentifier(ctx.params.qualifiedIdentifier);
				if (!organization) throw new TypeMismatch(`'${ctx.params.qualifiedIdentifier}' is not an organization qualified identifier`);
				const visibility: Visibility = ctx.meta.user ? "all" : "visible";
				const cached = this.answers.get(AnswerCache.key(organization.organizationKey, visibility));
				const answer = cached !== undefined ? cached : await this.answer(organization.organizationKey, visibility);
				if (answer === null) throw NotFound.organization(ctx.params.qualifiedIdentifier);
				return answer;
			},
		},

		/** Applies one participant change (idempotent: only a newer version per participant counts). */
		apply: {
			params: CHANGE_PARAMS,
			async handler(this: LookupThis, ctx: Context<ParticipantChange>): Promise<{ applied: boolean }> {
				return { applied: await this.applyChange(ctx.params) };
			},
		},

		/** Rebuilds the read model from participants.organizationProcessSets (npm run lookup:rebuild). */
		rebuild: {
			async handler(this: LookupThis): Promise<{ organizations: number; participants: number }> {
				if (!this.rebuilding) {
					this.rebuilding = this.rebuildNow().finally(() => {
						this.rebuilding = null;
					});
				}
				return this.rebuilding;
			},
		},
	},

	channels: {
		[PARTICIPANTS_CHANGED]: {
			group: LOOKUP_GROUP,
			async handler(this: LookupThis, payload: unknown) {
				if (!isChange(payload)) {
					this.logger.warn(`ignoring a malformed ${PARTICIPANTS_CHANGED} message`);
					return;
				}
				await this.applyChange(payload);
			},
		},
	},

	// Notices (src/platform/notices.ts): every lookup node hears them, whichever node made the change.
	events: {
		[NOTICES.catalogChanged](this: LookupThis) {
			// Not awaited here: the hot path waits for the reload itself (catalogLoading).
			void this.reloadCatalog();
		},
		/** A lookup node (maybe this one) applied a change: the answers held here are stale. */
		[NOTICES.lookupInvalidated](this: LookupThis, ctx: Context<{ organizationKey?: string; version?: number }>) {
			const { organizationKey, version } = ctx.params;
			if (typeof organizationKey !== "string") {
				// A rebuild: versions start again from 1.
				this.knownVersions.clear();
				this.answers.invalidate();
				return;
			}
			if (typeof version === "number") this.knowVersion(organizationKey, version);
			this.answers.invalidate(organizationKey);
		},
		/** Notices may have been missed: nothing held here can be trusted (shared answers are checked on reading). */
		[NOTICES_RESET](this: LookupThis) {
			void this.reloadCatalog(false);
		},
	},

	methods: {
		/** A cache miss: the shared cacher, else one read of the model joined with the catalog copy. */
		async answer(this: LookupThis, organizationKey: string, visibility: Visibility): Promise<CachedAnswer<Process[]>> {
			if (this.catalogLoading) await this.catalogLoading;
			const key = AnswerCache.key(organizationKey, visibility);
			const epoch = this.answers.epoch;
			// Held only while this node hears every notice and its catalog copy is current; otherwise answered, not kept.
			const holding = this.catalogCurrent && noticesOf(this.broker).trusted;
			const shared = await this.sharedGet(organizationKey, key);
			if (shared !== undefined) {
				const answer = this.finished(shared);
				if (holding) this.answers.set(key, answer, epoch);
				return answer;
			}
			const doc = await this.collections.organizationProcesses.get(organizationKey);
			if (doc?.version !== undefined) this.knowVersion(organizationKey, doc.version);
			const built = hasParticipants(doc) ? organizationAnswer(organizationProcessIds(doc as OrganizationProcessesDoc), this.catalog, visibility === "visible") : null;
			const answer = built && this.finished(built);
			if (!holding) return answer;
			this.answers.set(key, answer, epoch);
			if (answer) await this.sharedSet(key, answer, doc?.version ?? 0, epoch);
			return answer;
		},

		/**
		 * The answer held in this node's memory, without a call: the gateway's anonymous short
		 * path (services/api/lookup-fast-path.ts). Nothing while the catalog copy reloads, as the action
		 * waits for it then.
		 */
		memoryAnswer(this: LookupThis, organizationKey: string, visibility: Visibility): CachedAnswer<Process[]> | undefined {
			if (this.catalogLoading) return undefined;
			return this.answers.get(AnswerCache.key(organizationKey, visibility));
		},

		/**
		 * The one shared copy of an answer: organizations with the same processes get the same
		 * frozen array (so the in-memory cache costs a map entry per organization, not a copy of
		 * its processes), carrying its JSON bytes under SERIALIZED. Keyed by content, so a copy
		 * is never stale; the whole set is dropped with the catalog copy (`invalidate()`).
		 */
		finished(this: LookupThis, answer: Process[]): Process[] {
			const json = JSON.stringify(answer);
			const known = this.finishedAnswers.get(json);
			if (known) return known;
			if (this.finishedAnswers.size >= MAX_FINISHED_ANSWERS) this.finishedAnswers.clear();
			const copy = JSON.parse(json) as Process[];
			Object.defineProperty(copy, SERIALIZED, { value: Buffer.from(json, "utf8"), enumerable: false });
			deepFreeze(copy);
			this.finishedAnswers.set(json, copy);
			return copy;
		},

		/**
		 * Applies a change and tells every lookup node, also when it was applied before (a
		 * redelivery after a publish that failed): the notice must follow the read model.
		 */
		async applyChange(this: LookupThis, change: ParticipantChange): Promise<boolean> {
			if (this.rebuildLog) this.rebuildLog.push(change);
			const { applied, version } = await this.mutex.run(change.organizationKey, () => this.writeChange(change));
			await this.invalidate(change.organizationKey, true, version);
			return applied;
		},

		/** Read, apply, write back at the read version; a concurrent writer (another node) makes it retry. */
		async writeChange(this: LookupThis, change: ParticipantChange): Promise<{ applied: boolean; version: number }> {
			const models = this.collections.organizationProcesses;
			for (let attempt = 1; ; attempt++) {
				const doc = await models.get(change.organizationKey);
				const next = applyChange(doc, change);
				if (!next) return { applied: false, version: doc?.version ?? 0 };
				try {
					const written = doc ? await models.replace(next, doc.version) : await models.insert(next);
					return { applied: true, version: written.version ?? 0 };
				} catch (error) {
					if (!isRetryable(error) || attempt >= MAX_APPLY_ATTEMPTS) throw error;
				}
			}
		},

		/**
		 * Drops finished answers here and in the shared cacher; with `tellOthers`, publishes the
		 * notice every lookup node drops its own by (and throws when it could not).
		 */
		async invalidate(this: LookupThis, organizationKey?: string, tellOthers = false, version?: number): Promise<void> {
			this.answers.invalidate(organizationKey);
			if (organizationKey !== undefined && version !== undefined) this.knowVersion(organizationKey, version);
			if (organizationKey === undefined) this.finishedAnswers.clear();
			const cacher = this.broker.cacher;
			if (cacher) {
				try {
					if (organizationKey === undefined) await cacher.clean(`${SHARED_PREFIX}*`);
					else await Promise.all((["all", "visible"] as const).map((visibility) => cacher.del(`${SHARED_PREFIX}${AnswerCache.key(organizationKey, visibility)}`)));
				} catch (error) {
					this.logger.warn("lookup: the shared cacher is unavailable:", String(error));
				}
			}
			if (tellOthers) {
				const payload = organizationKey === undefined ? {} : { organizationKey, ...(version !== undefined ? { version } : {}) };
				await noticesOf(this.broker).publish(NOTICES.lookupInvalidated, payload);
			}
		},

		/** Remembers that the organization's read model reached `version` (for as long as a shared answer lives). */
		knowVersion(this: LookupThis, organizationKey: string, version: number): void {
			const until = Date.now() + this.settings.sharedAnswerTtl * 1000;
			const known = this.knownVersions.get(organizationKey);
			if (known && known.version > version) {
				known.until = until;
				return;
			}
			// Swept of expired entries at most once a second: under a stream of changes the map holds a TTL's worth.
			const now = Date.now();
			if (this.knownVersions.size >= KNOWN_VERSIONS_SWEEP && now - this.knownVersionsSweptAt >= 1000) {
				this.knownVersionsSweptAt = now;
				for (const [key, entry] of this.knownVersions) if (entry.until <= now) this.knownVersions.delete(key);
			}
			this.knownVersions.set(organizationKey, { version, until });
		},

		knownVersion(this: LookupThis, organizationKey: string): number {
			const known = this.knownVersions.get(organizationKey);
			return known && known.until > Date.now() ? known.version : 0;
		},

		/**
		 * A shared answer, unless it was built from an older read model than this node has heard
		 * of (a node that read before a change may write after it) or from another catalog copy.
		 */
		async sharedGet(this: LookupThis, organizationKey: string, key: string): Promise<Process[] | undefined> {
			const cacher = this.broker.cacher;
			if (!cacher) return undefined;
			try {
				const value = (await cacher.get(`${SHARED_PREFIX}${key}`)) as SharedAnswer | null;
				if (!value || !Array.isArray(value.answer) || value.catalog !== this.catalogDigest) return undefined;
				if (value.version < this.knownVersion(organizationKey)) return undefined;
				this.knowVersion(organizationKey, value.version);
				return value.answer;
			} catch {
				// A lost Redis must not fail the lookup: the store answers.
				return undefined;
			}
		},

		async sharedSet(this: LookupThis, key: string, answer: Process[], version: number, epoch: number): Promise<void> {
			const cacher = this.broker.cacher;
			if (!cacher || epoch !== this.answers.epoch) return;
			try {
				const shared: SharedAnswer = { answer, version, catalog: this.catalogDigest };
				await cacher.set(`${SHARED_PREFIX}${key}`, shared, this.settings.sharedAnswerTtl);
			} catch {
				// Best effort, as in sharedGet.
			}
		},

		/**
		 * Reloads the catalog copy. The latest reload wins; answers are dropped when it starts
		 * and again when it is done, so none built from the old copy survives. A failed reload
		 * is tried again every second; until one succeeds, answers are given but not held.
		 */
		async reloadCatalog(this: LookupThis, cleanShared = true): Promise<void> {
			const generation = ++this.catalogGeneration;
			this.catalogCurrent = false;
			const loading = this.broker
				.call<Process[], Record<string, never>>("catalog.allProcesses", {})
				.then((processes) => {
					if (generation !== this.catalogGeneration) return;
					this.catalog = new Map(processes.map((process) => [process.identifier, process]));
					this.catalogDigest = createHash("sha256").update(JSON.stringify(processes)).digest("base64");
					this.catalogCurrent = true;
				})
				.catch((error) => {
					this.logger.error("lookup: reloading the catalog failed (tried again in a second); answers keep the previous copy meanwhile:", String(error));
					setTimeout(() => {
						if (generation === this.catalogGeneration) void this.reloadCatalog(cleanShared);
					}, 1000).unref();
				});
			this.catalogLoading = loading;
			await this.dropAnswers(cleanShared);
			await loading;
			if (this.catalogLoading === loading) this.catalogLoading = null;
			await this.dropAnswers(cleanShared);
		},

		/** Every answer held here (and, with `cleanShared`, in the shared cacher) goes. */
		async dropAnswers(this: LookupThis, cleanShared: boolean): Promise<void> {
			if (cleanShared) return this.invalidate();
			this.answers.invalidate();
			this.finishedAnswers.clear();
		},

		async rebuildNow(this: LookupThis): Promise<{ organizations: number; participants: number }> {
			this.rebuildLog = [];
			try {
				const sets = await this.readParticipantSets();
				const models = rebuildModels(sets);
				const collection = this.collections.organizationProcesses.spec.collection;
				await this.store.batch([{ kind: "deleteWhere", collection, filter: {} }, ...models.map((doc) => ({ kind: "insert" as const, collection, doc }))]);
				// Changes that arrived while the snapshot was read may be missing from it: apply them again.
				const during = this.rebuildLog;
				this.rebuildLog = null;
				for (const change of during) await this.mutex.run(change.organizationKey, () => this.writeChange(change));
				await this.invalidate(undefined, true);
				this.logger.info(`lookup rebuilt: ${models.length} organization(s), ${sets.length} participant(s)`);
				return { organizations: models.length, participants: sets.length };
			} finally {
				this.rebuildLog = null;
			}
		},

		/** Every participant's processes, in keyset pages (a page boundary never skips a participant). */
		async readParticipantSets(this: LookupThis): Promise<Omit<ParticipantChange, "deleted">[]> {
			const sets: Omit<ParticipantChange, "deleted">[] = [];
			let after: string | undefined;
			for (;;) {
				const page = await this.broker.call<Omit<ParticipantChange, "deleted">[], { after?: string; limit: number }>("participants.organizationProcessSets", {
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
		this.catalog = new Map();
		this.catalogLoading = null;
		this.catalogGeneration = 0;
		this.answers = new AnswerCache<Process[]>(this.settings.maxCachedAnswers);
		this.finishedAnswers = new Map();
		this.mutex = new KeyedMutex();
		this.knownVersions = new Map();
		this.knownVersionsSweptAt = 0;
		this.catalogDigest = "";
		this.catalogCurrent = false;
		this.rebuildLog = null;
		this.rebuilding = null;
	},

	async started(this: LookupThis) {
		await this.reloadCatalog();
	},
};

export default LookupService;
