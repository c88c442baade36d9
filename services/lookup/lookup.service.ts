/**
 * The organization process lookup (spec "Organizations", architecture "Lookup"): the one
 * endpoint anonymous clients hit hardest. It answers from its own read model (organization →
 * processes per participant), fed by participant changes over a durable channel, joined with
 * a copy of the catalog it keeps in memory, and shares finished answers through the cacher.
 * It never calls participants on the hot path. (The gateway holds finished answers too:
 * services/api/held-answers.ts.)
 *
 * Whichever node applies a change publishes the `lookup.invalidated` notice once the read model
 * has it, also for a change it had applied before: every gateway and lookup node drops what it
 * holds for that organization (docs/internals.md "Notices").
 */
import { Cachers, type Context, type Service, type ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { DbMixin } from "../../mixins/db.mixin";
import { NotFound, TypeMismatch } from "../../src/contract/errors";
import { parseParticipantIdentifier } from "../../src/contract/identifiers";
import type { Process } from "../../src/contract/model";
import { LOOKUP_GROUP, PARTICIPANTS_CHANGED, type ParticipantChange } from "../../src/platform/channels";
import { KeyedMutex } from "../../src/platform/keyed-mutex";
import { NOTICES, NOTICES_RESET, noticesOf } from "../../src/platform/notices";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";
import type { Collection, Store } from "../../src/store/types";
import { CatalogCopy } from "./catalog-copy";
import {
	applyChange,
	hasParticipants,
	organizationAnswer,
	organizationProcessIds,
	ORGANIZATION_PROCESSES_MODEL,
	rebuildModels,
	type OrganizationProcessesDoc,
} from "./read-model";
import { SharedAnswers, type Visibility } from "./shared-answers";

interface Settings {
	/** Seconds a finished answer lives in the shared cacher; changes delete it earlier. */
	sharedAnswerTtl: number;
	/** Participants read per call during a rebuild. */
	rebuildPageSize: number;
}

interface LookupThis extends Service<Settings> {
	store: Store;
	collections: { organizationProcesses: Collection<OrganizationProcessesDoc> };
	catalog: CatalogCopy;
	shared: SharedAnswers;
	mutex: KeyedMutex;
	/** Changes applied while a rebuild runs, re-applied after it wrote its snapshot. */
	rebuildLog: ParticipantChange[] | null;
	rebuilding: Promise<{ organizations: number; participants: number }> | null;
	answer(organizationKey: string, visibility: Visibility): Promise<Process[] | null>;
	applyChange(change: ParticipantChange): Promise<boolean>;
	writeChange(change: ParticipantChange): Promise<{ applied: boolean; version: number }>;
	reloadCatalog(): Promise<void>;
	rebuildNow(): Promise<{ organizations: number; participants: number }>;
	readParticipantSets(): Promise<Omit<ParticipantChange, "deleted">[]>;
}

const MAX_APPLY_ATTEMPTS = 10;

const CHANGE_PARAMS = {
	participant: { type: "string" },
	organizationKey: { type: "string" },
	processes: { type: "array", items: "string" },
	version: { type: "number", integer: true, min: 1 },
	deleted: { type: "boolean" },
};

function isRetryable(error: unknown): boolean {
	return isStaleVersion(error) || isDuplicateKey(error);
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
		rebuildPageSize: 5000,
	},

	actions: {
		organizationProcesses: {
			params: { qualifiedIdentifier: { type: "string" } },
			async handler(this: LookupThis, ctx: RegistryContext<{ qualifiedIdentifier: string }>): Promise<Process[]> {
				const organization = parseParticipantIdentifier(ctx.params.qualifiedIdentifier);
				if (!organization)
					throw new TypeMismatch(
						`'${ctx.params.qualifiedIdentifier}' is not an organization qualified identifier`,
					);
				const answer = await this.answer(organization.organizationKey, ctx.meta.user ? "all" : "visible");
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
			handler(this: LookupThis): Promise<{ organizations: number; participants: number }> {
				this.rebuilding ??= this.rebuildNow().finally(() => {
					this.rebuilding = null;
				});
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
			void this.reloadCatalog();
		},
		[NOTICES.lookupInvalidated](this: LookupThis, ctx: Context<{ organizationKey?: string; version?: number }>) {
			const { organizationKey, version } = ctx.params;
			if (typeof organizationKey !== "string") this.shared.forgetVersions();
			else if (typeof version === "number") this.shared.knowVersion(organizationKey, version);
		},
		[NOTICES_RESET](this: LookupThis) {
			void this.catalog.reload();
		},
	},

	methods: {
		/** The shared answer, else one read of the model joined with the catalog copy (null: no participant). */
		async answer(this: LookupThis, organizationKey: string, visibility: Visibility): Promise<Process[] | null> {
			if (this.catalog.loading) await this.catalog.loading;
			const { digest } = this.catalog;
			const epoch = this.shared.epoch;
			const shared = await this.shared.get(organizationKey, visibility, digest);
			if (shared !== undefined) return shared;
			const doc = await this.collections.organizationProcesses.get(organizationKey);
			if (doc?.version !== undefined) this.shared.knowVersion(organizationKey, doc.version);
			if (!hasParticipants(doc)) return null;
			const answer = organizationAnswer(
				organizationProcessIds(doc as OrganizationProcessesDoc),
				this.catalog.processes,
				visibility === "visible",
			);
			// Shared only while this node hears every notice and its catalog copy is current.
			if (this.catalog.current && noticesOf(this.broker).trusted)
				await this.shared.set(organizationKey, visibility, answer, doc?.version ?? 0, digest, epoch);
			return answer;
		},

		/**
		 * Applies a change and tells every node, also when it was applied before (a redelivery
		 * after a publish that failed): the notice must follow the read model. A failed publish
		 * fails the apply, so the channel delivers the change again.
		 */
		async applyChange(this: LookupThis, change: ParticipantChange): Promise<boolean> {
			if (this.rebuildLog) this.rebuildLog.push(change);
			const { applied, version } = await this.mutex.run(change.organizationKey, () => this.writeChange(change));
			this.shared.knowVersion(change.organizationKey, version);
			await this.shared.invalidate(change.organizationKey);
			await noticesOf(this.broker).publish(NOTICES.lookupInvalidated, {
				organizationKey: change.organizationKey,
				version,
			});
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

		/** Reloads the catalog copy; answers shared from the old copy are dropped (and would not be taken anyway). */
		async reloadCatalog(this: LookupThis): Promise<void> {
			const loading = this.catalog.reload();
			await this.shared.invalidate();
			await loading;
		},

		async rebuildNow(this: LookupThis): Promise<{ organizations: number; participants: number }> {
			this.rebuildLog = [];
			try {
				const sets = await this.readParticipantSets();
				const models = rebuildModels(sets);
				const collection = this.collections.organizationProcesses.spec.collection;
				await this.store.batch([
					{ kind: "deleteWhere", collection, filter: {} },
					...models.map((doc) => ({ kind: "insert" as const, collection, doc })),
				]);
				// Changes that arrived while the snapshot was read may be missing from it: apply them again.
				const during = this.rebuildLog;
				this.rebuildLog = null;
				for (const change of during)
					await this.mutex.run(change.organizationKey, () => this.writeChange(change));
				this.shared.forgetVersions();
				await this.shared.invalidate();
				await noticesOf(this.broker).publish(NOTICES.lookupInvalidated, {});
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
				const page = await this.broker.call<
					Omit<ParticipantChange, "deleted">[],
					{ after?: string; limit: number }
				>("participants.organizationProcessSets", {
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
		this.catalog = new CatalogCopy(
			() => this.broker.call<Process[], Record<string, never>>("catalog.allProcesses", {}),
			(error) =>
				this.logger.error(
					"lookup: reloading the catalog failed (tried again in a second); answers keep the previous copy meanwhile:",
					String(error),
				),
		);
		this.shared = new SharedAnswers(
			// Only a cacher other processes read: in one process the gateway holds every answer already.
			() => (this.broker.cacher instanceof Cachers.Memory ? null : this.broker.cacher),
			this.settings.sharedAnswerTtl,
			(error) => this.logger.warn("lookup: the shared cacher is unavailable:", String(error)),
		);
		this.mutex = new KeyedMutex();
		this.rebuildLog = null;
		this.rebuilding = null;
	},

	async started(this: LookupThis) {
		await this.reloadCatalog();
	},
};

export default LookupService;
