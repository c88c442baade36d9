/**
 * The catalog's rules over its store: processes, document types and capabilities
 * (spec "Document types", "Processes"; decisions §4, §6). The service (catalog.service.ts)
 * only adapts actions to these methods, broadcasts the returned changes and cleans its cache.
 */
import { entityTagOfAnswer, ifMatchHolds } from "../../src/contract/entity-tags";
import { Conflict, NotFound, PreconditionFailed, ValidationFailed, type Violation } from "../../src/contract/errors";
import type { Caller, DocumentType, Process } from "../../src/contract/model";
import { pageOf, type Page, type PageRequest } from "../../src/contract/paging";
import { SeedRefused } from "../../src/exchange/seed";
import type { CapabilitySeed, DocumentTypeSeed, ProcessSeed } from "../../src/exchange/seed-file";
import { referencesOutside, validateSeed } from "../../src/exchange/seed-validation";
import { planUpserts, sameRecord, type SeedCounts } from "../../src/exchange/upserts";
import type { Collection, Filter, Query, StoredDoc, WriteOp } from "../../src/store/types";
import { searchWords } from "../../src/contract/search";
import { DEFAULT_MESSAGES } from "../../src/contract/validation";
import { byIdentifier, documentTypeAnswer, processAnswer, referencedBy } from "./answers";
import { CatalogBatch, type CatalogChange, type CatalogResource } from "./batch";
import type { DocumentTypeForm, ProcessForm } from "../../src/contract/schemas";
import { distinct, documentTypeRecord, processRecord, referenceIds } from "./forms";
import {
	QUALIFIED_IDENTIFIER_INDEX,
	type CapabilityRecord,
	type DocumentTypeRecord,
	type ProcessRecord,
} from "./models";
import { newRecordIdentifier } from "../../src/platform/record-identifier";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";

export interface CatalogCollections {
	processes: Collection<ProcessRecord>;
	documentTypes: Collection<DocumentTypeRecord>;
	capabilities: Collection<CapabilityRecord>;
}

/** What a write answers, and the facts to broadcast once it is committed. */
export interface Written<T> {
	answer: T;
	changes: CatalogChange[];
}

export interface CatalogSeed {
	capabilities?: CapabilitySeed[];
	processes?: ProcessSeed[];
	documentTypes?: DocumentTypeSeed[];
}

/** Asks the participants service how many participants hold a process. */
export type CountParticipantsUsing = (processIdentifier: string) => Promise<number>;

const ATTEMPTS = 3;

/** Optimistic writes: a record changed meanwhile means "read again and redo", a few times, then 409. */
async function retryingStale<T>(attempt: () => Promise<T>): Promise<T> {
	for (let remaining = ATTEMPTS; ; remaining--) {
		try {
			return await attempt();
		} catch (error) {
			if (!isStaleVersion(error)) throw error;
			if (remaining <= 1) throw new Conflict("the catalog was changed concurrently; try again");
		}
	}
}

function visibleTo(seesHidden: boolean): Filter {
	return seesHidden ? {} : { visible: true };
}

/**
 * A catalog `query` (docs/decisions.md "Catalog search"), read as the participants' is
 * (decisions §7): a value equal to a record's qualifiedIdentifier (case-insensitively) matches
 * that record; otherwise its words must each start a word of the title. Both stay within `scope`
 * (what the caller may see) and run in the store.
 */
async function searchQuery<T extends StoredDoc>(
	collection: Collection<T>,
	scope: Filter,
	text: string | undefined,
): Promise<Pick<Query, "filter" | "words">> {
	const value = (text ?? "").trim();
	if (value === "") return { filter: scope };
	const exact = { ...scope, qualifiedIdentifier: value };
	if ((await collection.count({ filter: exact })) > 0) return { filter: exact };
	return { filter: scope, words: searchWords(value) };
}

function unknownReference(field: string, index: number, identifier: string): Violation {
	return {
		field: `${field}[${index}].identifier`,
		code: "Exists",
		defaultMessage: DEFAULT_MESSAGES.Exists,
		rejectedValue: identifier,
		bindingFailure: false,
	};
}

export class Catalog {
	constructor(
		private readonly records: CatalogCollections,
		/** The change's one atomic batch (mixins/outbox.mixin.ts `writeAudited`). */
		private readonly write: (ops: WriteOp[]) => Promise<void>,
	) {}

	// ---- reads --------------------------------------------------------------------------

