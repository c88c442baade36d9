/**
 * accessPoints: access points and the providers that run them (spec "Access point",
 * "Access points"; read only in the contract, written by seed import and the operator CLI).
 * An access point's provider keeps its endpoints and their certificates over HTTP, the data
 * SMP publishing needs (decisions §13; docs/decisions.md "SMP publishing data"). Owns the
 * collections accessPoints, accessPointProviders and its audit outbox. Every change is
 * broadcast as `accessPoints.changed` after its commit, for the copies lookup nodes keep.
 *
 * Not cached: only authenticated operators read these, rarely, and an answer is two
 * indexed queries; a cache would add an invalidation path for no measurable gain.
 */
import type { Service, ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { OutboxMixin, type OutboxThis } from "../../mixins/outbox.mixin";
import { DbMixin } from "../../mixins/db.mixin";
import { AUDIT_OUTBOX_MODEL, auditWrite } from "../../src/platform/audit";
import { Conflict, NotFound, ValidationFailed } from "../../src/contract/errors";
import { EVENTS, type RegistryEvent } from "../../src/platform/events";
import {
	CERTIFICATE_WARNING_DAYS,
	endpointAnswer,
	endpointViolations,
	storedEndpoint,
	type AccessPointEndpoints,
	type Endpoint,
} from "../../src/contract/endpoints";
import { expiresWithin } from "../../src/contract/certificates";
import { ACCESS_POINT_ENDPOINTS_FORM, type AccessPointEndpointsForm } from "../../src/contract/schemas";
import { isStaleVersion } from "../../src/store/errors";
import { PeriodicTask } from "../../src/platform/periodic-task";
import { REGISTRY_METRICS, setMetric } from "../../src/platform/registry-metrics";
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
	/** Certificates as base64 DER; optional fields only when set (src/contract/endpoints.ts). */
	endpoints: Endpoint[];
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

interface AccessPointsService
	extends Service<{ certificateCheckIntervalMs: number; maxWriteAttempts: number }>, OutboxThis {
	store: Store;
	collections: AccessPointCollections;
	certificateCheck: PeriodicTask;
	answers(records: AccessPointRecord[]): Promise<AccessPoint[]>;
	countExpiringCertificates(): Promise<number>;
}

/** `accessPoints.changed` of each access point or provider written (src/platform/events.ts). */
function changedEvents(accessPoints: string[], providers: string[] = []): RegistryEvent[] {
	return [
		...providers.map((accessPointProvider) => ({
			name: EVENTS.accessPointsChanged,
			payload: { accessPointProvider },
		})),
		...accessPoints.map((accessPoint) => ({ name: EVENTS.accessPointsChanged, payload: { accessPoint } })),
	];
}

/** The store owns `version`; a replace carries the expected one separately. */
function withoutVersion<T extends StoredDoc>(record: T): T {
	const copy = { ...record };
	delete copy.version;
	return copy;
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
		endpoints: record.endpoints.map(endpointAnswer),
	};
}

