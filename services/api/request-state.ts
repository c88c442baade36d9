/**
 * What the gateway's steps found out about one request, carried from hook to hook
 * (docs/internals.md "Follow a request"): the `authentication` hook creates it when
 * moleculer-web has matched the route, `authorization` chooses the operation, the alias
 * handler answers, `onError` reads it for the error body. It lives in the request's `api.rest`
 * context (`ctx.locals`), where moleculer-web keeps what belongs to the request.
 */
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

/** The request's state, once the `authentication` hook has made it (not for a request no route took). */
export function stateOf(req: GatewayRequest): RequestState | undefined {
	return req.$ctx?.locals.request;
}

/**
 * The client's X-Correlation-ID, else its X-Request-ID (moleculer-web's order), is the request's ID
 * when it is at most 200 characters of [A-Za-z0-9._:-] (decisions §3); else the `api.rest` context
 * makes one. moleculer-web echoes the request's ID as X-Request-ID on every answer it takes.
 */
export const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;

/** The alias of one method and path, generated from the operations table (services/api/routes.ts). */
export interface OperationAlias {
	group: OperationGroup;
	handler(req: GatewayRequest, res: ServerResponse, next: (error?: unknown) => void): void;
}