	async findProcesses(request: PageRequest, seesHidden: boolean, text?: string): Promise<Page<Process>> {
		const query = await searchQuery(this.records.processes, visibleTo(seesHidden), text);
		const [found, total] = await Promise.all([
			this.records.processes.find({
				...query,
				sort: request.sort,
				offset: request.page * request.size,
				limit: request.size,
			}),
			this.records.processes.count(query),
		]);
		return pageOf(await this.processAnswers(found, seesHidden), total, request);
	}

	async streamProcesses(seesHidden: boolean, text?: string): Promise<Process[]> {
		return this.processAnswers(
			await this.records.processes.find(await searchQuery(this.records.processes, visibleTo(seesHidden), text)),
			seesHidden,
		);
	}

	async getProcess(identifier: string, seesHidden: boolean): Promise<Process> {
		const [answer] = await this.processAnswers([await this.visibleProcess(identifier, seesHidden)], seesHidden);
		return answer;
	}

	/** Full answers (hidden ones included), in the order asked; unknown identifiers are left out. */
	async processesByIds(identifiers: string[]): Promise<Process[]> {
		const found = byIdentifier(
			await this.records.processes.getMany(distinct(identifiers.map((id) => id.toLowerCase()))),
		);
		const ordered = identifiers
			.map((id) => found.get(id.toLowerCase()))
			.filter((record): record is ProcessRecord => record !== undefined);
		return this.processAnswers(ordered, true);
	}

	async allProcesses(): Promise<Process[]> {
		return this.processAnswers(await this.records.processes.find({}), true);
	}

	async findDocumentTypes(request: PageRequest, seesHidden: boolean, text?: string): Promise<Page<DocumentType>> {
		const query = await searchQuery(this.records.documentTypes, visibleTo(seesHidden), text);
		const [found, total] = await Promise.all([
			this.records.documentTypes.find({
				...query,
				sort: request.sort,
				offset: request.page * request.size,
				limit: request.size,
			}),
			this.records.documentTypes.count(query),
		]);
		return pageOf(await this.documentTypeAnswers(found, seesHidden), total, request);
	}

	async getDocumentType(identifier: string, seesHidden: boolean): Promise<DocumentType> {
		const record = await this.records.documentTypes.get(identifier);
		if (!record || (!seesHidden && !record.visible)) throw NotFound.instance("document type", identifier);
		const [answer] = await this.documentTypeAnswers([record], seesHidden);
		return answer;
	}

	/** Which of these identifiers the catalog holds (seed files may refer to them). */
	async knownIdentifiers(asked: { capabilities?: string[]; processes?: string[]; documentTypes?: string[] }) {
		const present = async <T extends StoredDoc>(collection: Collection<T>, ids: string[] = []) =>
			ids.length
				? (await collection.getMany(distinct(ids.map((id) => id.toLowerCase())))).map(
						(record) => record.identifier,
					)
				: [];
		return {
			capabilities: await present(this.records.capabilities, asked.capabilities),
			processes: await present(this.records.processes, asked.processes),
			documentTypes: await present(this.records.documentTypes, asked.documentTypes),
		};
	}

	// ---- process writes -----------------------------------------------------------------

	async addProcess(form: ProcessForm, caller: Caller | undefined): Promise<Written<Process>> {
		const record = processRecord(newRecordIdentifier(), form);
		await this.checkProcessReferences(form, record.identifier);
		const batch = new CatalogBatch(caller, "addProcess");
		batch.insert("process", record);
		await this.commit(batch, "process", record);
		return { answer: await this.getProcess(record.identifier, true), changes: batch.changes };
	}

	async updateProcess(
		identifier: string,
		form: ProcessForm,
		caller: Caller | undefined,
		ifMatch?: string,
	): Promise<Written<Process>> {
		return retryingStale(async () => {
			const before = await this.existingProcess(identifier);
			await this.requireMatch(ifMatch, "Process", before, () => this.processAnswers([before], true));
			const after = processRecord(before.identifier, form);
			await this.checkProcessReferences(form, before.identifier);
			const batch = new CatalogBatch(caller, "updateProcess");
			batch.replace("process", before, after);
			await this.commit(batch, "process", after);
			return { answer: await this.getProcess(identifier, true), changes: batch.changes };
		});
	}

