/**
 * The OpenAPI 3.1 document, generated from the operations table (paths, methods, media
 * types, roles, statuses, paging and sortable names) and the request body schemas of
 * src/contract/schemas.ts. Nothing about an operation is written here; only the shapes of the
 * answers (src/contract/resource-schemas.ts), which a test checks against real answers.
 */
import { answersLocation, fullPathOf, OPERATIONS, API_BASE, type Operation } from "./operations";
import { USERNAME_PATTERN } from "./model";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./paging";
import {
	ACCESS_POINT_ENDPOINTS_FORM,
	ACCOUNT_FORM,
	OAUTH_CLIENT_FORM,
	ADD_PARTICIPANT_FORM,
	COMPLETE_TRANSFER_FORM,
	PASSWORD_FORM,
	SERVICE_PROVIDER_ACCESS_POINTS_FORM,
	SERVICE_PROVIDER_FORM,
	DOCUMENT_TYPE_FORM,
	PROCESS_FORM,
	PROCESS_REPLACEMENT_FORM,
	START_TRANSFER_FORM,
	UPDATE_PARTICIPANT_FORM,
} from "./schemas";
import { RESOURCE_SCHEMAS } from "./resource-schemas";
import { DEFAULT_MESSAGES } from "./validation";

type JsonSchema = Record<string, unknown>;
type Rule = Record<string, unknown>;

/** Body schema per validated object name (errors[].objectName and the OpenAPI component name). */
export const FORMS: Record<string, Rule> = {
	documentTypeFormDTO: DOCUMENT_TYPE_FORM,
	processFormDTO: PROCESS_FORM,
	addParticipantFormDTO: ADD_PARTICIPANT_FORM,
	updateParticipantFormDTO: UPDATE_PARTICIPANT_FORM,
	startTransferFormDTO: START_TRANSFER_FORM,
	completeTransferFormDTO: COMPLETE_TRANSFER_FORM,
	processReplacementFormDTO: PROCESS_REPLACEMENT_FORM,
	accountFormDTO: ACCOUNT_FORM,
	oauthClientFormDTO: OAUTH_CLIENT_FORM,
	passwordFormDTO: PASSWORD_FORM,
	serviceProviderFormDTO: SERVICE_PROVIDER_FORM,
	accessPointEndpointsFormDTO: ACCESS_POINT_ENDPOINTS_FORM,
	serviceProviderAccessPointsFormDTO: SERVICE_PROVIDER_ACCESS_POINTS_FORM,
};

const REQUIRED_MESSAGE_CODES = new Set(["NotNull", "NotEmpty"]);

/** fastest-validator rule → JSON Schema (the subset the registry's schemas use). */
export function ruleToJsonSchema(rule: Rule): { schema: JsonSchema; required: boolean } {
	const optional = rule.optional === true;
	const nullable = rule.nullable === true;
	let schema: JsonSchema;
	switch (rule.type) {
		case "string":
			schema = { type: "string" };
			if (rule.empty === false) schema.minLength = 1;
			if (typeof rule.min === "number") schema.minLength = rule.min;
			if (typeof rule.max === "number") schema.maxLength = rule.max;
			if (rule.pattern instanceof RegExp) schema.pattern = rule.pattern.source;
			break;
		case "email":
			schema = { type: "string", format: "email" };
			if (typeof rule.max === "number") schema.maxLength = rule.max;
			break;
		case "uuid":
			schema = { type: "string", format: "uuid" };
			break;
		case "url":
			schema = { type: "string", format: "uri", pattern: "^https?://" };
			break;
		case "boolean":
			schema = { type: "boolean" };
			break;
		case "enum":
			schema = { type: "string", enum: rule.values };
			break;
		case "number":
			schema = { type: rule.integer === true ? "integer" : "number" };
			if (typeof rule.min === "number") schema.minimum = rule.min;
			if (typeof rule.max === "number") schema.maximum = rule.max;
			break;
		case "array":
			schema = { type: "array", items: rule.items ? ruleToJsonSchema(rule.items as Rule).schema : {} };
			break;
		case "object": {
			const properties: Record<string, JsonSchema> = {};
			const required: string[] = [];
			for (const [name, child] of Object.entries((rule.props ?? {}) as Record<string, Rule>)) {
				const converted = ruleToJsonSchema(child);
				properties[name] = converted.schema;
				if (converted.required) required.push(name);
			}
			schema = { type: "object", properties };
			if (required.length) schema.required = required;
			break;
		}
		default:
			schema = {};
	}
	const messages = (rule.messages ?? {}) as Record<string, string>;
	if (messages.required && REQUIRED_MESSAGE_CODES.has(messages.required)) {
		schema.description = `Required: ${DEFAULT_MESSAGES[messages.required]} (${messages.required})`;
	}
	if (nullable && typeof schema.type === "string") schema.type = [schema.type, "null"];
	return { schema, required: !optional };
}

