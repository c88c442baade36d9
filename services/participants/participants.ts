/**
 * Participants (spec "Participants", decisions §4–§7): an organization's customer relation with
 * one service provider. The reads and changes the participants service offers, over its store;
 * the service (participants.service.ts) adapts actions to these methods. Every change is one
 * batch (services/participants/changes.ts), delivered once committed (`writeAudited`).
 */
import { Readable } from "node:stream";
import { instantBound } from "../../src/contract/dates";
import { entityTagOfAnswer, ifMatchHolds } from "../../src/contract/entity-tags";
import {
	BadRequest,
	Conflict,
	NotFound,
	PreconditionFailed,
	TypeMismatch,
	ValidationFailed,
	type Violation,
} from "../../src/contract/errors";
import {
	organizationKey,
	parseParticipantIdentifier,
	participantQualifiedIdentifier,
} from "../../src/contract/identifiers";
import type { Caller, Contact, Participant, Process, Reference, ServiceProvider } from "../../src/contract/model";
import { pageOf, type Page, type PageRequest } from "../../src/contract/paging";
import type { KeyedMutex } from "../../src/platform/keyed-mutex";
import { newRecordIdentifier } from "../../src/platform/record-identifier";
import type { OutboxThis } from "../../mixins/outbox.mixin";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";
import type { Collection, Filter, Query, WriteOp } from "../../src/store/types";
import { participantAnswer, processesOf } from "./answers";
import { conflictOf, planChange, type PlannedChange } from "./changes";
import type { ParticipantDoc, ProcessClaimDoc } from "./model";
import { canDelete, canRead, readScope, requireServiceProvider } from "./ownership";
import type { CachedResolver } from "./resolver";
import { deleteDateViolations, isDue, organizationViolations, processViolations, readParticipantQuery } from "./rules";

export interface AddForm {
	icd: string;
	organizationIdentifier: string;
	name?: string | null;
	processes: Reference[];
	contact: Contact;
}

export interface UpdateForm {
	processes: Reference[];
	contact: Contact;
	deleteDate?: string | null;
}

/** The query parameters of the participant finds (src/contract/operations.ts `participantQuery`). */
export interface FindFilters {
	/** Organization number or name words (decisions §7). */
	query?: string;
	/** Only participants changed at or after this date or date-time (the registry's extension). */
	modifiedSince?: string;
}

/** What a caller may read, narrowed by `modifiedSince`. */
function findScope(caller: Caller | null | undefined, filters: FindFilters): Filter {
	const scope = readScope(caller);
	return filters.modifiedSince === undefined
		? scope
		: { ...scope, lastModificationDate: { gte: instantBound("modifiedSince", filters.modifiedSince, "from") } };
}

/** A participant path value, as the gateway passes it (docs/internals.md). */
export interface Address {
	identifier?: string;
	qualifiedIdentifier?: string;
}

type Purpose = "read" | "write" | "delete";

/** What the process rules are checked against (decisions §6). */
export interface ProcessCheck {
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

export interface ParticipantsParts {
	participants: Collection<ParticipantDoc>;
	claims: Collection<ProcessClaimDoc>;
	processes: CachedResolver<Process>;
	providers: CachedResolver<ServiceProvider>;
	/** Changes to one participant queue here (in this process). */
	mutex: KeyedMutex;
	/** The service: `writeAudited` commits a change's one batch, then delivers it (mixins/outbox.mixin.ts). */
	writer: Pick<OutboxThis, "writeAudited">;
	serviceProvider(identifier: string): Promise<ServiceProvider | null>;
	/** Attempts of a change that lost an optimistic version race before it answers 409. */
	maxWriteAttempts: number;
}

export function requestedIdentifiers(processes: Reference[]): string[] {
	const identifiers: string[] = [];
	for (const process of processes) identifiers.push(process.identifier.toLowerCase());
	return identifiers;
}

/** Participants per chunk of the array form. */
const STREAM_PAGE = 500;

export class Participants {
	constructor(private readonly parts: ParticipantsParts) {}

	get collection(): Collection<ParticipantDoc> {
		return this.parts.participants;
	}

	get claims(): Collection<ProcessClaimDoc> {
		return this.parts.claims;
	}

	get processes(): CachedResolver<Process> {
		return this.parts.processes;
	}

	get providers(): CachedResolver<ServiceProvider> {
		return this.parts.providers;
	}

	// ---- reads --------------------------------------------------------------------------