	/** 409 while another process depends on it or a participant holds it (decisions §6). */
	async deleteProcess(
		identifier: string,
		caller: Caller | undefined,
		countParticipantsUsing: CountParticipantsUsing,
		ifMatch?: string,
	): Promise<Written<void>> {
		return retryingStale(async () => {
			const before = await this.existingProcess(identifier);
			await this.requireMatch(ifMatch, "Process", before, () => this.processAnswers([before], true));
			const dependents = await this.records.processes.count({ filter: { dependencyIds: before.identifier } });
			if (dependents > 0)
				throw new Conflict(
					`process ${identifier} cannot be deleted: ${dependents} other process(es) depend on it`,
				);
			const holders = await countParticipantsUsing(before.identifier);
			if (holders > 0)
				throw new Conflict(`process ${identifier} cannot be deleted: ${holders} participant(s) use it`);
			const batch = new CatalogBatch(caller, "deleteProcess");
			batch.delete("process", before);
			await this.commit(batch, "process", before);
			return { answer: undefined, changes: batch.changes };
		});
	}

	// ---- document type writes -----------------------------------------------------------

	async addDocumentType(form: DocumentTypeForm, caller: Caller | undefined): Promise<Written<DocumentType>> {
		return retryingStale(async () => {
			const record = documentTypeRecord(newRecordIdentifier(), form);
			const linked = await this.existingReferences(
				referenceIds(form.processes),
				"processes",
				this.records.processes,
			);
			const batch = new CatalogBatch(caller, "addDocumentType");
			batch.insert("documentType", record);
			this.relink(batch, record.identifier, [], linked);
			await this.commit(batch, "document type", record);
			return { answer: await this.getDocumentType(record.identifier, true), changes: batch.changes };
		});
	}

	/** Replaces the document type's side of the relation: the processes sent are exactly the linked ones afterwards. */
	async updateDocumentType(
		identifier: string,
		form: DocumentTypeForm,
		caller: Caller | undefined,
		ifMatch?: string,
	): Promise<Written<DocumentType>> {
		return retryingStale(async () => {
			const before = await this.existingDocumentType(identifier);
			await this.requireMatch(ifMatch, "Document type", before, () => this.documentTypeAnswers([before], true));
			const linked = await this.existingReferences(
				referenceIds(form.processes),
				"processes",
				this.records.processes,
			);
			const current = await this.processesLinking(before.identifier);
			const after = documentTypeRecord(before.identifier, form);
			const batch = new CatalogBatch(caller, "updateDocumentType");
			batch.replace("documentType", before, after);
			this.relink(batch, before.identifier, current, linked);
			await this.commit(batch, "document type", after);
			return { answer: await this.getDocumentType(identifier, true), changes: batch.changes };
		});
	}

	async deleteDocumentType(identifier: string, caller: Caller | undefined, ifMatch?: string): Promise<Written<void>> {
		return retryingStale(async () => {
			const before = await this.existingDocumentType(identifier);
			await this.requireMatch(ifMatch, "Document type", before, () => this.documentTypeAnswers([before], true));
			const linked = await this.records.processes.count({ filter: { documentTypeIds: before.identifier } });
			if (linked > 0)
				throw new Conflict(
					`document type ${identifier} cannot be deleted: it is linked to ${linked} process(es)`,
				);
			const batch = new CatalogBatch(caller, "deleteDocumentType");
			batch.delete("documentType", before);
			await this.commit(batch, "document type", before);
			return { answer: undefined, changes: batch.changes };
		});
	}

	// ---- seed ---------------------------------------------------------------------------

	/**
	 * Upserts by identifier; records that would not change are not written (a second
	 * import changes nothing). Links in the file count from both sides: a process lists its
	 * document types, a document type its processes, and the union is stored.
	 */
	async importSeed(
		seed: CatalogSeed,
		caller: Caller | undefined,
	): Promise<Written<Record<"capabilities" | "processes" | "documentTypes", SeedCounts>>> {
		const sections = {
			capabilities: seed.capabilities ?? [],
			processes: seed.processes ?? [],
			documentTypes: seed.documentTypes ?? [],
		};
		const reasons = validateSeed(sections, await this.knownIdentifiers(referencesOutside(sections)));
		if (reasons.length) throw new SeedRefused(reasons);
		return retryingStale(async () => {
			const batch = new CatalogBatch(caller, "seed");
			const capabilities = sections.capabilities.map(({ identifier, title }): CapabilityRecord => ({
				identifier: identifier.toLowerCase(),
				title,
			}));
			const documentTypes = sections.documentTypes.map((entry) =>
				documentTypeRecord(entry.identifier.toLowerCase(), entry),
			);
			const processes = this.seedProcesses(sections.processes, sections.documentTypes);
			const result = {
				capabilities: await this.upsertAll(batch, "capability", this.records.capabilities, capabilities),
				processes: await this.upsertAll(batch, "process", this.records.processes, processes),
				documentTypes: await this.upsertAll(batch, "documentType", this.records.documentTypes, documentTypes),
			};
			await this.relinkOutsideSeed(batch, processes, sections.documentTypes);
			if (!batch.empty) await this.commit(batch, "catalog record", undefined);
			return { answer: result, changes: batch.changes };
		});
	}

