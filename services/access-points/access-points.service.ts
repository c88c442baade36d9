/**
 * accessPoints: access points and the providers that run them (spec "Access point",
 * "Access points"; read only through the API, written by seed import). Owns the
 * collections accessPoints, accessPointProviders and its audit outbox.
 *
 * Not cached: only authenticated operators read these, rarely, and an answer is two
 * indexed queries; a cache would add an invalidation path for no measurable gain.
 */
import type { Service, ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { OutboxMixin, type OutboxThis } from "../../mixins/outbox.mixin";
import { DbMixin } from "../../mixins/db.mixin";
import { AUDIT_OUTBOX_MODEL, auditRecord, auditWrite } from "../../src/platform/audit";
import { Conflict, NotFound, ValidationFailed } from "../../src/contract/errors";
import type { AccessPoint, AccessPointProvider, Caller, Contact } from "../../src/contract/model";
import { SORTABLE } from "../../src/contract/operations";
import { pageOf, type Page, type PageRequest } from "../../src/contract/paging";
import { SeedRefused } from "../../src/exchange/seed";
import type { AccessPointProviderSeed, AccessPointSeed, EndpointSeed } from "../../src/exchange/seed-file";
import { referencesOutside, validateSeed } from "../../src/exchange/seed-validation";
import { planUpserts, type SeedCounts } from "../../src/exchange/upserts";
import type { Collection, ModelSpec, Store, StoredDoc, WriteOp } from "../../src/store/types";
import { CONTACT_SCHEMA, pageRequestRule } from "../../src/contract/schemas";
import { SEED_ITEM_SCHEMAS } from "../../src/exchange/seed-file";
import {
	exportPageParams,
	keysetPage,
	linesOf,
	type ExportPage,
	type ExportPageRequest,
} from "../../src/exchange/registry-export";
import { DEFAULT_MESSAGES } from "../../src/contract/validation";
import { newRecordIdentifier } from "../../src/platform/record-identifier";

export interface AccessPointProviderRecord extends StoredDoc {
	title: string;
	contact: Contact;
}

export interface AccessPointRecord extends StoredDoc {
	title: string;
	/** The access point provider's identifier. */
	provider: string;
	endpoints: EndpointSeed[];
}

const ACCESS_POINT_MODEL: ModelSpec = {
	collection: "accessPoints",
	fields: { title: { kind: "string", caseInsensitive: true }, provider: { kind: "string" } },
	indexes: [
		{ name: "title", fields: ["title"] },
		{ name: "provider", fields: ["provider"] },
	],
};

const ACCESS_POINT_PROVIDER_MODEL: ModelSpec = {
	collection: "accessPointProviders",
	fields: { title: { kind: "string", caseInsensitive: true } },
	indexes: [{ name: "title", fields: ["title"] }],
};

interface AccessPointCollections {
	accessPoints: Collection<AccessPointRecord>;
	accessPointProviders: Collection<AccessPointProviderRecord>;
}

interface AccessPointsService extends Service, OutboxThis {
	store: Store;
	collections: AccessPointCollections;
	answers(records: AccessPointRecord[]): Promise<AccessPoint[]>;
}

function providerAnswer(record: AccessPointProviderRecord): AccessPointProvider {
	const { name, email, phoneNumber } = record.contact;
	return { identifier: record.identifier, title: record.title, contact: { name, email, phoneNumber } };
}

function accessPointAnswer(record: AccessPointRecord, provider: AccessPointProviderRecord | undefined): AccessPoint {
	return {
		identifier: record.identifier,
		title: record.title,
		// A provider always exists (seed import checks it); the fallback keeps an answer whole if one was removed by hand.
		provider: provider
			? providerAnswer(provider)
			: { identifier: record.provider, title: "", contact: { name: "", email: "", phoneNumber: "" } },
		endpoints: record.endpoints.map(({ url, transportProfile }) => ({
			url,
			transportProfile: {
				title: transportProfile.title,
				value: transportProfile.value,
				certificateTypes: [...transportProfile.certificateTypes],
			},
		})),
	};
}

type AccessPointSections = { accessPointProviders?: AccessPointProviderSeed[]; accessPoints?: AccessPointSeed[] };

const AccessPointsServiceSchema: ServiceSchema = {
	name: "accessPoints",
	mixins: [
		OutboxMixin(),
		DbMixin({
			accessPoints: ACCESS_POINT_MODEL,
			accessPointProviders: ACCESS_POINT_PROVIDER_MODEL,
			auditOutbox: AUDIT_OUTBOX_MODEL,
		}),
	],

	actions: {
		// ---- operator actions (operator CLI; no HTTP operation reaches them) -------------

		/** A new access point provider; 409 when the identifier is taken. */
		addProvider: {
			visibility: "public",
			params: {
				title: { type: "string", empty: false, max: 1000 },
				contact: CONTACT_SCHEMA,
				identifier: { type: "uuid", optional: true },
			},
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<{ title: string; contact: Contact; identifier?: string }>,
			): Promise<AccessPointProvider> {
				const { name, email, phoneNumber } = ctx.params.contact;
				const record: AccessPointProviderRecord = {
					identifier: ctx.params.identifier?.toLowerCase() ?? newRecordIdentifier(),
					title: ctx.params.title,
					contact: { name, email, phoneNumber },
				};
				await insertAudited(
					this,
					ctx.meta.user,
					"addAccessPointProvider",
					"accessPointProvider",
					ACCESS_POINT_PROVIDER_MODEL.collection,
					record,
				);
				return providerAnswer(record);
			},
		},

		/** A new access point of an existing provider; 400 when the provider is unknown, 409 when the identifier is taken. */
		add: {
			visibility: "public",
			params: {
				title: { type: "string", empty: false, max: 1000 },
				provider: { type: "uuid" },
				endpoints: { ...(SEED_ITEM_SCHEMAS.accessPoints.props as { endpoints: object }).endpoints, min: 1 },
				identifier: { type: "uuid", optional: true },
			},
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<{
					title: string;
					provider: string;
					endpoints: EndpointSeed[];
					identifier?: string;
				}>,
			): Promise<AccessPoint> {
				const provider = await this.collections.accessPointProviders.get(ctx.params.provider.toLowerCase());
				if (!provider)
					throw ValidationFailed.one("provider", "Exists", DEFAULT_MESSAGES.Exists, ctx.params.provider);
				const record: AccessPointRecord = {
					identifier: ctx.params.identifier?.toLowerCase() ?? newRecordIdentifier(),
					title: ctx.params.title,
					provider: provider.identifier,
					endpoints: ctx.params.endpoints.map(({ url, transportProfile }) => ({
						url,
						transportProfile: {
							title: transportProfile.title,
							value: transportProfile.value,
							certificateTypes: [...transportProfile.certificateTypes],
						},
					})),
				};
				await insertAudited(
					this,
					ctx.meta.user,
					"addAccessPoint",
					"accessPoint",
					ACCESS_POINT_MODEL.collection,
					record,
				);
				return accessPointAnswer(record, provider);
			},
		},

		/** Every access point provider by title (operator CLI `access-points providers`). */
		listProviders: {
			visibility: "public",
			async handler(this: AccessPointsService): Promise<AccessPointProvider[]> {
				return (
					await this.collections.accessPointProviders.find({ sort: [{ field: "title", direction: "asc" }] })
				).map(providerAnswer);
			},
		},

		/** Operator CLI `export`: one page by key of access point providers or access points (src/exchange/registry-export.ts). */
		exportRecords: {
			visibility: "public",
			params: exportPageParams(["accessPointProvider", "accessPoint"]),
			async handler(this: AccessPointsService, ctx: RegistryContext<ExportPageRequest>): Promise<ExportPage> {
				if (ctx.params.type === "accessPointProvider") {
					return linesOf(await keysetPage(this.collections.accessPointProviders, ctx.params), (record) => ({
						type: "accessPointProvider",
						...providerAnswer(record),
					}));
				}
				return linesOf(
					await keysetPage(this.collections.accessPoints, ctx.params),
					({ identifier, title, provider, endpoints }) => ({
						type: "accessPoint",
						identifier,
						title,
						provider,
						endpoints,
					}),
				);
			},
		},

		find: {
			params: { pageRequest: pageRequestRule(SORTABLE.accessPoints) },
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<{ pageRequest: PageRequest }>,
			): Promise<Page<AccessPoint>> {
				const { page, size, sort } = ctx.params.pageRequest;
				const [records, total] = await Promise.all([
					this.collections.accessPoints.find({ sort, offset: page * size, limit: size }),
					this.collections.accessPoints.count(),
				]);
				return pageOf(await this.answers(records), total, ctx.params.pageRequest);
			},
		},
		get: {
			params: { identifier: { type: "uuid" } },
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<{ identifier: string }>,
			): Promise<AccessPoint> {
				const record = await this.collections.accessPoints.get(ctx.params.identifier.toLowerCase());
				if (!record) throw NotFound.instance("access point", ctx.params.identifier);
				const [answer] = await this.answers([record]);
				return answer;
			},
		},

		/** Internal: which of these access point providers exist (accounts and seed checks). */
		providers: {
			visibility: "public",
			params: { identifiers: { type: "array", items: "string" } },
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<{ identifiers: string[] }>,
			): Promise<AccessPointProvider[]> {
				const identifiers = [...new Set(ctx.params.identifiers.map((identifier) => identifier.toLowerCase()))];
				return (await this.collections.accessPointProviders.getMany(identifiers)).map(providerAnswer);
			},
		},

		/** Upserts by identifier in one batch; refuses the sections whole with every reason. */
		importSeed: {
			visibility: "public",
			params: {
				accessPointProviders: { type: "array", optional: true },
				accessPoints: { type: "array", optional: true },
			},
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<AccessPointSections>,
			): Promise<Record<"accessPointProviders" | "accessPoints", SeedCounts>> {
				const sections = {
					accessPointProviders: ctx.params.accessPointProviders ?? [],
					accessPoints: ctx.params.accessPoints ?? [],
				};
				const outside = referencesOutside(sections).accessPointProviders;
				const existing = outside.length
					? (await this.collections.accessPointProviders.getMany(outside)).map((record) => record.identifier)
					: [];
				const reasons = validateSeed(sections, { accessPointProviders: existing });
				if (reasons.length) throw new SeedRefused(reasons);

				const providers = sections.accessPointProviders.map(
					({ identifier, title, contact }): AccessPointProviderRecord => ({
						identifier: identifier.toLowerCase(),
						title,
						contact: { name: contact.name, email: contact.email, phoneNumber: contact.phoneNumber },
					}),
				);
				const accessPoints = sections.accessPoints.map(
					({ identifier, title, provider, endpoints }): AccessPointRecord => ({
						identifier: identifier.toLowerCase(),
						title,
						provider: provider.toLowerCase(),
						endpoints,
					}),
				);
				const providerPlan = planUpserts(
					await this.collections.accessPointProviders.getMany(providers.map((record) => record.identifier)),
					providers,
				);
				const accessPointPlan = planUpserts(
					await this.collections.accessPoints.getMany(accessPoints.map((record) => record.identifier)),
					accessPoints,
				);
				const caller = ctx.meta.user ?? undefined;
				const ops: WriteOp[] = [
					...providerPlan.writes.flatMap(({ before, after }) =>
						upsertWithAudit(
							caller,
							"accessPointProvider",
							ACCESS_POINT_PROVIDER_MODEL.collection,
							before,
							after,
						),
					),
					...accessPointPlan.writes.flatMap(({ before, after }) =>
						upsertWithAudit(caller, "accessPoint", ACCESS_POINT_MODEL.collection, before, after),
					),
				];
				if (ops.length) await this.writeAudited(ops);
				return { accessPointProviders: providerPlan.counts, accessPoints: accessPointPlan.counts };
			},
		},
	},

	methods: {
		async answers(this: AccessPointsService, records: AccessPointRecord[]): Promise<AccessPoint[]> {
			const providerIds = [...new Set(records.map((record) => record.provider))];
			const providers = new Map(
				(await this.collections.accessPointProviders.getMany(providerIds)).map((record) => [
					record.identifier,
					record,
				]),
			);
			return records.map((record) => accessPointAnswer(record, providers.get(record.provider)));
		},
	},
};

