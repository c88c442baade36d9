/**
 * JSON Schemas of what the registry answers (spec "Resources and their fields", "Page
 * envelope", "Errors"), for the OpenAPI document. test/integration/openapi.http.spec.ts
 * validates real answers against them, so they cannot drift from the services.
 */
type JsonSchema = Record<string, unknown>;

const uuid = { type: "string", format: "uuid" };
const text = { type: "string" };
const date = { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" };
const flags = {
	type: "object",
	required: ["sorted", "unsorted", "empty"],
	properties: { sorted: { type: "boolean" }, unsorted: { type: "boolean" }, empty: { type: "boolean" } },
};

const participantProperties = {
	identifier: uuid,
	qualifiedIdentifier: text,
	icd: { type: "string", pattern: "^\\d{1,4}$" },
	organizationIdentifier: { type: "string", maxLength: 35 },
	name: text,
	registrationDate: date,
	lastModificationDate: date,
	deleteDate: date,
	contact: { $ref: "#/components/schemas/Contact" },
	provider: { type: "object", required: ["identifier", "title"], properties: { identifier: uuid, title: text } },
	processes: { type: "array", items: { $ref: "#/components/schemas/Process" } },
};

export const RESOURCE_SCHEMAS: Record<string, JsonSchema> = {
	Contact: {
		type: "object",
		required: ["name", "email", "phoneNumber"],
		properties: { name: text, email: text, phoneNumber: text },
	},
	AccessPoint: {
		type: "object",
		required: ["identifier", "title", "provider", "endpoints"],
		properties: {
			identifier: uuid,
			title: text,
			provider: {
				type: "object",
				required: ["identifier", "title"],
				properties: { identifier: uuid, title: text, contact: { $ref: "#/components/schemas/Contact" } },
			},
			endpoints: {
				type: "array",
				items: {
					type: "object",
					required: ["url", "transportProfile"],
					properties: {
						url: text,
						transportProfile: {
							type: "object",
							properties: { title: text, value: text, certificateTypes: { type: "array", items: text } },
						},
						certificate: {
							type: "string",
							contentEncoding: "base64",
							description:
								"The registry's extension (decisions §13), only when set: the access point's X.509 certificate, base64 of its DER (PEM is accepted in requests)",
						},
						activationDate: {
							type: "string",
							description:
								"The registry's extension, only when set: ISO 8601 date or date-time from which the endpoint is used",
						},
						expirationDate: {
							type: "string",
							description:
								"The registry's extension, only when set: ISO 8601 date or date-time after which it is not used",
						},
						description: { type: "string", description: "The registry's extension, only when set" },
						technicalContactUrl: {
							type: "string",
							format: "uri",
							description:
								"The registry's extension, only when set: where the endpoint's technical contact is found",
						},
					},
				},
			},
		},
	},
	ProcessSummary: {
		type: "object",
		required: ["identifier"],
		properties: {
			identifier: uuid,
			qualifiedIdentifier: text,
			title: text,
			visible: { type: "boolean" },
			restricted: { type: "boolean" },
		},
	},
	DocumentTypeSummary: {
		type: "object",
		required: ["identifier"],
		properties: { identifier: uuid, qualifiedIdentifier: text, title: text, visible: { type: "boolean" } },
	},
	Capability: { type: "object", required: ["identifier", "title"], properties: { identifier: uuid, title: text } },
	DocumentType: {
		type: "object",
		required: ["identifier", "title", "processes"],
		properties: {
			identifier: uuid,
			qualifiedIdentifier: text,
			title: text,
			visible: { type: "boolean", description: "May be absent in some listings" },
			processes: { type: "array", items: { $ref: "#/components/schemas/ProcessSummary" } },
		},
	},
	Process: {
		type: "object",
		required: ["identifier", "domain", "capabilities", "documentTypes", "dependencies", "requiredICDs"],
		properties: {
			identifier: uuid,
			qualifiedIdentifier: text,
			domain: text,
			title: text,
			alias: text,
			restricted: { type: "boolean", description: "True if the process is deprecated" },
			visible: { type: "boolean", description: "Optional in some responses" },
			capabilities: { type: "array", items: { $ref: "#/components/schemas/Capability" } },
			documentTypes: { type: "array", items: { $ref: "#/components/schemas/DocumentTypeSummary" } },
			dependencies: { type: "array", items: { $ref: "#/components/schemas/ProcessSummary" } },
			requiredICDs: { type: "array", items: text },
		},
	},
	Participant: {
		type: "object",
		required: [
			"identifier",
			"qualifiedIdentifier",
			"icd",
			"organizationIdentifier",
			"registrationDate",
			"lastModificationDate",
			"contact",
		],
		properties: participantProperties,
	},
	ProcessReference: { type: "object", required: ["identifier"], properties: { identifier: uuid } },
	ExportedParticipant: {
		type: "object",
		description:
			"One line of the participant export (NDJSON): a participant with its provider, and its processes as references (the shape the import reads)",
		required: [
			"identifier",
			"qualifiedIdentifier",
			"icd",
			"organizationIdentifier",
			"registrationDate",
			"lastModificationDate",
			"contact",
			"provider",
			"processes",
		],
		properties: {
			...participantProperties,
			processes: { type: "array", items: { $ref: "#/components/schemas/ProcessReference" } },
		},
	},
	AuditEvent: {
		type: "object",
		required: ["identifier", "at", "operation", "resource", "resourceId"],
		properties: {
			identifier: uuid,
			at: { type: "string", format: "date-time" },
			actor: {
				type: ["object", "null"],
				properties: {
					username: text,
					role: text,
					serviceProvider: uuid,
					viaToken: {
						type: "boolean",
						description: "true: the change came with an OAuth access token (docs/decisions.md §15)",
					},
				},
			},
			operation: text,
			resource: text,
			resourceId: text,
			serviceProviders: { type: "array", items: uuid },
			before: {},
			after: {},
		},
	},
	Transfer: {
		type: "object",
		description:
			'A consented transfer of a participant (docs/decisions.md "Transfers"); `key` only in the answer of the start',
		required: ["identifier", "participant", "from", "to", "state", "createdDate", "expiresDate"],
		properties: {
			identifier: uuid,
			participant: {
				type: "object",
				required: ["identifier", "qualifiedIdentifier"],
				properties: { identifier: uuid, qualifiedIdentifier: text, name: text },
			},
			from: { type: "object", required: ["identifier"], properties: { identifier: uuid, name: text } },
			to: { type: "object", required: ["identifier"], properties: { identifier: uuid, name: text } },
			state: { enum: ["PENDING", "COMPLETED", "CANCELLED", "EXPIRED"] },
			createdDate: { type: "string", format: "date-time" },
			expiresDate: {
				type: "string",
				format: "date-time",
				description: "A PENDING transfer is EXPIRED after this instant",
			},
			effectiveDate: { ...date, description: "Not completed before this UTC day" },
			completedDate: { type: "string", format: "date-time" },
			cancelledDate: { type: "string", format: "date-time" },
			key: {
				type: "string",
				maxLength: 24,
				description:
					"The single-use key the receiver completes with; answered only when the transfer is started",
			},
		},
	},
	Change: {
		type: "object",
		description:
			'One committed change (docs/decisions.md "Change feed"): the record after it in reference form, or null when it is gone',
		required: ["sequence", "at", "operation", "resource", "identifier", "version", "deleted", "record"],
		properties: {
			sequence: { type: "integer", minimum: 1 },
			at: { type: "string", format: "date-time" },
			operation: text,
			resource: { enum: ["participant", "process", "documentType", "capability"] },
			identifier: uuid,
			version: { type: "integer", minimum: 1 },
			deleted: { type: "boolean" },
			record: {
				type: ["object", "null"],
				description:
					"Participant: its answer's fields with provider and processes as references ({ identifier }); process: its fields with capabilities, documentTypes and dependencies as references; document type and capability: their own fields",
			},
		},
	},
	ChangePage: {
		type: "object",
		required: ["changes", "cursor", "more"],
		properties: {
			changes: { type: "array", items: { $ref: "#/components/schemas/Change" } },
			cursor: { type: "string", description: "Resume after this (the `after` of the next request)" },
			more: { type: "boolean", description: "More changes follow already" },
		},
	},
	Account: {
		type: "object",
		description:
			'An account that may call the registry (never its password). Accounts over HTTP are the registry\'s extension (docs/decisions.md "Accounts over HTTP")',
		required: ["identifier", "username", "role", "disabled"],
		properties: {
			identifier: uuid,
			username: text,
			role: { type: "string", enum: ["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", "ADMIN", "NETWORK_AUTHORITY"] },
			serviceProvider: { ...uuid, description: "SERVICE_PROVIDER accounts: the provider they act for" },
			serviceProviderTitle: {
				type: "string",
				description:
					"Only in the caller's own account (GET /rest/api/account): the title of its service provider",
			},
			accessPointProvider: {
				...uuid,
				description: "ACCESS_POINT_PROVIDER accounts: their access point provider",
			},
			oauthClientId: {
				type: "string",
				description:
					"The OAuth client whose access tokens act as this account (a token's client_id, else sub; docs/decisions.md §15)",
			},
			disabled: { type: "boolean" },
		},
	},
	NetworkState: {
		type: "object",
		description:
			"What the network knows of an organization (decisions §14): whether the SML points to this registry for it, whether the Peppol Directory was told of its business card, and the DNS names access points look up",
		required: ["sml", "directory", "dns"],
		properties: {
			sml: { $ref: "#/components/schemas/NetworkDelivery" },
			directory: { $ref: "#/components/schemas/NetworkDelivery" },
			dns: {
				type: "object",
				required: ["naptr", "cname"],
				properties: {
					naptr: {
						type: "string",
						description: "The NAPTR name: base32(sha256(lower-case <icd>:<id>)), the scheme and SML_ZONE",
					},
					cname: { type: "string", description: "The legacy CNAME: B-<md5 hex>, the scheme and SML_ZONE" },
				},
			},
		},
	},
	NetworkDelivery: {
		type: "object",
		required: ["state", "message", "at"],
		properties: {
			state: {
				type: "string",
				enum: ["registered", "pending", "failing", "off"],
				description:
					"registered: delivered; pending: a delivery is due; failing: the last attempt failed (retried, or parked after a day); off: not configured",
			},
			message: {
				type: ["string", "null"],
				description: "The last failure's message (the SML's fault), or what the delivery waits for",
			},
			at: {
				type: ["string", "null"],
				format: "date-time",
				description: "When it was last delivered or last failed",
			},
		},
	},
	ServiceProvider: {
		type: "object",
		required: ["identifier", "title", "accessPoints"],
		properties: {
			identifier: uuid,
			title: text,
			accessPoints: {
				type: "array",
				description:
					"The access points its participants receive through (decisions §13), as references: what the SMP answers publish for them",
				items: { type: "object", required: ["identifier"], properties: { identifier: uuid } },
			},
		},
	},
	ProcessReplacementJob: {
		type: "object",
		description:
			'A job replacing process `from` with `to` for every participant holding `from` (docs/decisions.md "Bulk jobs")',
		required: ["identifier", "from", "to", "dryRun", "state", "startedBy", "startedDate", "progress", "counts"],
		properties: {
			identifier: uuid,
			from: { $ref: "#/components/schemas/JobProcess" },
			to: { $ref: "#/components/schemas/JobProcess" },
			dryRun: { type: "boolean" },
			state: { enum: ["RUNNING", "SUCCEEDED", "FAILED", "INTERRUPTED"] },
			startedBy: { type: "string", description: "Username of the account that started it" },
			startedDate: { type: "string", format: "date-time" },
			finishedDate: { type: "string", format: "date-time" },
			progress: {
				type: "object",
				required: ["total", "done"],
				properties: {
					total: {
						type: "integer",
						minimum: 0,
						description: "Participants holding `from` when the job started (raised if more are found)",
					},
					done: { type: "integer", minimum: 0 },
				},
			},
			counts: {
				type: "object",
				required: ["replaced", "wouldReplace", "refused", "unchanged"],
				properties: {
					replaced: { type: "integer" },
					wouldReplace: { type: "integer" },
					refused: { type: "integer" },
					unchanged: { type: "integer" },
				},
			},
			failure: { type: "object", required: ["message"], properties: { message: text } },
		},
	},
	JobProcess: {
		type: "object",
		required: ["identifier"],
		properties: { identifier: uuid, qualifiedIdentifier: text, title: text },
	},
	ProcessReplacementResult: {
		type: "object",
		required: ["participant", "outcome"],
		properties: {
			participant: {
				type: "object",
				required: ["identifier", "qualifiedIdentifier"],
				properties: { identifier: uuid, qualifiedIdentifier: text, name: text },
			},
			outcome: { enum: ["REPLACED", "WOULD_REPLACE", "REFUSED", "UNCHANGED"] },
			reason: {
				type: "string",
				description:
					"Why it was refused or left unchanged; for REPLACED, when the participant held `to` already",
			},
		},
	},
	Page: {
		type: "object",
		required: [
			"content",
			"number",
			"size",
			"numberOfElements",
			"totalElements",
			"totalPages",
			"first",
			"last",
			"empty",
			"sort",
			"pageable",
		],
		properties: {
			content: { type: "array" },
			number: { type: "integer" },
			size: { type: "integer" },
			numberOfElements: { type: "integer" },
			totalElements: { type: "integer" },
			totalPages: { type: "integer" },
			first: { type: "boolean" },
			last: { type: "boolean" },
			empty: { type: "boolean" },
			sort: flags,
			pageable: {
				type: "object",
				required: ["sort", "pageNumber", "pageSize", "offset", "paged", "unpaged"],
				properties: {
					sort: flags,
					pageNumber: { type: "integer" },
					pageSize: { type: "integer" },
					offset: { type: "integer" },
					paged: { type: "boolean" },
					unpaged: { type: "boolean" },
				},
			},
		},
	},
	Error: {
		type: "object",
		required: ["timestamp", "status", "error", "exception", "message", "path"],
		properties: {
			timestamp: { type: "string", description: "ISO 8601 date-time without zone" },
			status: { type: "integer" },
			error: text,
			exception: text,
			message: text,
			path: text,
			description: text,
			errors: {
				type: "array",
				items: {
					type: "object",
					required: [
						"codes",
						"defaultMessage",
						"objectName",
						"field",
						"rejectedValue",
						"bindingFailure",
						"code",
						"arguments",
					],
					properties: {
						codes: { type: "array", items: text },
						defaultMessage: text,
						objectName: text,
						field: text,
						rejectedValue: {
							type: ["string", "null"],
							description:
								"The value sent when it is a string; null when missing; any other value as its JSON text (decisions §8)",
						},
						bindingFailure: { type: "boolean" },
						code: text,
						arguments: {
							type: "array",
							items: {
								type: "object",
								properties: { codes: { type: "array", items: text }, defaultMessage: text, code: text },
							},
						},
					},
				},
			},
		},
	},
};