	// ---- helpers ------------------------------------------------------------------------

	/** `If-Match` (docs/decisions.md "Safe writes"): against the answer a writer reads now; the write then expects this version. */
	private async requireMatch(
		ifMatch: string | undefined,
		kind: string,
		record: StoredDoc,
		answers: () => Promise<unknown[]>,
	): Promise<void> {
		if (ifMatch === undefined) return;
		const [answer] = await answers();
		if (!ifMatchHolds(ifMatch, entityTagOfAnswer(answer))) throw new PreconditionFailed(kind, record.identifier);
	}

	private async processAnswers(records: ProcessRecord[], seesHidden: boolean): Promise<Process[]> {
		const wanted = referencedBy(records);
		const [capabilities, documentTypes, processes] = await Promise.all([
			this.records.capabilities.getMany(wanted.capabilities),
			this.records.documentTypes.getMany(wanted.documentTypes),
			this.records.processes.getMany(wanted.processes),
		]);
		const related = {
			capabilities: byIdentifier(capabilities),
			documentTypes: byIdentifier(documentTypes),
			processes: byIdentifier(processes),
		};
		return records.map((record) => processAnswer(record, related, seesHidden));
	}

	private async documentTypeAnswers(records: DocumentTypeRecord[], seesHidden: boolean): Promise<DocumentType[]> {
		const identifiers = records.map((record) => record.identifier);
		const linking = identifiers.length
			? await this.records.processes.find({ filter: { documentTypeIds: { in: identifiers } } })
			: [];
		return records.map((record) =>
			documentTypeAnswer(
				record,
				linking.filter((process) => process.documentTypeIds.includes(record.identifier)),
				seesHidden,
			),
		);
	}

	private processesLinking(documentTypeIdentifier: string): Promise<ProcessRecord[]> {
		return this.records.processes.find({ filter: { documentTypeIds: documentTypeIdentifier } });
	}

	private async visibleProcess(identifier: string, seesHidden: boolean): Promise<ProcessRecord> {
		const record = await this.records.processes.get(identifier);
		if (!record || (!seesHidden && !record.visible)) throw NotFound.instance("process", identifier);
		return record;
	}

	private existingProcess(identifier: string): Promise<ProcessRecord> {
		return this.visibleProcess(identifier, true);
	}

	private async existingDocumentType(identifier: string): Promise<DocumentTypeRecord> {
		const record = await this.records.documentTypes.get(identifier);
		if (!record) throw NotFound.instance("document type", identifier);
		return record;
	}

	/** The records named by `identifiers`; 400 naming every position that names none. */
	private async existingReferences<T extends StoredDoc>(
		identifiers: string[],
		field: string,
		collection: Collection<T>,
	): Promise<T[]> {
		const found = await collection.getMany(distinct(identifiers));
		const missing = this.missing(identifiers, field, found);
		if (missing.length) throw new ValidationFailed(missing);
		return found;
	}

	private missing(identifiers: string[], field: string, found: StoredDoc[]): Violation[] {
		const known = new Set(found.map((record) => record.identifier));
		return identifiers.flatMap((identifier, index) =>
			known.has(identifier) ? [] : [unknownReference(field, index, identifier)],
		);
	}

	/** Every linked capability, document type and dependency must exist; a process may not depend on itself. */
	private async checkProcessReferences(form: ProcessForm, identifier: string): Promise<void> {
		const capabilities = referenceIds(form.capabilities);
		const documentTypes = referenceIds(form.documentTypes);
		const dependencies = referenceIds(form.dependencies);
		const [foundCapabilities, foundDocumentTypes, foundDependencies] = await Promise.all([
			this.records.capabilities.getMany(distinct(capabilities)),
			this.records.documentTypes.getMany(distinct(documentTypes)),
			this.records.processes.getMany(distinct(dependencies)),
		]);
		const selfDependencies = dependencies.flatMap((dependency, index): Violation[] =>
			dependency === identifier
				? [
						{
							field: `dependencies[${index}].identifier`,
							code: "NotSelf",
							defaultMessage: "a process cannot depend on itself",
							rejectedValue: dependency,
							bindingFailure: false,
						},
					]
				: [],
		);
		const violations = [
			...this.missing(capabilities, "capabilities", foundCapabilities),
			...this.missing(documentTypes, "documentTypes", foundDocumentTypes),
			...selfDependencies,
			...this.missing(
				dependencies.filter((dependency) => dependency !== identifier),
				"dependencies",
				foundDependencies,
			),
		];
		if (violations.length) throw new ValidationFailed(violations);
	}

