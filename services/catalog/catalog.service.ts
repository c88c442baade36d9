/**
 * catalog: document types, processes and capabilities (spec "Document types", "Processes";
 * docs/internals.md "Actions"). Owns the collections processes, documentTypes, capabilities
 * and its audit outbox. The rules live in services/catalog/catalog.ts; this file adapts
 * actions to them, broadcasts the `catalog.changed` events and keeps the read cache honest.
 *
 * Caching: the public reads are cached per caller kind (anonymous callers see fewer
 * records, so `#user.role` is part of every key) and the whole catalog cache is dropped
 * after every change, on every catalog node (the `catalog.changed` event).
 * A short TTL bounds the one remaining race (a read that started before a write finishes
 * after the drop). Internal actions are not cached: their callers keep their own copies
 * and may hold on to the objects they receive.
 */
import type { Service, ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { OutboxMixin, type OutboxThis } from "../../mixins/outbox.mixin";
import { broadcastEvents, EVENTS } from "../../src/platform/events";
import { DbMixin } from "../../mixins/db.mixin";
import { IF_MATCH_PARAM } from "../../src/contract/entity-tags";
import type { Caller } from "../../src/contract/model";
import { SORTABLE } from "../../src/contract/operations";
import type { PageRequest } from "../../src/contract/paging";
import { MAX_CATALOG_QUERY_LENGTH } from "../../src/contract/search";
import { DOCUMENT_TYPE_FORM, pageRequestRule, PROCESS_FORM } from "../../src/contract/schemas";
import type { Collection, Store } from "../../src/store/types";
import type { CatalogChange } from "./batch";
import { claimBootstrap, finishBootstrap, type BootstrapClaim, type BootstrapRequest } from "./bootstrap";
import { Catalog, type CatalogCollections, type CatalogSeed } from "./catalog";
import type { DocumentTypeForm, ProcessForm } from "../../src/contract/schemas";
import { CATALOG_MODELS, type DocumentTypeRecord, type ProcessRecord } from "./models";
import {
	exportPageParams,
	keysetPage,
	linesOf,
	type ExportPage,
	type ExportPageRequest,
} from "../../src/exchange/registry-export";

type CatalogContext<P = Record<string, never>> = RegistryContext<P>;

interface CatalogService extends Service, OutboxThis {
	store: Store;
	collections: CatalogCollections & { bootstrap: Collection<BootstrapClaim> };
	catalog: Catalog;
	announce(changes: CatalogChange[]): Promise<void>;
	dropCache(): Promise<void>;
}

const READ_CACHE_TTL_SECONDS = 60;

/** Keys distinguish anonymous from authenticated callers: they see different records. */
function readCache(keys: string[]) {
	return { keys: [...keys, "#user.role"], ttl: READ_CACHE_TTL_SECONDS };
}

const IDENTIFIER = { type: "uuid" };
const IDENTIFIERS = { type: "array", items: "string", optional: true };
/** The catalog finds' `query` (docs/decisions.md "Catalog search"). */
const QUERY = { type: "string", optional: true, max: MAX_CATALOG_QUERY_LENGTH };

/** Anonymous callers never see hidden records (decisions §4). */
function seesHidden(ctx: CatalogContext<unknown>): boolean {
	return Boolean(ctx.meta.user);
}

function caller(ctx: CatalogContext<unknown>): Caller | undefined {
	return ctx.meta.user ?? undefined;
}

const references = (identifiers: string[]) => identifiers.map((identifier) => ({ identifier }));

function processLine(record: ProcessRecord): object {
	return {
		type: "process",
		identifier: record.identifier,
		...(record.qualifiedIdentifier == null ? {} : { qualifiedIdentifier: record.qualifiedIdentifier }),
		domain: record.domain,
		...(record.title == null ? {} : { title: record.title }),
		...(record.alias == null ? {} : { alias: record.alias }),
		restricted: record.restricted,
		visible: record.visible,
		capabilities: references(record.capabilityIds),
		documentTypes: references(record.documentTypeIds),
		dependencies: references(record.dependencyIds),
		requiredICDs: record.requiredICDs,
	};
}

function documentTypeLine(record: DocumentTypeRecord, linking: ProcessRecord[]): object {
	return {
		type: "documentType",
		identifier: record.identifier,
		...(record.qualifiedIdentifier == null ? {} : { qualifiedIdentifier: record.qualifiedIdentifier }),
		title: record.title,
		visible: record.visible,
		processes: references(linking.map((process) => process.identifier)),
	};
}

const CatalogServiceSchema: ServiceSchema = {
	name: "catalog",
	mixins: [OutboxMixin(), DbMixin(CATALOG_MODELS)],

	actions: {
		findProcesses: {
			params: { pageRequest: pageRequestRule(SORTABLE.processes), query: QUERY },
			cache: readCache(["pageRequest", "query"]),
			handler(this: CatalogService, ctx: CatalogContext<{ pageRequest: PageRequest; query?: string }>) {
				return this.catalog.findProcesses(ctx.params.pageRequest, seesHidden(ctx), ctx.params.query);
			},
		},
		streamProcesses: {
			params: { query: QUERY },
			cache: readCache(["query"]),
			handler(this: CatalogService, ctx: CatalogContext<{ query?: string }>) {
				return this.catalog.streamProcesses(seesHidden(ctx), ctx.params.query);
			},
		},
		getProcess: {
			params: { identifier: IDENTIFIER },
			cache: readCache(["identifier"]),
			handler(this: CatalogService, ctx: CatalogContext<{ identifier: string }>) {
				return this.catalog.getProcess(ctx.params.identifier.toLowerCase(), seesHidden(ctx));
			},
		},
		addProcess: {
			params: { body: PROCESS_FORM },
			async handler(this: CatalogService, ctx: CatalogContext<{ body: ProcessForm }>) {
				const written = await this.catalog.addProcess(ctx.params.body, caller(ctx));
				await this.announce(written.changes);
				return written.answer;
			},
		},
		updateProcess: {
			params: { identifier: IDENTIFIER, ifMatch: IF_MATCH_PARAM, body: PROCESS_FORM },
			async handler(
				this: CatalogService,
				ctx: CatalogContext<{ identifier: string; ifMatch?: string; body: ProcessForm }>,
			) {
				const written = await this.catalog.updateProcess(
					ctx.params.identifier.toLowerCase(),
					ctx.params.body,
					caller(ctx),
					ctx.params.ifMatch,
				);
				await this.announce(written.changes);
				return written.answer;
			},
		},
		deleteProcess: {
			params: { identifier: IDENTIFIER, ifMatch: IF_MATCH_PARAM },
			async handler(this: CatalogService, ctx: CatalogContext<{ identifier: string; ifMatch?: string }>) {
				// Participants own who holds a process; without them the answer is unknown, so the call's error stands.
				const countParticipantsUsing = (identifier: string) =>
					ctx.call<number, { identifier: string }>("participants.countUsingProcess", { identifier });
				const written = await this.catalog.deleteProcess(
					ctx.params.identifier.toLowerCase(),
					caller(ctx),
					countParticipantsUsing,
					ctx.params.ifMatch,
				);
				await this.announce(written.changes);
			},
		},

		findDocumentTypes: {
			params: { pageRequest: pageRequestRule(SORTABLE.documentTypes), query: QUERY },
			cache: readCache(["pageRequest", "query"]),
			handler(this: CatalogService, ctx: CatalogContext<{ pageRequest: PageRequest; query?: string }>) {
				return this.catalog.findDocumentTypes(ctx.params.pageRequest, seesHidden(ctx), ctx.params.query);
			},
		},
		getDocumentType: {
			params: { identifier: IDENTIFIER },
			cache: readCache(["identifier"]),
			handler(this: CatalogService, ctx: CatalogContext<{ identifier: string }>) {
				return this.catalog.getDocumentType(ctx.params.identifier.toLowerCase(), seesHidden(ctx));
			},
		},
		addDocumentType: {
			params: { body: DOCUMENT_TYPE_FORM },
			async handler(this: CatalogService, ctx: CatalogContext<{ body: DocumentTypeForm }>) {
				const written = await this.catalog.addDocumentType(ctx.params.body, caller(ctx));
				await this.announce(written.changes);
				return written.answer;
			},
		},
		updateDocumentType: {
			params: { identifier: IDENTIFIER, ifMatch: IF_MATCH_PARAM, body: DOCUMENT_TYPE_FORM },
			async handler(
				this: CatalogService,
				ctx: CatalogContext<{ identifier: string; ifMatch?: string; body: DocumentTypeForm }>,
			) {
				const written = await this.catalog.updateDocumentType(
					ctx.params.identifier.toLowerCase(),
					ctx.params.body,
					caller(ctx),
					ctx.params.ifMatch,
				);
				await this.announce(written.changes);
				return written.answer;
			},
		},
		deleteDocumentType: {
			params: { identifier: IDENTIFIER, ifMatch: IF_MATCH_PARAM },
			async handler(this: CatalogService, ctx: CatalogContext<{ identifier: string; ifMatch?: string }>) {
				const written = await this.catalog.deleteDocumentType(
					ctx.params.identifier.toLowerCase(),
					caller(ctx),
					ctx.params.ifMatch,
				);
				await this.announce(written.changes);
			},
		},

		// Internal: other services' questions, always the full records.
		processesByIds: {
			visibility: "public",
			params: { identifiers: { type: "array", items: "string" } },
			handler(this: CatalogService, ctx: CatalogContext<{ identifiers: string[] }>) {
				return this.catalog.processesByIds(ctx.params.identifiers);
			},
		},
		allProcesses: {
			visibility: "public",
			handler(this: CatalogService) {
				return this.catalog.allProcesses();
			},
		},
		knownIdentifiers: {
			visibility: "public",
			params: { capabilities: IDENTIFIERS, processes: IDENTIFIERS, documentTypes: IDENTIFIERS },
			handler(
				this: CatalogService,
				ctx: CatalogContext<{ capabilities?: string[]; processes?: string[]; documentTypes?: string[] }>,
			) {
				return this.catalog.knownIdentifiers(ctx.params);
			},
		},
		/**
		 * Operator CLI `export`: one page by key of capabilities, processes or document types, as
		 * seed items (src/exchange/registry-export.ts). Links are stated on both sides, as a seed may.
		 */
		exportRecords: {
			visibility: "public",
			params: exportPageParams(["capability", "process", "documentType"]),
			async handler(this: CatalogService, ctx: CatalogContext<ExportPageRequest>): Promise<ExportPage> {
				const { type } = ctx.params;
				if (type === "capability")
					return linesOf(
						await keysetPage(this.collections.capabilities, ctx.params),
						({ identifier, title }) => ({ type, identifier, title }),
					);
				if (type === "process")
					return linesOf(await keysetPage(this.collections.processes, ctx.params), processLine);
				const page = await keysetPage(this.collections.documentTypes, ctx.params);
				const ids = page.docs.map((record) => record.identifier);
				const linking = ids.length
					? await this.collections.processes.find({ filter: { documentTypeIds: { in: ids } } })
					: [];
				return linesOf(page, (record) =>
					documentTypeLine(
						record,
						linking.filter((process) => process.documentTypeIds.includes(record.identifier)),
					),
				);
			},
		},
		/** The registry's one-time initialization claim (services/catalog/bootstrap.ts, src/exchange/bootstrap.ts). */
		claimBootstrap: {
			visibility: "public",
			params: {
				source: { type: "enum", values: ["demo", "seed"] },
				file: { type: "string", optional: true },
				digest: { type: "string", optional: true },
				node: "string",
			},
			handler(this: CatalogService, ctx: CatalogContext<BootstrapRequest>) {
				return claimBootstrap(this.collections.bootstrap, ctx.params);
			},
		},
		finishBootstrap: {
			visibility: "public",
			params: { node: "string", loaded: { type: "enum", values: ["demo", "seed", "nothing"] } },
			handler(this: CatalogService, ctx: CatalogContext<{ node: string; loaded: "demo" | "seed" | "nothing" }>) {
				return finishBootstrap(this.collections.bootstrap, ctx.params.node, ctx.params.loaded);
			},
		},
		importSeed: {
			visibility: "public",
			params: {
				capabilities: { type: "array", optional: true },
				processes: { type: "array", optional: true },
				documentTypes: { type: "array", optional: true },
			},
			async handler(this: CatalogService, ctx: CatalogContext<CatalogSeed>) {
				const written = await this.catalog.importSeed(ctx.params, caller(ctx));
				await this.announce(written.changes);
				return written.answer;
			},
		},
	},

	events: {
		/** A catalog node changed the catalog: a memory cacher of this node still holds the old reads. */
		[EVENTS.catalogChanged](this: CatalogService) {
			return this.dropCache();
		},
	},

	methods: {
		/** After a committed change: every node hears of it (this one too, whose read cache goes before the answer). */
		async announce(this: CatalogService, changes: CatalogChange[]) {
			await broadcastEvents(
				this.broker,
				changes.map((change) => ({ name: EVENTS.catalogChanged, payload: change })),
			);
		},
		async dropCache(this: CatalogService) {
			if (this.broker.cacher) await this.broker.cacher.clean(`${this.name}.**`);
		},
	},

	started(this: Service) {
		const service = this as CatalogService;
		service.catalog = new Catalog(service.collections, (ops) => service.writeAudited(ops));
	},
};

export default CatalogServiceSchema;
