/**
 * What the gateway's steps found out about one request, carried from hook to hook
 * (docs/internals.md "The request path"): the `authentication` hook creates it when
 * moleculer-web has matched the route, `authorization` chooses the operation, the alias
 * handler answers, `onError` reads it for the error body.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RegistryContext } from "../../src/platform/context";
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
	/** Who is calling; null when anonymous (authentication). */
	caller: Caller | null;
	/** The operation chosen by path form and Accept (authorization). */
	operation: Operation | null;
	/** The media type answered with (authorization). */
	mediaType: string;
	/** What the action was called with, for `rejectedValue` in an error body (alias handler). */
	validated: unknown;
}

/** A request as moleculer-web passes it to the hooks: its `api.rest` context, the parts it parsed, and the state. */
export interface GatewayRequest extends IncomingMessage {
	$ctx: RegistryContext;
	$params: { query: Record<string, unknown>; params: Record<string, string>; body?: unknown };
	/** The URL as received (moleculer-web makes `url` relative to the route). */
	originalUrl?: string;
	state?: RequestState;
}

/** The alias of one method and path, generated from the operations table (services/api/routes.ts). */
export interface OperationAlias {
	group: OperationGroup;
	handler(req: GatewayRequest, res: ServerResponse, next: (error?: unknown) => void): void;
}