	async find(
		caller: Caller | null | undefined,
		page: PageRequest,
		filters: FindFilters,
		withProcesses: boolean,
	): Promise<Page<Participant>> {
		const query = await this.storeQuery(findScope(caller, filters), filters.query);
		const [docs, total] = await Promise.all([
			this.parts.participants.find({
				...query,
				sort: page.sort,
				offset: page.page * page.size,
				limit: page.size,
			}),
			this.parts.participants.count(query),
		]);
		return pageOf(await this.answers(docs, withProcesses), total, page);
	}

	/**
	 * The array form: the JSON array of every match, in the store's order, written a page at a
	 * time as the client reads it, so no answer holds the whole registry in memory. The scope and
	 * the query are decided before the first byte: a refusal is still an error answer.
	 */
	async stream(caller: Caller | null | undefined, filters: FindFilters, withProcesses: boolean): Promise<Readable> {
		const query = await this.storeQuery(findScope(caller, filters), filters.query);
		return Readable.from(this.arrayChunks(query, withProcesses), { objectMode: false });
	}

	/** `[`, the items page by page (each page's providers and processes resolved at once), `]`: JSON.stringify's bytes. */
	private async *arrayChunks(query: Query, withProcesses: boolean): AsyncGenerator<Buffer> {
		let opened = false;
		const chunkOf = async (docs: ParticipantDoc[]): Promise<Buffer> => {
			const items = (await this.answers(docs, withProcesses)).map((item) => JSON.stringify(item)).join(",");
			const chunk = Buffer.from(`${opened ? "," : "["}${items}`, "utf8");
			opened = true;
			return chunk;
		};
		let docs: ParticipantDoc[] = [];
		for await (const doc of this.parts.participants.iterate(query)) {
			docs.push(doc);
			if (docs.length < STREAM_PAGE) continue;
			yield await chunkOf(docs);
			docs = [];
		}
		if (docs.length) yield await chunkOf(docs);
		yield Buffer.from(opened ? "]" : "[]", "utf8");
	}

	async get(caller: Caller | null | undefined, address: Address): Promise<Participant> {
		return this.singleAnswer(await this.addressed(caller, address, "read"));
	}

	async processesOf(caller: Caller | null | undefined, address: Address): Promise<Process[]> {
		const doc = await this.addressed(caller, address, "read");
		return processesOf(doc, await this.parts.processes.resolve(doc.processIds));
	}

	/** List items: provider always; processes when asked (one catalog call for the page). */
	async answers(docs: ParticipantDoc[], withProcesses: boolean): Promise<Participant[]> {
		const providerIds = docs.map((doc) => doc.serviceProvider);
		const processIds = withProcesses ? docs.flatMap((doc) => doc.processIds) : null;
		const knownProviders = this.parts.providers.known(providerIds);
		const knownProcesses = processIds && this.parts.processes.known(processIds);
		const [providers, processes] =
			knownProviders && (!processIds || knownProcesses)
				? [knownProviders, knownProcesses]
				: await Promise.all([
						this.parts.providers.resolve(providerIds),
						processIds ? this.parts.processes.resolve(processIds) : Promise.resolve(null),
					]);
		return docs.map((doc) =>
			participantAnswer(
				doc,
				providers.get(doc.serviceProvider),
				processes ? processesOf(doc, processes) : undefined,
			),
		);
	}

	async singleAnswer(doc: ParticipantDoc): Promise<Participant> {
		const { providers, processes } = this.parts;
		const provider = providers.known([doc.serviceProvider]) ?? (await providers.resolve([doc.serviceProvider]));
		const resolved = processes.known(doc.processIds) ?? (await processes.resolve(doc.processIds));
		return participantAnswer(doc, provider.get(doc.serviceProvider), processesOf(doc, resolved));
	}

	// ---- changes ------------------------------------------------------------------------

	async add(caller: Caller | null | undefined, form: AddForm): Promise<Participant> {
		const owner = requireServiceProvider(caller);
		const doc = await this.newParticipant(owner.serviceProvider, form);
		const planned = planChange(owner, "addParticipant", null, doc);
		await this.commit([planned]);
		return this.singleAnswer(planned.after as ParticipantDoc);
	}