type AccessPointSections = {
	accessPointProviders?: AccessPointProviderSeed[];
	accessPoints?: AccessPointSeed[];
	/** The operator CLI's import (a restore) takes certificates that expired since the export. */
	expiredCertificates?: boolean;
};

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

	settings: {
		/** How often the expiring-certificates gauge is recounted (it is after every change too). */
		certificateCheckIntervalMs: 60 * 60 * 1000,
		/** Attempts of an endpoints update that meets a concurrent change (each re-reads the access point). */
		maxWriteAttempts: 8,
	},

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
				const violations = endpointViolations(ctx.params.endpoints);
				if (violations.length) throw new ValidationFailed(violations);
				const record: AccessPointRecord = {
					identifier: ctx.params.identifier?.toLowerCase() ?? newRecordIdentifier(),
					title: ctx.params.title,
					provider: provider.identifier,
					endpoints: ctx.params.endpoints.map(storedEndpoint),
				};
				await insertAudited(
					this,
					ctx.meta.user,
					"addAccessPoint",
					"accessPoint",
					ACCESS_POINT_MODEL.collection,
					record,
				);
				void this.countExpiringCertificates();
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

		/**
		 * PUT /rest/api/accessPoints/{accessPoint}/endpoints: replaces the endpoint list. An
		 * ACCESS_POINT_PROVIDER changes only its own access points (another's answers 404, as
		 * if absent); ADMIN any. Certificates arrive as base64 DER or PEM and are stored as base64 DER.
		 */
		setEndpoints: {
			params: { identifier: { type: "uuid" }, body: ACCESS_POINT_ENDPOINTS_FORM },
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<{ identifier: string; body: AccessPointEndpointsForm }>,
			): Promise<AccessPoint> {
				const identifier = ctx.params.identifier.toLowerCase();
				const caller = ctx.meta.user;
				for (let attempt = 1; ; attempt++) {
					const before = await this.collections.accessPoints.get(identifier);
					const own =
						before &&
						(caller?.role !== "ACCESS_POINT_PROVIDER" || caller.accessPointProvider === before.provider);
					if (!before || !own) throw NotFound.instance("access point", ctx.params.identifier);
					const violations = endpointViolations(ctx.params.body.endpoints);
					if (violations.length) throw new ValidationFailed(violations);
					const after: AccessPointRecord = {
						...withoutVersion(before),
						endpoints: ctx.params.body.endpoints.map(storedEndpoint),
					};
					const audit = auditWrite(caller, {
						operation: "setAccessPointEndpoints",
						resource: "accessPoint",
						resourceId: identifier,
						before: withoutVersion(before),
						after,
					});
					try {
						await this.writeAudited(
							[
								{
									kind: "replace",
									collection: ACCESS_POINT_MODEL.collection,
									doc: after,
									expectedVersion: before.version,
								},
								audit,
							],
							changedEvents([identifier]),
						);
					} catch (error) {
						// The list is replaced whole: against a concurrent change the last writer wins, as with any PUT.
						if (isStaleVersion(error) && attempt < this.settings.maxWriteAttempts) continue;
						if (isStaleVersion(error))
							throw new Conflict(`access point ${identifier} is being changed; retry`);
						throw error;
					}
					void this.countExpiringCertificates();
					const [answer] = await this.answers([after]);
					return answer;
				}
			},
		},

		/** Internal: which of these access points exist (accounts' link checks, seed and import checks). */
		knownIdentifiers: {
			visibility: "public",
			params: { identifiers: { type: "array", items: "string" } },
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<{ identifiers: string[] }>,
			): Promise<string[]> {
				const identifiers = [...new Set(ctx.params.identifiers.map((identifier) => identifier.toLowerCase()))];
				return (await this.collections.accessPoints.getMany(identifiers)).map((record) => record.identifier);
			},
		},

		/**
		 * Internal, for SMP answers: these access points (every one when `accessPoints` is
		 * absent) with their stored endpoints, in the order asked, unknown ones omitted.
		 */
		endpointsOf: {
			visibility: "public",
			params: { accessPoints: { type: "array", items: "string", optional: true } },
			async handler(
				this: AccessPointsService,
				ctx: RegistryContext<{ accessPoints?: string[] }>,
			): Promise<AccessPointEndpoints[]> {
				const asked = ctx.params.accessPoints?.map((identifier) => identifier.toLowerCase());
				const records = asked
					? await this.collections.accessPoints.getMany([...new Set(asked)])
					: await this.collections.accessPoints.find({});
				const byIdentifier = new Map(records.map((record) => [record.identifier, record]));
				const order = asked ?? records.map((record) => record.identifier).sort();
				return order.flatMap((identifier) => {
					const record = byIdentifier.get(identifier);
					if (!record) return [];
					byIdentifier.delete(identifier);
					const { title, provider, endpoints } = record;
					return [{ identifier, title, provider, endpoints: endpoints.map(endpointAnswer) }];
				});
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
				expiredCertificates: { type: "boolean", optional: true },
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
				const reasons = validateSeed(
					sections,
					{ accessPointProviders: existing },
					{ expiredCertificates: ctx.params.expiredCertificates === true },
				);
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
						endpoints: endpoints.map(storedEndpoint),
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
				if (ops.length) {
					await this.writeAudited(
						ops,
						changedEvents(
							accessPointPlan.writes.map(({ after }) => after.identifier),
							providerPlan.writes.map(({ after }) => after.identifier),
						),
					);
					void this.countExpiringCertificates();
				}
				return { accessPointProviders: providerPlan.counts, accessPoints: accessPointPlan.counts };
			},
		},
	},

	methods: {
		/** Sets `registry_access_point_certificates_expiring`: endpoints whose certificate ends within 30 days (or has). */
		async countExpiringCertificates(this: AccessPointsService): Promise<number> {
			const now = new Date();
			const expiring = (await this.collections.accessPoints.find({}))
				.flatMap((record) => record.endpoints)
				.filter(
					(endpoint) =>
						endpoint.certificate !== undefined &&
						expiresWithin(endpoint.certificate, CERTIFICATE_WARNING_DAYS, now),
				).length;
			setMetric(this.broker, REGISTRY_METRICS.accessPointCertificatesExpiring, expiring);
			return expiring;
		},

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

	// Lifecycle hooks are typed `this: Service` by moleculer.
	created(this: Service) {
		const self = this as unknown as AccessPointsService;
		self.certificateCheck = new PeriodicTask(
			() => self.countExpiringCertificates(),
			(error) => self.logger.warn("counting expiring certificates failed:", String(error)),
		);
	},

	async started(this: Service) {
		const self = this as unknown as AccessPointsService;
		await self.countExpiringCertificates();
		self.certificateCheck.start(self.settings.certificateCheckIntervalMs);
	},

	async stopped(this: Service) {
		await (this as unknown as AccessPointsService).certificateCheck.stop();
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
	const audit = auditWrite(caller, {
		operation,
		resource,
		resourceId: record.identifier,
		before: null,
		after: record,
	});
	try {
		await service.writeAudited(
			[{ kind: "insert", collection, doc: record }, audit],
			resource === "accessPoint" ? changedEvents([record.identifier]) : changedEvents([], [record.identifier]),
		);
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
	const audit = auditWrite(caller, {
		operation: "seed",
		resource,
		resourceId: after.identifier,
		before: before ? { ...before, version: undefined } : null,
		after,
	});
	return [{ kind: "upsert", collection, doc: after }, audit];
}

export default AccessPointsServiceSchema;