/** One new record and its audit record in one batch; a taken identifier is a 409. */
async function insertAudited(
	service: AccessPointsService,
	caller: Caller | null | undefined,
	operation: string,
	resource: "accessPoint" | "accessPointProvider",
	collection: string,
	record: StoredDoc,
): Promise<void> {
	const audit = auditRecord(caller, {
		operation,
		resource,
		resourceId: record.identifier,
		before: null,
		after: record,
	});
	try {
		await service.writeAudited([{ kind: "insert", collection, doc: record }, auditWrite(audit)]);
	} catch (error) {
		if ((error as { name?: string }).name === "DuplicateKey")
			throw new Conflict(
				`${resource === "accessPoint" ? "access point" : "access point provider"} ${record.identifier} already exists`,
			);
		throw error;
	}
}

function upsertWithAudit(
	caller: Caller | undefined,
	resource: "accessPoint" | "accessPointProvider",
	collection: string,
	before: StoredDoc | null,
	after: StoredDoc,
): WriteOp[] {
	const audit = auditRecord(caller, {
		operation: "seed",
		resource,
		resourceId: after.identifier,
		before: before ? { ...before, version: undefined } : null,
		after,
	});
	return [{ kind: "upsert", collection, doc: after }, auditWrite(audit)];
}

export default AccessPointsServiceSchema;
