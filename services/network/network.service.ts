/**
 * Joining the network (decisions §14): keeps the SML's list of this SMP's participants equal to
 * the registry's, and tells the Peppol Directory when an organization's business card changes.
 *
 * Participants records, in the same store batch as each change, that the organization needs
 * delivering (its `networkOutbox`); its relay hands those to `network.enqueue`, which marks the
 * organization due here. The delivery then decides from the organization's participants at that
 * moment, a batch of organizations at a time: Create (CreateList) where it has participants and
 * the SML lacks it, Delete (DeleteList) where it has none. Failures retry with back-off and park
 * after `parkAfterMs` (`registry sml` lists, `registry sml replay` replays). Reconciliation
 * (start, every SML_SYNC_INTERVAL, `registry sml sync`) reads the SML's list and marks what
 * differs. With neither SML_URL nor DIRECTORY_URL set, nothing is kept and both states are "off".
 */
import { createHash } from "node:crypto";
import type { Context, Service, ServiceSchema } from "moleculer";
import { DbMixin } from "../../mixins/db.mixin";
import { businessCardXml, type BusinessEntity } from "../../src/contract/business-card";
import { NotFound, TypeMismatch } from "../../src/contract/errors";
import { parseParticipantIdentifier } from "../../src/contract/identifiers";
import { seesEverything } from "../../src/contract/model";
import { brokerEnv, isOperatorTool } from "../../src/platform/broker";
import type { RegistryContext } from "../../src/platform/context";
import { PeriodicTask } from "../../src/platform/periodic-task";
import { REGISTRY_METRICS, setMetric } from "../../src/platform/registry-metrics";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";
import type { Collection, WriteOp } from "../../src/store/types";
import { networkConfig, type NetworkConfig } from "./connections";
import { isGone, settle, stateOf, type Outcome, type RetryPolicy } from "./delivery";
import { DirectoryClient } from "./directory-client";
import { participantDnsNames, PARTICIPANT_SCHEME } from "./dns-names";
import {
	due,
	failing,
	NETWORK_ORGANIZATIONS_MODEL,
	newOrganizationDoc,
	parked,
	TARGETS,
	type NetworkOrganizationDoc,
	type Target,
} from "./model";
import { SmlClient } from "./sml-client";
import { SmlFault } from "./sml-soap";

/** A participant as its organization's business card and the access check need it (participants.organizationCards). */
export interface CardParticipant extends BusinessEntity {
	participant: string;
	serviceProvider: string;
}

interface Settings extends RetryPolicy {
	/** Organizations per SML run (one CreateList and one DeleteList at most). */
	smlBatchSize: number;
	directoryBatchSize: number;
	/** How often due deliveries are looked for without being asked. */
	deliverIntervalMs: number;
	/** How long a run holds the organizations it took (another node leaves them alone meanwhile). */
	claimMs: number;
	/** Participants read per call when reconciling. */
	reconcilePageSize: number;
}

/** What the SML holds that the registry does not, and the other way round (`registry sml status`). */
export interface Differences {
	registry: number;
	sml: number;
	missing: string[];
	stray: string[];
}

/** What a reconciliation found in the SML's list, and when it began reading it. */
interface SmlPresence {
	found: Map<string, boolean>;
	readAt: string;
}

interface StateOfTarget {
	state: ReturnType<typeof stateOf>;
	message: string | null;
	at: string | null;
}

export interface NetworkState {
	sml: StateOfTarget;
	directory: StateOfTarget;
	dns: { naptr: string; cname: string };
}

interface NetworkThis extends Service<Settings> {
	collections: { organizations: Collection<NetworkOrganizationDoc> };
	config: NetworkConfig;
	sml: SmlClient | null;
	directory: DirectoryClient | null;
	smpRecord: StateOfTarget;
	deliveries: PeriodicTask;
	reconciliation: PeriodicTask;
	running: Promise<void> | null;
	again: boolean;
	kick(): Promise<void>;
	deliverAll(): Promise<void>;
	deliverSml(): Promise<number>;
	deliverDirectory(): Promise<number>;
	dueNow(target: Target, limit: number): Promise<NetworkOrganizationDoc[]>;
	claim(docs: NetworkOrganizationDoc[], target: Target): Promise<NetworkOrganizationDoc[]>;
	record(claimed: NetworkOrganizationDoc[], target: Target, outcomes: Map<string, Outcome>): Promise<void>;
	update(
		key: string,
		change: (doc: NetworkOrganizationDoc | null) => NetworkOrganizationDoc | null,
	): Promise<NetworkOrganizationDoc | null>;
	markDue(keys: string[], presence?: SmlPresence): Promise<void>;
	cards(keys: string[]): Promise<Record<string, CardParticipant[]>>;
	ensureSmpRecord(): Promise<void>;
	reconcile(): Promise<Differences>;
	joinSml(): Promise<void>;
	deliveryCounts(target: Target): Promise<{ pending: number; failing: number; parked: number }>;
	differences(): Promise<Differences>;
	countDeliveries(): Promise<void>;
}

