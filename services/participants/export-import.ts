/**
 * Participants in bulk (docs/operations.md "Operator CLI"; src/exchange/registry-export.ts):
 *   - `participants.export`: every participant as NDJSON, a Readable read from the store in
 *     pages (constant memory; GET /rest/api/exports/participants pipes it);
 *   - `participants.exportRecords`: one page by key, for the CLI's `export`;
 *   - `participants.importRecords`: a batch of exported participants, upserted by identifier
 *     with their dates, all or nothing; `dryRun` answers the reasons without writing.
 *
 * An import restores what another registry held: it checks what the store must guarantee
 * (the provider and processes exist, the organization number, one participant per provider
 * and organization, one provider per organization and process) but not the admission rules
 * of decisions §6 (restricted processes, required ICDs, dependencies), which the source
 * registry applied when the participant registered. Each written participant is an audited
 * change (operation `import`) announced to the lookup like any other.
 */
import { Readable } from "node:stream";
import type { Context } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { Conflict } from "../../src/contract/errors";
import {
	organizationIdentifierFault,
	organizationKey,
	participantQualifiedIdentifier,
} from "../../src/contract/identifiers";
import type { Process, ServiceProvider } from "../../src/contract/model";
import {
	instantOf,
	keysetPage,
	linesOf,
	type ExportPage,
	type ExportPageRequest,
	type ExportedParticipant,
	type ImportedParticipant,
} from "../../src/exchange/registry-export";
import { SeedRefused } from "../../src/exchange/seed";
import type { SeedCounts } from "../../src/exchange/upserts";
import { ADD_PARTICIPANT_FORM } from "../../src/contract/schemas";
import type { Collection } from "../../src/store/types";
import { DEFAULT_MESSAGES } from "../../src/contract/validation";
import { participantAnswer } from "./answers";
import { planChange, type PlannedChange } from "./changes";
import type { ParticipantDoc } from "./model";
import type { CachedResolver } from "./resolver";

/** Participants per chunk of the NDJSON stream (one provider lookup per chunk). */
const EXPORT_CHUNK = 200;
/** Largest batch `importRecords` takes. */

/** A participant line of the export (also the HTTP export's, without `type`). */
export function exportedParticipant(doc: ParticipantDoc, provider: ServiceProvider | undefined): ExportedParticipant {
	// A provider always exists (accounts refuses nothing that would orphan one); the fallback keeps the line importable.
	const owner = provider ?? ({ identifier: doc.serviceProvider, title: "" } as ServiceProvider);
	return {
		...participantAnswer(doc, owner),
		contact: { name: doc.contact.name, email: doc.contact.email, phoneNumber: doc.contact.phoneNumber },
		processes: doc.processIds.map((identifier) => ({ identifier })),
	} as ExportedParticipant;
}

export const MAX_IMPORT_BATCH = 2000;

/** What these functions need of the participants service. */
export interface BulkParticipants {
	collection: Collection<ParticipantDoc>;
	providers: CachedResolver<ServiceProvider>;
	processes: CachedResolver<Process>;
	commit(changes: PlannedChange[]): Promise<void>;
	withRetries<T>(attempt: () => Promise<T>): Promise<T>;
}

export const IMPORT_RECORDS_PARAMS = {
	participants: {
		type: "array",
		max: MAX_IMPORT_BATCH,
		items: {
			type: "object",
			strict: "remove",
			props: {
				...ADD_PARTICIPANT_FORM.props,
				identifier: { type: "uuid" },
				serviceProvider: { type: "uuid" },
				registrationDate: { type: "string", pattern: /^\d{4}-\d{2}-\d{2}$/ },
				lastModificationDate: { type: "string", pattern: /^\d{4}-\d{2}-\d{2}$/ },
				deleteDate: { type: "string", pattern: /^\d{4}-\d{2}-\d{2}$/, optional: true, nullable: true },
			},
		},
	},
	dryRun: { type: "boolean", optional: true },
};

// ---- export ---------------------------------------------------------------------------

async function chunkOf(service: BulkParticipants, docs: ParticipantDoc[]): Promise<Buffer> {
	const providers = await service.providers.resolve(docs.map((doc) => doc.serviceProvider));
	return Buffer.from(
		docs.map((doc) => `${JSON.stringify(exportedParticipant(doc, providers.get(doc.serviceProvider)))}\n`).join(""),
		"utf8",
	);
}

async function* exportChunks(service: BulkParticipants): AsyncGenerator<Buffer> {
	let docs: ParticipantDoc[] = [];
	for await (const doc of service.collection.iterate({})) {
		docs.push(doc);
		if (docs.length >= EXPORT_CHUNK) {
			yield await chunkOf(service, docs);
			docs = [];
		}
	}
	if (docs.length) yield await chunkOf(service, docs);
}