const ERROR_STATUSES: Record<number, string> = {
	400: "Bad request: validation failure (errors[]), unreadable JSON, or a bad path/query value",
	401: "No or wrong credentials (WWW-Authenticate: Basic, and Bearer where an OAuth issuer is configured)",
	403: "The caller's role may not use this operation",
	404: "No record with that identifier (or not one the caller may see)",
	406: "The Accept header names no media type of this operation",
	409: "Conflict: a uniqueness rule, the record is still in use, or a job of that kind is running",
	412: "If-Match names a representation the record no longer has: it changed since it was read",
	413: "Body larger than 1 MiB",
	415: "Content-Type is neither the operation's media type nor application/json",
	422: "The Idempotency-Key was used for another request",
	429: "Too many failed logins, or the rate limit (Retry-After)",
	503: "A service the request needs is not reachable",
};

function errorStatuses(operation: Operation): number[] {
	// Wrong credentials are 401 on every operation, ANONYMOUS ones included (decisions §3).
	const statuses = [400, 401, 406, 429, 503];
	if (operation.roles.length < 5) statuses.push(403);
	if (Object.keys(operation.pathParams).length > 0) statuses.push(404);
	if (operation.body) statuses.push(413, 415);
	if (operation.body || operation.method === "DELETE" || operation.id === "transferParticipant") statuses.push(409);
	if (operation.id === "transferParticipant") statuses.push(404);
	if (operation.ifMatch) statuses.push(412);
	if (operation.idempotent) statuses.push(422);
	statuses.push(...(operation.refusals ?? []));
	return [...new Set(statuses)].sort();
}

function pathParameter(name: string, kind: string): JsonSchema {
	const [schema, description] =
		kind === "uuid"
			? [{ type: "string", format: "uuid" }, "UUID"]
			: kind === "username"
				? [{ type: "string", pattern: USERNAME_PATTERN.source }, "An account's username"]
				: kind === "smpIdentifier"
					? [
							{ type: "string", pattern: "::", examples: ["iso6523-actorid-upis::0192:991825827"] },
							"SMP identifier <scheme>::<value>, one percent-encoded path segment (docs/smp.md)",
						]
					: [
							{
								type: "string",
								pattern: "^[A-Za-z0-9-]+::\\d{1,4}:[\\x21-\\x7E]{1,35}$",
								examples: ["iso6523-actorid-upis::0192:991825827"],
							},
							"Qualified identifier <scheme>::<icd>:<organizationIdentifier> (percent-encoding accepted)",
						];
	return { name, in: "path", required: true, schema, description };
}