const participantValue = (organizationKey: string) => `${PARTICIPANT_SCHEME}::${organizationKey}`;

const cardDigest = (card: string | null) => (card === null ? "none" : createHash("sha256").update(card).digest("hex"));

const NetworkService: ServiceSchema<Settings, NetworkThis> = {
	name: "network",
	mixins: [DbMixin({ organizations: NETWORK_ORGANIZATIONS_MODEL })],

	settings: {
		smlBatchSize: 100,
		directoryBatchSize: 20,
		deliverIntervalMs: 1000,
		claimMs: 60_000,
		reconcilePageSize: 5000,
		firstDelayMs: 1000,
		maxDelayMs: 5 * 60_000,
		parkAfterMs: 24 * 3600_000,
		waitMs: 250,
	},

	actions: {
		/** GET /rest/api/network/{qualifiedIdentifier}: what the network knows of an organization. */
		organizationState: {
			params: { qualifiedIdentifier: { type: "string" } },
			async handler(
				this: NetworkThis,
				ctx: RegistryContext<{ qualifiedIdentifier: string }>,
			): Promise<NetworkState> {
				const { qualifiedIdentifier } = ctx.params;
				const organization = parseParticipantIdentifier(qualifiedIdentifier);
				if (!organization)
					throw new TypeMismatch(`'${qualifiedIdentifier}' is not an organization qualified identifier`);
				const key = organization.organizationKey;
				const [participants, doc] = await Promise.all([
					this.cards([key]).then((cards) => cards[key] ?? []),
					this.collections.organizations.get(key),
				]);
				const caller = ctx.meta.user;
				// decisions §4: a service provider sees only organizations it has a participant of.
				const visible = seesEverything(caller)
					? participants.length > 0 || doc !== null
					: participants.some((participant) => participant.serviceProvider === caller?.serviceProvider);
				if (!visible) throw NotFound.organization(qualifiedIdentifier);
				const stateFor = (target: Target, configured: boolean): StateOfTarget => ({
					state: stateOf(doc, target, configured),
					message: doc?.[target].message ?? null,
					at: doc?.[target].at ?? null,
				});
				return {
					sml: stateFor("sml", this.sml !== null),
					directory: stateFor("directory", this.directory !== null),
					dns: participantDnsNames(key, this.config.zone),
				};
			},
		},

		/** The participants' network outbox, delivered by their relay: these organizations are due. */
		enqueue: {
			params: {
				records: { type: "array", items: { type: "object", props: { organizationKey: "string" } } },
			},
			async handler(
				this: NetworkThis,
				ctx: Context<{ records: { organizationKey: string }[] }>,
			): Promise<{ due: number }> {
				if (!this.sml && !this.directory) return { due: 0 };
				const keys = [...new Set(ctx.params.records.map((record) => record.organizationKey))];
				await this.markDue(keys);
				// An operator tool's service only records them: the registry's own nodes deliver.
				if (!isOperatorTool(this.broker)) void this.kick();
				return { due: keys.length };
			},
		},

		/** Runs every due delivery now and waits (operators, tests, the bench). */
		deliverNow: {
			async handler(this: NetworkThis): Promise<{ smlCalls: number; directoryCalls: number }> {
				await this.kick();
				return { smlCalls: this.sml?.calls ?? 0, directoryCalls: this.directory?.calls ?? 0 };
			},
		},

		/** The SMP record and what differs between the SML's list and the registry's; changes nothing (`registry sml status`). */
		status: {
			async handler(this: NetworkThis) {
				if (!this.sml) return { sml: "off", directory: this.directory ? "on" : "off" };
				const [differences, counts] = await Promise.all([this.differences(), this.deliveryCounts("sml")]);
				return { smpRecord: this.smpRecord, ...differences, ...counts };
			},
		},

		/** Reconciles now: marks the missing and stray organizations due, delivers them, and answers the differences found (`registry sml sync`). */
		sync: {
			async handler(this: NetworkThis): Promise<Differences> {
				if (!this.sml) throw new Error("SML_URL is not set: there is no SML to reconcile with");
				return this.reconcile();
			},
		},

		/** The parked deliveries, oldest failure first (`registry sml`). */
		parked: {
			params: { limit: { type: "number", integer: true, min: 1, max: 1000, optional: true, convert: true } },
			async handler(this: NetworkThis, ctx: Context<{ limit?: number }>) {
				const limit = ctx.params.limit ?? 100;
				const listed = [];
				for (const target of TARGETS) {
					const docs = await this.collections.organizations.find({
						filter: { [parked(target)]: true },
						limit,
					});
					for (const doc of docs) listed.push({ organization: doc.identifier, target, ...doc[target] });
				}
				return listed.slice(0, limit);
			},
		},

		/** Delivers the parked organizations again (`registry sml replay`). */
		replayParked: {
			async handler(this: NetworkThis): Promise<{ replayed: number }> {
				let replayed = 0;
				for (const target of TARGETS)
					for await (const doc of this.collections.organizations.iterate({
						filter: { [parked(target)]: true },
					})) {
						await this.update(
							doc.identifier,
							(current) =>
								current && {
									...current,
									[parked(target)]: false,
									[due(target)]: new Date().toISOString(),
									[target]: { ...current[target], attempts: 0, failingSince: null },
								},
						);
						replayed++;
					}
				await this.kick();
				return { replayed };
			},
		},
	},

	methods: {
		/** Runs the deliveries until nothing is due now; a kick during a run makes one more round. */
		kick(this: NetworkThis): Promise<void> {
			if (this.running) {
				this.again = true;
				return this.running;
			}
			this.running = (async () => {
				do {
					this.again = false;
					// What a run took and could not finish is due again once its claim lapses.
					await this.deliverAll().catch((error) =>
						this.logger.warn("network: delivery run failed:", String(error)),
					);
				} while (this.again);
			})().finally(() => {
				this.running = null;
			});
			return this.running;
		},

		async deliverAll(this: NetworkThis): Promise<void> {
			for (;;) {
				const [sml, directory] = await Promise.all([this.deliverSml(), this.deliverDirectory()]);
				if (sml + directory === 0) break;
			}
			await this.countDeliveries();
		},

		/** One batch of due SML deliveries: a CreateList and a DeleteList, one call each where the SML refuses a list. */
		async deliverSml(this: NetworkThis): Promise<number> {
			const sml = this.sml;
			if (!sml) return 0;
			const docs = await this.claim(await this.dueNow("sml", this.settings.smlBatchSize), "sml");
			if (docs.length === 0) return 0;
			const cards = await this.cards(docs.map((doc) => doc.identifier));
			const creates = docs.filter((doc) => (cards[doc.identifier] ?? []).length > 0 && doc.sml.present !== true);
			const deletes = docs.filter(
				(doc) => (cards[doc.identifier] ?? []).length === 0 && doc.sml.present !== false,
			);
			const outcomes = new Map<string, Outcome>();
			for (const doc of docs)
				outcomes.set(doc.identifier, { kind: "done", present: (cards[doc.identifier] ?? []).length > 0 });
			const send = async (
				batch: NetworkOrganizationDoc[],
				list: (values: string[]) => Promise<void>,
				one: (value: string) => Promise<void>,
			) => {
				const values = batch.map((doc) => doc.identifier);
				const failed = (key: string, error: unknown) =>
					outcomes.set(key, {
						kind: "failed",
						message: error instanceof Error ? error.message : String(error),
					});
				try {
					if (values.length > 1) return await list(values);
					if (values.length === 1) return await one(values[0]);
				} catch (error) {
					// A list the SML refused goes one by one (so one bad value does not hold back the rest); an outage fails them all.
					if (!(error instanceof SmlFault) || values.length === 1)
						return values.forEach((key) => failed(key, error));
				}
				for (const key of values) await one(key).catch((error) => failed(key, error));
			};
			await send(
				creates,
				(values) => sml.createList(values),
				(value) => sml.create(value),
			);
			await send(
				deletes,
				(values) => sml.deleteList(values),
				(value) => sml.delete(value),
			);
			await this.record(docs, "sml", outcomes);
			return docs.length;
		},

		/**
		 * One batch of due Directory deliveries. The Directory fetches the card as soon as it is told,
		 * so it is told only once the lookup nodes answer the card the participants make now.
		 */
		async deliverDirectory(this: NetworkThis): Promise<number> {
			const directory = this.directory;
			if (!directory) return 0;
			const docs = await this.claim(
				await this.dueNow("directory", this.settings.directoryBatchSize),
				"directory",
			);
			if (docs.length === 0) return 0;
			const cards = await this.cards(docs.map((doc) => doc.identifier));
			const outcomes = new Map<string, Outcome>();
			await Promise.all(
				docs.map(async (doc) => {
					const entities = cards[doc.identifier] ?? [];
					const expected = entities.length
						? businessCardXml(doc.identifier, entities, this.config.country)
						: null;
					const card = cardDigest(expected);
					let outcome: Outcome;
					if (doc.directory.card === card) outcome = { kind: "done", present: expected !== null, card };
					else {
						const served = await this.broker
							.call<string, { participant: string }>("lookup.businessCard", {
								participant: participantValue(doc.identifier),
							})
							// 404: no card (the organization has no participant); any other failure: not answered yet.
							.catch((error: { code?: number }) => (error.code === 404 ? null : undefined));
						if (served !== expected)
							outcome = {
								kind: "waiting",
								message: "waiting for the lookup nodes to answer the new business card",
							};
						else
							outcome = await (
								expected ? directory.changed(doc.identifier) : directory.removed(doc.identifier)
							).then(
								(): Outcome => ({ kind: "done", present: expected !== null, card }),
								(error: Error): Outcome => ({ kind: "failed", message: error.message }),
							);
					}
					outcomes.set(doc.identifier, outcome);
				}),
			);
			await this.record(docs, "directory", outcomes);
			return docs.length;
		},

		dueNow(this: NetworkThis, target: Target, limit: number): Promise<NetworkOrganizationDoc[]> {
			return this.collections.organizations.find({
				filter: { [due(target)]: { lte: new Date().toISOString() } },
				sort: [{ field: due(target), direction: "asc" }],
				limit,
			});
		},

		/** Moves each document's due time past the run, at its version: another node's run skips what this one took. */
		async claim(
			this: NetworkThis,
			docs: NetworkOrganizationDoc[],
			target: Target,
		): Promise<NetworkOrganizationDoc[]> {
			const until = new Date(Date.now() + this.settings.claimMs).toISOString();
			const organizations = this.collections.organizations;
			const claimed = docs.map((doc) => ({ ...doc, [due(target)]: until }));
			const ops: WriteOp[] = claimed.map((doc) => ({
				kind: "replace",
				collection: organizations.spec.collection,
				doc,
				expectedVersion: doc.version,
			}));
			try {
				await this.store.batch(ops);
				return claimed;
			} catch (error) {
				if (!isStaleVersion(error)) throw error;
			}
			// Another writer touched one of them: claim each on its own, leaving the changed ones.
			const each = await Promise.all(
				claimed.map((doc) =>
					organizations.replace(doc, doc.version).then(
						() => doc,
						(error) => {
							if (isStaleVersion(error)) return null;
							throw error;
						},
					),
				),
			);
			return each.filter((doc): doc is NetworkOrganizationDoc => doc !== null);
		},

		/** Records the outcomes of a run in one batch; documents changed meanwhile (a newer change) are settled one by one. */
		async record(
			this: NetworkThis,
			claimed: NetworkOrganizationDoc[],
			target: Target,
			outcomes: Map<string, Outcome>,
		): Promise<void> {
			const organizations = this.collections.organizations;
			const now = new Date();
			const claimedDue = new Map(claimed.map((doc) => [doc.identifier, doc[due(target)]]));
			const settled = (doc: NetworkOrganizationDoc) =>
				settle(
					doc,
					target,
					outcomes.get(doc.identifier) as Outcome,
					claimedDue.get(doc.identifier) ?? null,
					now,
					this.settings,
				);
			const current = await organizations.getMany([...claimedDue.keys()]);
			const ops: WriteOp[] = current.map((doc) => ({
				kind: "replace",
				collection: organizations.spec.collection,
				doc: settled(doc),
				expectedVersion: doc.version,
			}));
			try {
				await this.store.batch(ops);
			} catch (error) {
				if (!isStaleVersion(error)) throw error;
				await Promise.all(
					current.map((doc) => this.update(doc.identifier, (fresh) => fresh && settled(fresh))),
				);
			}
			for (const [key, outcome] of outcomes)
				if (outcome.kind === "failed")
					this.logger.warn(`network: ${target} delivery of ${key} failed (retried):`, outcome.message);
			for (const doc of current.map(settled).filter(isGone)) {
				const fresh = await organizations.get(doc.identifier);
				if (fresh && isGone(fresh))
					await organizations.delete(fresh.identifier, fresh.version).catch(() => false);
			}
		},

		/** Read, change, write back at the read version; another writer makes it read again. */
		async update(this: NetworkThis, key, change) {
			const organizations = this.collections.organizations;
			for (let attempt = 1; ; attempt++) {
				const doc = await organizations.get(key);
				const next = change(doc);
				if (!next) return doc;
				try {
					return doc ? await organizations.replace(next, doc.version) : await organizations.insert(next);
				} catch (error) {
					if (!(isStaleVersion(error) || isDuplicateKey(error)) || attempt >= 10) throw error;
				}
			}
		},

		/**
		 * Marks organizations due now for every configured target (a parked one is taken up again:
		 * a new change is a new delivery). `presence`: what reconciliation found the SML to hold.
		 */
		async markDue(this: NetworkThis, keys: string[], presence?: SmlPresence): Promise<void> {
			const now = new Date().toISOString();
			const targets = TARGETS.filter((target) => (target === "sml" ? this.sml : this.directory));
			const organizations = this.collections.organizations;
			for (let start = 0; start < keys.length; start += 500) {
				const chunk = keys.slice(start, start + 500);
				for (let attempt = 1; ; attempt++) {
					const known = new Map((await organizations.getMany(chunk)).map((doc) => [doc.identifier, doc]));
					const ops: WriteOp[] = chunk.map((key) => {
						const doc = { ...(known.get(key) ?? newOrganizationDoc(key)) };
						// The SML's list is news only where no delivery is due or under way, or ended since it
						// was read: those know the SML's own answer.
						const settled = doc.smlDue === null && (doc.sml.at ?? "") < (presence?.readAt ?? "");
						const found = settled ? presence?.found.get(key) : undefined;
						if (found !== undefined) doc.sml = { ...doc.sml, present: found };
						for (const target of targets)
							Object.assign(doc, { [due(target)]: now, [parked(target)]: false });
						return known.has(key)
							? {
									kind: "replace",
									collection: organizations.spec.collection,
									doc,
									expectedVersion: doc.version,
								}
							: { kind: "insert", collection: organizations.spec.collection, doc };
					});
					try {
						await this.store.batch(ops);
						break;
					} catch (error) {
						if (!(isStaleVersion(error) || isDuplicateKey(error)) || attempt >= 10) throw error;
					}
				}
			}
		},

		/** The organizations' participants, as their cards and the access check need them. */
		cards(this: NetworkThis, keys: string[]): Promise<Record<string, CardParticipant[]>> {
			return this.broker.call("participants.organizationCards", { organizationKeys: keys });
		},

		/** Reads the SMP's record and creates or corrects it; retried in the background until the SML answers. */
		async ensureSmpRecord(this: NetworkThis): Promise<void> {
			const sml = this.sml;
			const wanted = this.config.sml?.record;
			if (!sml || !wanted) return;
			const found = await sml.readSmp();
			if (!found) await sml.createSmp(wanted);
			else if (found.logicalAddress !== wanted.logicalAddress || found.physicalAddress !== wanted.physicalAddress)
				await sml.updateSmp(wanted);
			this.smpRecord = { state: "registered", message: null, at: new Date().toISOString() };
			this.logger.info(
				`network: SMP ${wanted.smpId} is registered in the SML (${wanted.logicalAddress}, ${wanted.physicalAddress})`,
			);
		},

		/** The registry's organizations with participants against the SML's list, page by page. */
		async differences(this: NetworkThis): Promise<Differences> {
			const sml = this.sml as SmlClient;
			const registry = new Set<string>();
			let after: string | undefined;
			for (;;) {
				const page = await this.broker.call<{ participant: string; organizationKey: string }[], object>(
					"participants.organizationProcessSets",
					{ ...(after !== undefined ? { after } : {}), limit: this.settings.reconcilePageSize },
				);
				for (const set of page) registry.add(set.organizationKey);
				if (page.length < this.settings.reconcilePageSize) break;
				after = page[page.length - 1].participant;
			}
			const listed = await sml.list();
			const missing = [...registry].filter((key) => !listed.has(key)).sort();
			const stray = [...listed].filter((key) => !registry.has(key)).sort();
			return { registry: registry.size, sml: listed.size, missing, stray };
		},

		async countDeliveries(this: NetworkThis): Promise<void> {
			for (const target of TARGETS) {
				if (target === "sml" ? !this.sml : !this.directory) continue;
				const counts = await this.deliveryCounts(target);
				for (const state of ["pending", "failing", "parked"] as const)
					setMetric(this.broker, REGISTRY_METRICS.networkDeliveries, counts[state], { target, state });
			}
		},

		/** Organizations whose delivery to `target` is due, failing (and retried), or parked. */
		async deliveryCounts(this: NetworkThis, target: Target) {
			const organizations = this.collections.organizations;
			const [pending, failingNow, parkedNow] = await Promise.all([
				organizations.count({ filter: { [due(target)]: { gte: "" } } }),
				organizations.count({ filter: { [failing(target)]: true, [parked(target)]: false } }),
				organizations.count({ filter: { [parked(target)]: true } }),
			]);
			return { pending, failing: failingNow, parked: parkedNow };
		},

		/** Marks the organizations the SML misses and its stray ones due, delivers them, and answers the differences found. */
		async reconcile(this: NetworkThis): Promise<Differences> {
			const readAt = new Date().toISOString();
			const differences = await this.differences();
			const found = new Map<string, boolean>();
			for (const key of differences.missing) found.set(key, false);
			for (const key of differences.stray) found.set(key, true);
			await this.markDue([...found.keys()], { found, readAt });
			await this.kick();
			return differences;
		},

		/** The SMP record made or corrected (once), then a reconciliation: at start, and every SML_SYNC_INTERVAL. */
		async joinSml(this: NetworkThis): Promise<void> {
			try {
				if (this.smpRecord.state !== "registered") await this.ensureSmpRecord();
				const differences = await this.reconcile();
				if (differences.missing.length || differences.stray.length)
					this.logger.info(
						`network: reconciled with the SML: ${differences.missing.length} missing, ${differences.stray.length} stray`,
					);
			} catch (error) {
				if (this.smpRecord.state !== "registered")
					this.smpRecord = { state: "failing", message: String(error), at: new Date().toISOString() };
				throw error;
			}
		},
	},

	created(this: NetworkThis) {
		// A configuration error stops the start here, with its message (decisions §14).
		this.config = networkConfig(brokerEnv(this.broker));
		const { sml, directory } = this.config;
		this.sml = sml ? new SmlClient(sml.url, sml.record.smpId, sml.tls) : null;
		this.directory = directory ? new DirectoryClient(directory.url, directory.tls) : null;
		this.smpRecord = { state: sml ? "pending" : "off", message: null, at: null };
		this.running = null;
		this.again = false;
		const warn = (what: string) => (error: unknown) => this.logger.warn(`network: ${what} failed:`, String(error));
		this.deliveries = new PeriodicTask(() => this.kick(), warn("delivery"));
		this.reconciliation = new PeriodicTask(() => this.joinSml(), warn("reconciliation with the SML"));
	},

	async started(this: NetworkThis) {
		if ((!this.sml && !this.directory) || isOperatorTool(this.broker)) return;
		this.deliveries.start(this.settings.deliverIntervalMs);
		void this.kick();
		if (!this.sml) return;
		// Readiness does not wait for the SML: the record and the first reconciliation are made when it answers.
		const interval = this.config.syncIntervalSeconds * 1000;
		void (async () => {
			for (
				let wait = this.settings.firstDelayMs;
				!this.broker.stopping;
				wait = Math.min(wait * 2, this.settings.maxDelayMs)
			) {
				try {
					await this.broker.waitForServices(["participants"], 5000);
					await this.joinSml();
					break;
				} catch (error) {
					this.logger.warn("network: the SML is not reachable yet (retried):", String(error));
					await new Promise((resolve) => setTimeout(resolve, wait).unref());
				}
			}
			if (interval > 0 && !this.broker.stopping) this.reconciliation.start(interval);
		})();
	},

	async stopped(this: NetworkThis) {
		await this.deliveries.stop();
		await this.reconciliation.stop();
		await this.running;
		this.sml?.close();
		this.directory?.close();
	},
};

export default NetworkService;
