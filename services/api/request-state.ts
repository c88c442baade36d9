/** What the gateway's steps learn about a request, carried in its `api.rest` context's `locals`. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "moleculer";
import type { RegistryMeta } from "../../src/platform/context";
import type { Caller } from "../../src/contract/model";
import type { OperationGroup, PathValue } from "../../src/contract/negotiation";
import type { Operation } from "../../src/contract/operations";

export interface RequestState {
	/** The operations sharing the matched method and path (the alias's group). */
	group: OperationGroup;
	/** The path values, parsed once when the route matched. */
	path: Record<string, PathValue>;
	/** The client's address (behind trusted proxies: the one they name). */
	address: string;
	/** When the gateway took the request (ms): one clock reading for the credential, throttle and rate limit checks. */
	now: number;
	/** Who is calling; null when anonymous (authentication). */
	caller: Caller | null;
	/** The operation chosen by path form and Accept (authorization). */
	operation: Operation | null;
	/** The media type answered with, and its Content-Type (authorization). */
	mediaType: string;
	contentType: string;
	/** What the action was called with, for `rejectedValue` in an error body (alias handler). */
	validated: unknown;
}

/** The `api.rest` context of a request, with the request's state in its locals. */
export type GatewayContext = Context<unknown, RegistryMeta, { request?: RequestState }>;

/** A request as moleculer-web passes it to the hooks: its `api.rest` context and the parts it parsed. */
export interface GatewayRequest extends IncomingMessage {
	$ctx: GatewayContext;
	$params: { query: Record<string, unknown>; params: Record<string, string>; body?: unknown };
	/** The URL as received (moleculer-web makes `url` relative to the route). */
	originalUrl?: string;
}

/** The request's path as received, without the query. */
export function pathOf(req: IncomingMessage & { originalUrl?: string }): string {
	return (req.originalUrl ?? req.url ?? "").split("?")[0];
}

/** The request's state, once the `authentication` hook has made it (not for a request no route took). */
export function stateOf(req: GatewayRequest): RequestState | undefined {
	return req.$ctx?.locals.request;
}

/** A client's X-Correlation-ID or X-Request-ID is the request's ID only in this form (decisions §3). */
export const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;

/** The alias of one method and path, generated from the operations table (services/api/routes.ts). */
export interface OperationAlias {
	group: OperationGroup;
	handler(req: GatewayRequest, res: ServerResponse, next: (error?: unknown) => void): void;
}
