/** The action's params from the request (docs/internals.md "Parameters every action receives from the gateway"). */
import type { IncomingMessage, ServerResponse } from "node:http";
import bodyParser from "body-parser";
import { bodyError } from "../../src/contract/error-body";
import { RegistryError, TypeMismatch } from "../../src/contract/errors";
import { isEntityTagList } from "../../src/contract/entity-tags";
import { pathParamsToActionParams } from "../../src/contract/negotiation";
import type { Operation } from "../../src/contract/operations";
import { parsePageRequest } from "../../src/contract/paging";
import { bodyShapeFault } from "./json-depth";
import type { RequestState } from "./request-state";

/** moleculer-web's `qsOptions`: duplicates become arrays; brackets build no objects (`a[b]=1` is named `a[b]`). */
export const QUERY_OPTIONS = { depth: 0, parameterLimit: 100, arrayLimit: 50 };

// Not moleculer-web's `bodyParsers`: they would read the body before authorization.
const jsonBody = bodyParser.json({ limit: "1mb", strict: false, type: () => true });

/** A body that stops arriving for this long is refused (a chunk can announce more bytes than the client ever sends). */
const BODY_IDLE_MS = 5000;

function parseBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
	return new Promise((resolve, reject) => {
		let idle = setTimeout(stalled, BODY_IDLE_MS);
		const arrived = () => {
			clearTimeout(idle);
			idle = setTimeout(stalled, BODY_IDLE_MS);
		};
		function stalled() {
			req.off("data", arrived);
			// The rest of the body will not be read: the connection closes after the answer.
			res.shouldKeepAlive = false;
			reject(
				new RegistryError(
					408,
					"HttpMessageNotReadableException",
					`The request body stopped arriving (nothing for ${BODY_IDLE_MS / 1000} s)`,
				),
			);
		}
		req.on("data", arrived);
		jsonBody(req, res, (error?: unknown) => {
			clearTimeout(idle);
			req.off("data", arrived);
			const body = (req as IncomingMessage & { body?: unknown }).body;
			if (error) return reject(bodyError(error));
			const fault = bodyShapeFault(body);
			if (fault) return reject(fault);
			resolve(body);
		});
	});
}

function single(value: unknown, name: string): string | undefined {
	if (value === undefined) return undefined;
	const last = Array.isArray(value) ? value[value.length - 1] : value;
	if (typeof last !== "string") throw new TypeMismatch(`Query parameter '${name}' must be a plain string`);
	return last;
}

/** Query parameters an operation reads beyond paging (participant finds: query, processes). */
function operationQuery(operation: Operation, query: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [name, spec] of Object.entries(operation.queryParams ?? {})) {
		const value = single(query[name], name);
		if (spec.type === "integer") {
			if (value === undefined || value === "") continue;
			if (!/^\d{1,9}$/.test(value))
				throw new TypeMismatch(`Query parameter '${name}' must be a whole number; value: '${value}'`);
			out[name] = Number(value);
		} else if (spec.type === "boolean") {
			if (value === undefined || value === "") out[name] = false;
			else if (value === "true" || value === "false") out[name] = value === "true";
			else throw new TypeMismatch(`Query parameter '${name}' must be true or false; value: '${value}'`);
		} else if (value !== undefined && value !== "") {
			out[name] = value;
		}
	}
	return out;
}

/** The action's params of the request's operation; `query` is the query string as moleculer-web parsed it. */
export async function bindParams(
	req: IncomingMessage,
	res: ServerResponse,
	state: RequestState,
	query: Record<string, unknown>,
): Promise<Record<string, unknown>> {
	const operation = state.operation as Operation;
	const params: Record<string, unknown> = pathParamsToActionParams(operation, state.path);
	if (operation.sortable || operation.queryParams) {
		if (operation.sortable) params.pageRequest = parsePageRequest(query, operation.sortable);
		Object.assign(params, operationQuery(operation, query));
	}
	for (const [header, { param }] of Object.entries(operation.headerParams ?? {})) {
		const value = req.headers[header.toLowerCase()];
		if (typeof value === "string" && value !== "") params[param] = value;
	}
	if (operation.ifMatch) {
		const ifMatch = req.headers["if-match"];
		if (ifMatch !== undefined) {
			if (!isEntityTagList(ifMatch))
				throw new TypeMismatch(
					`Header 'If-Match' must be * or a list of quoted entity tags; value: '${ifMatch}'`,
				);
			params.ifMatch = ifMatch;
		}
	}
	if (operation.body) params.body = await parseBody(req, res);
	return params;
}