	async update(
		caller: Caller | null | undefined,
		address: Address,
		form: UpdateForm,
		today: string,
		ifMatch?: string,
	): Promise<Participant> {
		const requested = requestedIdentifiers(form.processes);
		return this.changeAddressed(caller, address, "write", async (before) => {
			await this.requireMatch(ifMatch, before);
			const violations = await this.checkProcesses({
				icd: before.icd,
				organizationKey: before.organizationKey,
				requested,
				current: before.processIds,
				self: before.identifier,
			});
			violations.push(...deleteDateViolations(form.deleteDate, today));
			if (violations.length > 0) throw new ValidationFailed(violations);
			const after: ParticipantDoc = {
				...before,
				contact: form.contact,
				processIds: requested,
				deleteDate: form.deleteDate === undefined ? before.deleteDate : form.deleteDate,
				lastModificationDate: new Date().toISOString(),
			};
			const planned = planChange(caller ?? null, "updateParticipant", before, after);
			await this.commit([planned]);
			return this.singleAnswer(planned.after as ParticipantDoc);
		});
	}

	async remove(caller: Caller | null | undefined, address: Address, ifMatch?: string): Promise<void> {
		const operation =
			address.qualifiedIdentifier !== undefined ? "deleteParticipantByQualifiedIdentifier" : "deleteParticipant";
		await this.changeAddressed(caller, address, "delete", async (before) => {
			await this.requireMatch(ifMatch, before);
			await this.commit([planChange(caller ?? null, operation, before, null)]);
		});
	}

	async transfer(
		caller: Caller | null | undefined,
		address: Address,
		target: string,
		ifMatch?: string,
	): Promise<void> {
		await this.changeAddressed(caller, address, "write", async (before) => {
			await this.requireMatch(ifMatch, before);
			await this.commit([
				planChange(caller ?? null, "transferParticipant", before, await this.movedTo(before, target)),
			]);
		});
	}

	/** The participant as a transfer to `target` leaves it (the rules of every transfer: the contract's and a consented one). */
	async movedTo(before: ParticipantDoc, target: string): Promise<ParticipantDoc> {
		if (target === before.serviceProvider)
			throw new BadRequest("A participant cannot be transferred to the service provider it already belongs to");
		const provider = await this.parts.serviceProvider(target);
		if (!provider) throw NotFound.instance("ServiceProvider", target);
		return { ...before, serviceProvider: target, lastModificationDate: new Date().toISOString() };
	}

	/** Read-modify-write of one participant (transfers, bulk jobs): queued behind its other changes in this process, `work` re-run on a lost version race. */
	exclusive<T>(participant: string, work: () => Promise<T>): Promise<T> {
		return this.parts.mutex.run(participant, () => this.withRetries(work));
	}

	/** Removes every participant whose deleteDate has arrived; each removal is an audited change. */
	async sweep(today: string): Promise<number> {
		let removed = 0;
		for (let round = 0; round < 1000; round++) {
			const due = await this.parts.participants.find({ filter: { deleteDate: { lte: today } }, limit: 100 });
			if (due.length === 0) break;
			for (const candidate of due) {
				const done = await this.parts.mutex.run(candidate.identifier, () =>
					this.withRetries(async () => {
						const doc = await this.parts.participants.get(candidate.identifier);
						if (!doc || !isDue(doc.deleteDate, today)) return false;
						await this.commit([planChange(null, "sweepParticipant", doc, null)]);
						return true;
					}),
				);
				if (done) removed++;
			}
		}
		return removed;
	}

	/** One batch for all planned changes (and `alongside`: writes that must commit with them), delivered once committed; a unique key that refuses it becomes a 409. */
	async commit(changes: PlannedChange[], alongside: WriteOp[] = []): Promise<void> {
		const ops: WriteOp[] = [];
		for (const planned of changes) ops.push(...planned.ops);
		try {
			await this.parts.writer.writeAudited([...ops, ...alongside]);
		} catch (error) {
			throw isDuplicateKey(error) ? await conflictOf(error, changes, this.parts.claims) : error;
		}
	}

	async withRetries<T>(attempt: () => Promise<T>): Promise<T> {
		for (let attempts = 1; ; attempts++) {
			try {
				return await attempt();
			} catch (error) {
				if (!isStaleVersion(error)) throw error;
				if (attempts >= this.parts.maxWriteAttempts)
					throw new Conflict("The participant was changed concurrently; try again");
			}
		}
	}

	/**
	 * `If-Match` (docs/decisions.md "Safe writes"): checked on every attempt against the answer the
	 * participant gives now; the write that follows expects this version, so a change that slips in
	 * between makes the attempt retry and this check refuse it.
	 */
	private async requireMatch(ifMatch: string | undefined, doc: ParticipantDoc): Promise<void> {
		if (ifMatch === undefined) return;
		if (!ifMatchHolds(ifMatch, entityTagOfAnswer(await this.singleAnswer(doc))))
			throw new PreconditionFailed("Participant", doc.identifier);
	}