	/**
	 * Makes `wanted` exactly the processes linking the document type: removes it from the
	 * `current` ones not wanted, adds it to the wanted ones that lack it.
	 */
	private relink(
		batch: CatalogBatch,
		documentTypeIdentifier: string,
		current: ProcessRecord[],
		wanted: ProcessRecord[],
	): void {
		const wantedIds = new Set(wanted.map((process) => process.identifier));
		for (const process of current.filter((candidate) => !wantedIds.has(candidate.identifier))) {
			batch.replace("process", process, {
				...process,
				documentTypeIds: process.documentTypeIds.filter((id) => id !== documentTypeIdentifier),
			});
		}
		for (const process of wanted.filter(
			(candidate) => !candidate.documentTypeIds.includes(documentTypeIdentifier),
		)) {
			batch.replace("process", process, {
				...process,
				documentTypeIds: [...process.documentTypeIds, documentTypeIdentifier],
			});
		}
	}

	/** The file's processes as records, with the links stated on the document type side added. */
	private seedProcesses(processes: ProcessSeed[], documentTypes: DocumentTypeSeed[]): ProcessRecord[] {
		const records = processes.map((entry) => processRecord(entry.identifier.toLowerCase(), entry));
		const byId = byIdentifier(records);
		for (const documentType of documentTypes) {
			const documentTypeId = documentType.identifier.toLowerCase();
			for (const processId of referenceIds(documentType.processes)) {
				const process = byId.get(processId);
				if (process && !process.documentTypeIds.includes(documentTypeId))
					process.documentTypeIds.push(documentTypeId);
			}
		}
		return records;
	}

	/** Stored processes outside the file: their links to the file's document types follow what the file says. */
	private async relinkOutsideSeed(
		batch: CatalogBatch,
		seedProcesses: ProcessRecord[],
		documentTypes: DocumentTypeSeed[],
	): Promise<void> {
		if (!documentTypes.length) return;
		const inSeed = new Set(seedProcesses.map((process) => process.identifier));
		const linksWanted = new Map(
			documentTypes.map((entry) => [entry.identifier.toLowerCase(), new Set(referenceIds(entry.processes))]),
		);
		const named = distinct([...linksWanted.values()].flatMap((ids) => [...ids]).filter((id) => !inSeed.has(id)));
		const candidates = byIdentifier([
			...(await this.records.processes.find({ filter: { documentTypeIds: { in: [...linksWanted.keys()] } } })),
			...(await this.records.processes.getMany(named)),
		]);
		for (const process of candidates.values()) {
			if (inSeed.has(process.identifier)) continue;
			const kept = process.documentTypeIds.filter(
				(id) => !linksWanted.has(id) || linksWanted.get(id)?.has(process.identifier),
			);
			const added = [...linksWanted.entries()]
				.filter(([id, processes]) => processes.has(process.identifier) && !kept.includes(id))
				.map(([id]) => id);
			const after = { ...process, documentTypeIds: [...kept, ...added] };
			if (!sameRecord(process, after)) batch.replace("process", process, after);
		}
	}

	private async upsertAll<T extends StoredDoc>(
		batch: CatalogBatch,
		resource: CatalogResource,
		collection: Collection<T>,
		records: T[],
	): Promise<SeedCounts> {
		const plan = planUpserts(await collection.getMany(records.map((record) => record.identifier)), records);
		for (const { before, after } of plan.writes) batch.upsert(resource, before, after);
		return plan.counts;
	}

	/** One atomic write; a unique qualified identifier already taken is a 409. */
	private async commit(
		batch: CatalogBatch,
		kind: string,
		record: { qualifiedIdentifier?: string } | undefined,
	): Promise<void> {
		try {
			await this.write(batch.ops);
		} catch (error) {
			if (isDuplicateKey(error) && (error as { index?: string }).index === QUALIFIED_IDENTIFIER_INDEX) {
				const which = record?.qualifiedIdentifier ? ` ${record.qualifiedIdentifier}` : "";
				throw new Conflict(`a ${kind} with qualified identifier${which} already exists`);
			}
			throw error;
		}
	}
}