function queryParameters(operation: Operation): JsonSchema[] {
	const parameters: JsonSchema[] = [];
	if (operation.sortable) {
		const names = Object.keys(operation.sortable);
		parameters.push(
			{
				name: "page",
				in: "query",
				schema: { type: "integer", minimum: 0, default: 0 },
				description: "Page to fetch; the first page is 0",
			},
			{
				name: "size",
				in: "query",
				schema: { type: "integer", minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
				description: `Page size; larger values are clamped to ${MAX_PAGE_SIZE}`,
			},
			{
				name: "sort",
				in: "query",
				style: "form",
				explode: true,
				schema: {
					type: "array",
					items: {
						type: "string",
						pattern: `^(${names.map((name) => name.replace(/\./g, "\\.")).join("|")})(,(${names.map((name) => name.replace(/\./g, "\\.")).join("|")}))*(,(ASC|DESC|asc|desc))?$`,
					},
				},
				description: `property[,property…][,ASC|DESC], repeatable. Sortable: ${names.join(", ")}`,
			},
		);
	}
	for (const [name, spec] of Object.entries(operation.queryParams ?? {})) {
		const schema =
			spec.type === "boolean"
				? { type: "boolean", default: false }
				: spec.type === "integer"
					? { type: "integer", minimum: 0 }
					: { type: "string" };
		parameters.push({ name, in: "query", schema, description: spec.description });
	}
	return parameters;
}

/** The request headers an operation reads: its own, and those of safe writes and idempotent adds (docs/decisions.md "Safe writes"). */
function headerParameters(operation: Operation): JsonSchema[] {
	const header = (name: string, description: string) => ({
		name,
		in: "header",
		schema: { type: "string" },
		description,
	});
	const parameters = Object.entries(operation.headerParams ?? {}).map(([name, spec]) =>
		header(name, spec.description),
	);
	if (operation.entityTag && operation.method === "GET")
		parameters.push(
			header("If-None-Match", "An ETag of this record read before: 304 without a body while it is still current"),
		);
	if (operation.ifMatch)
		parameters.push(
			header(
				"If-Match",
				"The ETag of the record as read: the change is made only while it is still current, else 412",
			),
		);
	if (operation.idempotent)
		parameters.push(
			header(
				"Idempotency-Key",
				"A key of the caller's choosing (1 to 255 printable ASCII characters): a retry with the same key and body gets the first answer again, for 24 hours",
			),
		);
	return parameters;
}

function responseSchema(operation: Operation): JsonSchema | undefined {
	if (!operation.response) return undefined;
	if (operation.response.xml)
		return { type: "string", description: `The ${operation.response.schema} XML document (docs/smp.md)` };
	const item = { $ref: `#/components/schemas/${operation.response.schema}` };
	if (operation.response.eventStream) {
		return {
			type: "string",
			description: `Server-Sent Events: one \`${operation.response.schema.toLowerCase()}\` event per record, its data a ${operation.response.schema} (JSON), its id the cursor to resume after`,
			"x-event-data": item,
		};
	}
	if (operation.response.paged) {
		return {
			allOf: [
				{ $ref: "#/components/schemas/Page" },
				{ type: "object", properties: { content: { type: "array", items: item } } },
			],
		};
	}
	return operation.response.array ? { type: "array", items: item } : item;
}

/** Operations sharing method and path become one OpenAPI operation with several media types. */
function pathItem(group: Operation[]): JsonSchema {
	// The default form first: Swagger UI and generated clients offer the first media type.
	const operations = [...group].sort((a, b) => Number(b.isDefault ?? false) - Number(a.isDefault ?? false));
	const first = operations[0];
	const roles = [...new Set(operations.flatMap((operation) => operation.roles))];
	const eitherForm =
		operations.length > 1 &&
		operations.some((operation) => operation.pathForm === "uuid") &&
		operations.some((operation) => operation.pathForm === "qualifiedIdentifier");
	const parameters = Object.entries(first.pathParams).map(([name, kind]) =>
		pathParameter(name, eitherForm ? "participant" : kind),
	);
	for (const parameter of parameters) {
		// A participant path taking either form; the SMP paths' `participant` keeps its SMP identifier.
		if (parameter.name === "participant" && eitherForm) {
			parameter.schema = { type: "string", description: "A qualified identifier or a UUID" };
			parameter.description =
				"Qualified identifier <scheme>::<icd>:<organizationIdentifier>, or the participant's UUID";
		}
	}
	const seen = new Set<string>();
	for (const operation of operations) {
		for (const parameter of [...queryParameters(operation), ...headerParameters(operation)]) {
			if (!seen.has(parameter.name as string)) {
				parameters.push(parameter);
				seen.add(parameter.name as string);
			}
		}
	}
	const success: JsonSchema = {};
	for (const operation of operations) {
		const key = String(operation.status);
		const entry = (success[key] ??= {
			description: operation.status === 204 ? "Done; no body" : operation.summary,
		}) as JsonSchema;
		const headers: JsonSchema = {};
		if (answersLocation(operation))
			headers.Location = {
				description:
					operation.status === 202
						? "Path of the accepted job (read it to follow its progress)"
						: "Path of the created record",
				schema: { type: "string" },
			};
		if (operation.idempotent)
			headers["Idempotent-Replayed"] = {
				description: "`true` when this is the first answer again (a retry with the same Idempotency-Key)",
				schema: { type: "string" },
			};
		if (operation.entityTag)
			headers.ETag = {
				description: "The tag of this representation, for If-Match and If-None-Match",
				schema: { type: "string" },
			};
		if (Object.keys(headers).length) entry.headers = { ...((entry.headers as JsonSchema) ?? {}), ...headers };
		const schema = responseSchema(operation);
		if (schema) {
			const content = (entry.content ??= {}) as JsonSchema;
			for (const mediaType of operation.mediaTypes) content[mediaType] = { schema };
		}
		if (operation.entityTag && operation.method === "GET")
			success["304"] = {
				description: "Not modified: If-None-Match names the current ETag",
				headers: { ETag: { schema: { type: "string" } } },
			};
	}
	const responses: JsonSchema = { ...success };
	for (const status of [...new Set(operations.flatMap(errorStatuses))].sort()) {
		responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
	}
	const roleText = operations
		.map(
			(operation) =>
				`${operation.summary}: ${operation.roles.join(", ")}${operation.pathForm ? ` (path value is a ${operation.pathForm === "uuid" ? "UUID" : "qualified identifier"})` : ""}`,
		)
		.join("; ");
	const body: JsonSchema | undefined = first.body
		? {
				required: true,
				content: Object.fromEntries(
					[...first.mediaTypes, "application/json"].map((mediaType) => [
						mediaType,
						{ schema: { $ref: `#/components/schemas/${first.body?.objectName}` } },
					]),
				),
			}
		: undefined;
	return {
		operationId: operations.map((operation) => operation.id).join("_or_"),
		summary: operations.map((operation) => operation.summary).join(" / "),
		description:
			`Roles: ${roleText}. ${operations.length > 1 && !first.pathForm ? "The Accept media type selects the form; a missing or generic Accept selects the paged form." : ""}`.trim(),
		tags: [first.tag],
		"x-roles": roles,
		"x-media-types": operations.flatMap((operation) => operation.mediaTypes),
		security: roles.includes("ANONYMOUS")
			? [{}, { basicAuth: [] }, { bearerAuth: [] }]
			: [{ basicAuth: [] }, { bearerAuth: [] }],
		...(parameters.length ? { parameters } : {}),
		...(body ? { requestBody: body } : {}),
		responses,
	};
}

/** Paths of the gateway outside the operations table (answered without credentials). */
function operationalPaths(): Record<string, JsonSchema> {
	const json = (description: string) => ({
		description,
		content: { "application/json": { schema: { type: "object" } } },
	});
	return {
		"/health/live": {
			get: {
				operationId: "live",
				summary: "Liveness",
				tags: ["Operations"],
				security: [{}],
				responses: { "200": json("The process is up") },
			},
		},
		"/health/ready": {
			get: {
				operationId: "ready",
				summary: "Readiness",
				tags: ["Operations"],
				security: [{}],
				responses: { "200": json("Ready"), "503": json("Not ready: checks names what is down") },
			},
		},
		"/metrics": {
			get: {
				operationId: "metrics",
				summary: "Prometheus metrics",
				tags: ["Operations"],
				security: [{}],
				responses: {
					"200": {
						description: "Prometheus text format",
						content: { "text/plain": { schema: { type: "string" } } },
					},
				},
			},
		},
		"/docs": {
			get: {
				operationId: "docs",
				summary: "Interactive documentation (Swagger UI)",
				tags: ["Operations"],
				security: [{}],
				responses: {
					"200": { description: "HTML page", content: { "text/html": { schema: { type: "string" } } } },
				},
			},
		},
		[`${API_BASE}/openapi.json`]: {
			get: {
				operationId: "openapi",
				summary: "This document",
				tags: ["Operations"],
				security: [{}],
				responses: { "200": json("OpenAPI 3.1 document") },
			},
		},
	};
}

export function openApiDocument(version = "0.1.0"): JsonSchema {
	const paths: Record<string, JsonSchema> = {};
	const groups = new Map<string, Operation[]>();
	for (const operation of OPERATIONS) {
		const key = `${operation.method} ${operation.path}`;
		groups.set(key, [...(groups.get(key) ?? []), operation]);
	}
	for (const operations of groups.values()) {
		const path = fullPathOf(operations[0]).replace(/:([A-Za-z]+)/g, "{$1}");
		paths[path] = { ...(paths[path] ?? {}), [operations[0].method.toLowerCase()]: pathItem(operations) };
	}
	Object.assign(paths, operationalPaths());

	const forms = Object.fromEntries(
		Object.entries(FORMS).map(([name, rule]) => [name, ruleToJsonSchema(rule).schema]),
	);
	const errorResponses = Object.fromEntries(
		Object.entries(ERROR_STATUSES).map(([status, description]) => [
			`Error${status}`,
			{ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
		]),
	);
	return {
		openapi: "3.1.0",
		info: {
			title: "Participant Registry REST API",
			version,
			description:
				"The national registry of participants (organizations registered by their service providers), access points, document types and processes. Every operation is versioned by its media type (API description 3.24.0). HTTP Basic authentication, or an OAuth 2.0 Bearer access token where the registry is configured with an issuer; roles per operation.",
		},
		servers: [{ url: "/" }],
		tags: [...new Set(OPERATIONS.map((operation) => operation.tag)), "Operations"].map((name) => ({ name })),
		paths,
		components: {
			securitySchemes: {
				basicAuth: { type: "http", scheme: "basic" },
				bearerAuth: {
					type: "http",
					scheme: "bearer",
					bearerFormat: "JWT",
					description:
						"An OAuth 2.0 access token (RFC 9068) of the issuer the registry is configured with (OAUTH_ISSUER), client credentials grant; it acts as the account whose oauthClientId is its client_id (docs/decisions.md §15)",
				},
			},
			schemas: { ...RESOURCE_SCHEMAS, ...forms },
			responses: errorResponses,
		},
	};
}