	// ---- rules --------------------------------------------------------------------------

	/** Process rules of decisions §6, on what the catalog and the organization's other participants hold now. */
	async checkProcesses(input: ProcessCheck): Promise<Violation[]> {
		const known = await this.parts.processes.resolve(input.requested);
		// Other participants' processes only satisfy dependencies: without one, the store is not asked.
		let dependent = false;
		for (const process of known.values()) if (process.dependencies?.length) dependent = true;
		const heldByOthers =
			input.heldElsewhere ??
			(dependent ? await this.heldByOthers(input.organizationKey, input.self) : new Set<string>());
		return processViolations({
			icd: input.icd,
			requested: input.requested,
			known,
			current: input.current,
			heldByOthers,
		});
	}

	async newParticipant(serviceProvider: string, form: AddForm, identifier?: string): Promise<ParticipantDoc> {
		const key = organizationKey(form.icd, form.organizationIdentifier);
		const requested = requestedIdentifiers(form.processes);
		const violations = organizationViolations(form.icd, form.organizationIdentifier);
		violations.push(
			...(await this.checkProcesses({ icd: form.icd, organizationKey: key, requested, current: [], self: null })),
		);
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
	}

	private async heldByOthers(key: string, self: string | null): Promise<Set<string>> {
		const held = new Set<string>();
		for (const other of await this.parts.participants.find({ filter: { organizationKey: key } }))
			if (other.identifier !== self) for (const id of other.processIds) held.add(id);
		return held;
	}

	/**
	 * The participant a path value names, as this caller may see it (decisions §4). A qualified
	 * identifier means "my participant for that organization"; a UUID that is another provider's
	 * answers 404, exactly as if it did not exist.
	 */
	async addressed(caller: Caller | null | undefined, address: Address, purpose: Purpose): Promise<ParticipantDoc> {
		if (address.qualifiedIdentifier !== undefined) {
			const organization = parseParticipantIdentifier(address.qualifiedIdentifier);
			if (!organization)
				throw new TypeMismatch(`'${address.qualifiedIdentifier}' is not a participant qualified identifier`);
			const owner = requireServiceProvider(caller);
			const doc = await this.parts.participants.findOne({
				serviceProvider: owner.serviceProvider,
				organizationKey: organization.organizationKey,
			});
			if (!doc) throw NotFound.organization(address.qualifiedIdentifier);
			return doc;
		}
		if (address.identifier === undefined)
			throw new TypeMismatch("A participant identifier or qualified identifier is required");
		const doc = await this.parts.participants.get(address.identifier.toLowerCase());
		const allowed =
			doc !== null &&
			(purpose === "read"
				? canRead(caller as Caller, doc)
				: purpose === "delete"
					? canDelete(caller, doc)
					: requireServiceProvider(caller).serviceProvider === doc.serviceProvider);
		if (!doc || !allowed) {
			readScope(caller); // a caller with no access at all gets 403, not a 404
			throw NotFound.instance("Participant", address.identifier);
		}
		return doc;
	}

	/** Read-modify-write of one participant: queued per participant here, re-read on every attempt so a lost race is retried on fresh data. */
	private async changeAddressed<T>(
		caller: Caller | null | undefined,
		address: Address,
		purpose: Purpose,
		work: (before: ParticipantDoc) => Promise<T>,
	): Promise<T> {
		const first = await this.addressed(caller, address, purpose);
		return this.parts.mutex.run(first.identifier, () =>
			this.withRetries(async () => work(await this.addressed(caller, address, purpose))),
		);
	}

	/**
	 * decisions §7: a query equal to an organization identifier (or icd:identifier) matches
	 * that participant exactly; only when it matches none is it read as name words.
	 */
	private async storeQuery(scope: Filter, text: string | undefined): Promise<Pick<Query, "filter" | "words">> {
		const query = readParticipantQuery(text);
		if (!query) return { filter: scope };
		const exact: Filter[] = [];
		if (query.organizationKey) exact.push({ ...scope, organizationKey: query.organizationKey });
		if (query.organizationIdentifier)
			exact.push({ ...scope, organizationIdentifier: query.organizationIdentifier });
		for (const filter of exact) {
			if ((await this.parts.participants.count({ filter })) > 0) return { filter };
		}
		return { filter: scope, words: query.words };
	}
}
