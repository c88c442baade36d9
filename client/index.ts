/**
 * Typed TypeScript client of the participant registry, generated from its OpenAPI document
 * (`npm run client:generate` rewrites client/openapi.json and client/schema.d.ts; never edit
 * those by hand). The runtime is openapi-fetch; this file adds what the registry needs on
 * top of it, all read from the document:
 *
 * - Accept: the operation's media type (versioned, e.g.
 *   `application/vnd.registry.processes.get.v1+json`). Where one path serves several forms
 *   (GET /rest/api/participants and /processes: paged or array), the paged form, as the
 *   registry chooses for a generic Accept; pass `headers: { Accept: … }` for the other
 *   (`mediaTypesOf("GET", "/rest/api/participants").accept` lists them).
 * - Content-Type of a body: the operation's own media type instead of application/json.
 * - Authorization: HTTP Basic, when credentials are given.
 *
 * ```ts
 * const registry = createRegistryClient("http://localhost:3000", { username: "sp1", password: "sp1-demo-password" });
 * const { data, error } = await registry.GET("/rest/api/participants", { params: { query: { sort: ["name"] } } });
 * ```
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import document from "./openapi.json";
import type { components, operations, paths } from "./schema";

export type { components, operations, paths };
export type RegistryClient = Client<paths>;
/** The resources the registry answers with (components of the OpenAPI document). */
export type Schemas = components["schemas"];
/** The error body every failure answers with (400 validation errors carry `errors[]`). */
export type RegistryError = Schemas["Error"];

export interface Credentials {
	username: string;
	password: string;
}

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface OperationMediaTypes {
	/** Media types the operation answers with, as the document lists them. */
	accept: string[];
	/** The one this client asks for when the caller names none. */
	defaultAccept: string;
	/** Media type of the request body, for operations that take one. */
	contentType?: string;
}

interface DocumentOperation {
	requestBody?: { content: Record<string, unknown> };
	responses: Record<string, { content?: Record<string, { schema?: unknown }> } | { $ref: string }>;
}

const PAGE_REF = "#/components/schemas/Page";

/** Media types per "METHOD /path/{template}", read from the OpenAPI document. */
export const MEDIA_TYPES: Readonly<Record<string, OperationMediaTypes>> = Object.freeze(
	Object.fromEntries(
		Object.entries(document.paths as unknown as Record<string, Record<string, DocumentOperation>>).flatMap(
			([path, methods]) =>
				Object.entries(methods).flatMap(([method, operation]) => {
					const success = Object.entries(operation.responses)
						.filter(([status]) => /^2\d\d$/.test(status))
						.flatMap(([, response]) => Object.entries(("content" in response && response.content) || {}));
					const accept = [...new Set(success.map(([mediaType]) => mediaType))];
					const requestTypes = Object.keys(operation.requestBody?.content ?? {});
					if (accept.length === 0 && requestTypes.length === 0) return [];
					// Several forms on one path: the paged one is the registry's default (its schema is the Page envelope).
					const paged = success.find(([, content]) =>
						JSON.stringify(content.schema ?? {}).includes(`"${PAGE_REF}"`),
					);
					const entry: OperationMediaTypes = {
						accept,
						defaultAccept: paged ? paged[0] : accept[0],
						contentType:
							requestTypes.find((mediaType) => mediaType !== "application/json") ?? requestTypes[0],
					};
					return [[`${method.toUpperCase()} ${path}`, entry]];
				}),
		),
	),
);

/** The media types of one operation of the document. */
export function mediaTypesOf(method: HttpMethod, path: keyof paths): OperationMediaTypes {
	const entry = MEDIA_TYPES[`${method} ${path}`];
	if (!entry) throw new Error(`${method} ${path} has no media types in the OpenAPI document`);
	return entry;
}

/** `Basic base64(username:password)`, UTF-8, in Node and in browsers. */
export function basicAuthorization({ username, password }: Credentials): string {
	const bytes = new TextEncoder().encode(`${username}:${password}`);
	let binary = "";
	for (const byte of bytes) binary += String.fromCharCode(byte);
	return `Basic ${btoa(binary)}`;
}

/** Sets Accept and Content-Type from the document unless the caller chose them. */
const negotiation: Middleware = {
	onRequest({ request, schemaPath }) {
		const entry = MEDIA_TYPES[`${request.method.toUpperCase()} ${schemaPath}`];
		if (!entry) return undefined;
		const accept = request.headers.get("Accept");
		if (entry.accept.length > 0 && (!accept || accept === "*/*"))
			request.headers.set("Accept", entry.defaultAccept);
		const contentType = request.headers.get("Content-Type");
		if (entry.contentType && contentType && contentType.split(";")[0].trim() === "application/json")
			request.headers.set("Content-Type", entry.contentType);
		return request;
	},
};

/**
 * A client of the registry at `baseUrl` (its root, e.g. `http://localhost:3000`; the
 * document's paths start with /rest/api). Without credentials it calls anonymously.
 */
export function createRegistryClient(baseUrl: string, credentials?: Credentials): RegistryClient {
	const client = createClient<paths>({
		baseUrl,
		headers: credentials ? { Authorization: basicAuthorization(credentials) } : undefined,
	});
	client.use(negotiation);
	return client;
}