/** Every participant, one JSON line each, read page by page as the consumer reads. */
export function exportStream(service: BulkParticipants): Readable {
	return Readable.from(exportChunks(service), { objectMode: false });
}

export async function exportPage(service: BulkParticipants, request: ExportPageRequest): Promise<ExportPage> {
	const page = await keysetPage(service.collection, request);
	const providers = await service.providers.resolve(page.docs.map((doc) => doc.serviceProvider));
	return linesOf(page, (doc) => ({
		type: "participant",
		...exportedParticipant(doc, providers.get(doc.serviceProvider)),
	}));
}

// ---- import ---------------------------------------------------------------------------

export interface ImportReason {
	/** Position in the batch. */
	index: number;
	/** Field within the row ("" for the row). */
	field: string;
	message: string;
	/** `Exists`: names a provider or process the registry does not have (yet); `Conflict`: clashes with the registry or the batch; `Invalid`: the row itself. */
	code: "Exists" | "Conflict" | "Invalid";
}

export interface ImportResult {
	participants: SeedCounts;
	/** Dry runs only: why the batch would be refused (empty when it would be imported). */
	reasons?: ImportReason[];
}

interface Row extends ImportedParticipant {
	organizationKey: string;
	processIds: string[];
}

function sameParticipant(a: ParticipantDoc, b: ParticipantDoc): boolean {
	const fields: (keyof ParticipantDoc)[] = [
		"serviceProvider",
		"icd",
		"organizationIdentifier",
		"qualifiedIdentifier",
		"registrationDate",
		"lastModificationDate",
	];
	return (
		fields.every((field) => a[field] === b[field]) &&
		(a.name ?? null) === (b.name ?? null) &&
		(a.deleteDate ?? null) === (b.deleteDate ?? null) &&
		JSON.stringify(a.contact) === JSON.stringify(b.contact) &&
		JSON.stringify(a.processIds) === JSON.stringify(b.processIds)
	);
}

function participantDoc(row: Row, stored: ParticipantDoc | null): ParticipantDoc {
	return {
		identifier: row.identifier,
		icd: row.icd,
		organizationIdentifier: row.organizationIdentifier,
		organizationKey: row.organizationKey,
		qualifiedIdentifier: participantQualifiedIdentifier(row.icd, row.organizationIdentifier),
		name: row.name ?? null,
		contact: { name: row.contact.name, email: row.contact.email, phoneNumber: row.contact.phoneNumber },
		processIds: row.processIds,
		serviceProvider: row.serviceProvider,
		registrationDate: instantOf(row.registrationDate, stored?.registrationDate),
		lastModificationDate: instantOf(row.lastModificationDate, stored?.lastModificationDate),
		deleteDate: row.deleteDate ?? null,
	};
}

/** Every reason the batch cannot be imported as it stands, against itself and the store. */
async function batchReasons(
	service: BulkParticipants,
	ctx: Context<unknown>,
	rows: Row[],
	stored: Map<string, ParticipantDoc>,
): Promise<ImportReason[]> {
	const reasons: ImportReason[] = [];
	const [providers, processes, sameOrganizations] = await Promise.all([
		ctx.call<ServiceProvider[], { identifiers: string[] }>("accounts.serviceProviders", {
			identifiers: [...new Set(rows.map((row) => row.serviceProvider))],
		}),
		service.processes.resolve(rows.flatMap((row) => row.processIds)),
		service.collection.find({
			filter: { organizationKey: { in: [...new Set(rows.map((row) => row.organizationKey))] } },
		}),
	]);
	const knownProviders = new Set(providers.map((provider) => provider.identifier.toLowerCase()));
	const inBatch = new Set(rows.map((row) => row.identifier));
	const firstById = new Map<string, number>();
	const firstByOwner = new Map<string, number>();

	rows.forEach((row, index) => {
		const reason = (code: ImportReason["code"], field: string, message: string) =>
			reasons.push({ index, field, message, code });
		if (!knownProviders.has(row.serviceProvider))
			reason(
				"Exists",
				"provider.identifier",
				`${DEFAULT_MESSAGES.Exists}: no service provider ${row.serviceProvider}`,
			);
		row.processIds.forEach((processId, position) => {
			if (!processes.has(processId))
				reason(
					"Exists",
					`processes[${position}].identifier`,
					`${DEFAULT_MESSAGES.Exists}: no process ${processId}`,
				);
			if (row.processIds.indexOf(processId) !== position)
				reason("Invalid", `processes[${position}].identifier`, "the same process is listed twice");
		});
		const fault = organizationIdentifierFault(row.icd, row.organizationIdentifier);
		if (fault) reason("Invalid", "organizationIdentifier", DEFAULT_MESSAGES[fault]);

		const owner = `${row.serviceProvider}|${row.organizationKey}`;
		if (firstById.has(row.identifier))
			reason(
				"Conflict",
				"identifier",
				`the batch holds this participant twice (also row ${firstById.get(row.identifier)})`,
			);
		else firstById.set(row.identifier, index);
		if (firstByOwner.has(owner))
			reason(
				"Conflict",
				"",
				`the service provider has this organization twice in the batch (also row ${firstByOwner.get(owner)})`,
			);
		else firstByOwner.set(owner, index);

		const previous = stored.get(row.identifier);
		if (previous && previous.organizationKey !== row.organizationKey) {
			reason(
				"Conflict",
				"identifier",
				`names the registry's participant for organization ${previous.qualifiedIdentifier}`,
			);
		}
		const holder = sameOrganizations.find(
			(doc) =>
				doc.serviceProvider === row.serviceProvider &&
				doc.organizationKey === row.organizationKey &&
				doc.identifier !== row.identifier,
		);
		if (holder && !inBatch.has(holder.identifier))
			reason(
				"Conflict",
				"",
				`the service provider already has participant ${holder.identifier} for ${holder.qualifiedIdentifier}`,
			);
	});

	// One provider per organization and process: the registry's other participants of these
	// organizations as they stay, plus the batch's rows as they will be.
	const claims = new Map<string, string>();
	for (const doc of sameOrganizations) {
		if (inBatch.has(doc.identifier)) continue;
		for (const processId of doc.processIds) claims.set(`${doc.organizationKey}|${processId}`, doc.identifier);
	}
	rows.forEach((row, index) => {
		row.processIds.forEach((processId, position) => {
			const key = `${row.organizationKey}|${processId}`;
			const holder = claims.get(key);
			if (holder !== undefined && holder !== row.identifier) {
				reasons.push({
					index,
					field: `processes[${position}].identifier`,
					message: `is already registered for this organization by participant ${holder}`,
					code: "Conflict",
				});
			} else {
				claims.set(key, row.identifier);
			}
		});
	});
	return reasons;
}

/** One batch: reasons (dry run), or every change in one store batch (SeedRefused when any reason). */
export async function importRecords(
	service: BulkParticipants,
	ctx: RegistryContext<{ participants: ImportedParticipant[]; dryRun?: boolean }>,
): Promise<ImportResult> {
	const rows: Row[] = ctx.params.participants.map((participant) => ({
		...participant,
		identifier: participant.identifier.toLowerCase(),
		serviceProvider: participant.serviceProvider.toLowerCase(),
		organizationKey: organizationKey(participant.icd, participant.organizationIdentifier),
		processIds: participant.processes.map((process) => process.identifier.toLowerCase()),
	}));
	const attempt = async (): Promise<ImportResult> => {
		const stored = new Map(
			(await service.collection.getMany(rows.map((row) => row.identifier))).map((doc) => [doc.identifier, doc]),
		);
		const reasons = await batchReasons(service, ctx, rows, stored);
		if (reasons.length && ctx.params.dryRun)
			return { participants: { created: 0, updated: 0, unchanged: 0 }, reasons };
		if (reasons.length)
			throw new SeedRefused(
				reasons.map(({ index, field, message }) => ({
					path: `participants[${index}]${field ? `.${field}` : ""}`,
					message,
				})),
			);
		const counts: SeedCounts = { created: 0, updated: 0, unchanged: 0 };
		const changes: PlannedChange[] = [];
		for (const row of rows) {
			const before = stored.get(row.identifier) ?? null;
			const after = participantDoc(row, before);
			if (before && sameParticipant(before, after)) {
				counts.unchanged++;
				continue;
			}
			counts[before ? "updated" : "created"]++;
			if (!ctx.params.dryRun)
				changes.push(
					planChange(
						ctx.meta.user ?? null,
						"import",
						before,
						before ? { ...after, version: before.version } : after,
					),
				);
		}
		if (ctx.params.dryRun) return { participants: counts, reasons: [] };
		try {
			if (changes.length) await service.commit(changes);
		} catch (error) {
			// The store's unique keys still decide: a concurrent add refuses the batch.
			if (error instanceof Conflict) throw new SeedRefused([{ path: "participants", message: error.message }]);
			throw error;
		}
		return { participants: counts };
	};
	return ctx.params.dryRun ? attempt() : service.withRetries(attempt);
}
