/** How the gateway writes an answer (docs/decisions.md "The gateway"); not moleculer-web's, which tags lists too. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline, Readable } from "node:stream";
import { env } from "../../src/config/settings";
import { entityTagOf, isNotModified } from "../../src/contract/entity-tags";
import { classify, errorBody } from "../../src/contract/error-body";
import { answersLocation, fullPathOf, type Operation } from "../../src/contract/operations";
import { COMMON_HEADER_LIST, ERROR_CONTENT_TYPE } from "../../src/contract/response-headers";
import { pathOf, type RequestState } from "./request-state";

/** The path of what a 201 created or a 202 accepted (a stream of another answer has none). */
function locationOf(operation: Operation, answer: unknown): string | undefined {
	const identifier = (answer as { identifier?: unknown } | null)?.identifier;
	return typeof identifier === "string" ? `${fullPathOf(operation)}/${identifier}` : undefined;
}

/** A whole answer: the common headers, `head` (name, value, …), Content-Length with a body (none to a HEAD request). */
function end(res: ServerResponse, status: number, head: string[], body: string | null = null): void {
	const length = body === null ? [] : ["content-length", String(Buffer.byteLength(body))];
	res.writeHead(status, [...COMMON_HEADER_LIST, ...head, ...length]);
	res.end(body ?? undefined);
}

/** A successful answer of the request's operation; `isText`: a string answer is the body's JSON text already. */
export function writeAnswer(
	req: IncomingMessage,
	res: ServerResponse,
	state: RequestState,
	answer: unknown,
	isText = false,
): void {
	const operation = state.operation as Operation;
	const location = operation.status === 200 ? undefined : locationOf(operation, answer);
	const more = location ? ["location", location] : [];
	if (operation.status === 204 || answer === null || answer === undefined) return end(res, operation.status, more);
	more.push("content-type", state.contentType);
	if (answer instanceof Readable) {
		res.writeHead(operation.status, [...COMMON_HEADER_LIST, ...more]);
		if (req.method === "HEAD") {
			answer.destroy(); // nobody reads it: a stream that would run on (the change stream) ends now
			return void res.end();
		}
		pipeline(answer, res, () => undefined); // a client gone or a failed stream ends the answer
		return;
	}
	const body =
		operation.response?.xml || (isText && typeof answer === "string") ? String(answer) : JSON.stringify(answer);
	if (operation.entityTag) {
		const tag = entityTagOf(body);
		if (notModified(req, tag)) return end(res, 304, ["etag", tag]);
		more.push("etag", tag);
	}
	end(res, operation.status, more, body);
}

/** A GET or HEAD whose If-None-Match names the answer's tag. */
function notModified(req: IncomingMessage, tag: string): boolean {
	const ifNoneMatch = req.headers["if-none-match"];
	return (
		ifNoneMatch !== undefined && (req.method === "GET" || req.method === "HEAD") && isNotModified(ifNoneMatch, tag)
	);
}

/** A whole answer, as an idempotent add records it to write now and replay later; `head` follows the common headers. */
export interface RecordedAnswer {
	status: number;
	head: string[];
	body: string | null;
}

/** A successful JSON answer (an add's 201), recorded; `contentType` is the one negotiated (RequestState). */
export function recordSuccess(operation: Operation, contentType: string, answer: unknown): RecordedAnswer {
	if (operation.status === 204 || answer === null || answer === undefined)
		return { status: operation.status, head: [], body: null };
	const body = JSON.stringify(answer);
	const location = answersLocation(operation) ? locationOf(operation, answer) : undefined;
	const head = [...(location ? ["location", location] : []), "content-type", contentType];
	if (operation.entityTag) head.push("etag", entityTagOf(body));
	return { status: operation.status, head, body };
}

/** An error in the spec's body, recorded; the request's state, if any, gives its object name and `rejectedValue`. */
export function recordError(req: IncomingMessage, error: unknown, state?: RequestState): RecordedAnswer {
	const classified = classify(error, state?.validated);
	const head: string[] = [];
	const data = (error as { data?: { retryAfter?: number; allow?: string[]; challenge?: string } } | null)?.data;
	// A refused token names its own challenge (RFC 6750); else Basic, and Bearer too where an issuer is set (decisions §15).
	if (data?.challenge) head.push("www-authenticate", data.challenge);
	else if (classified.status === 401)
		head.push(
			"www-authenticate",
			env("OAUTH_ISSUER") ? 'Basic realm="registry", Bearer realm="registry"' : 'Basic realm="registry"',
		);
	if (classified.status === 429) head.push("retry-after", String(data?.retryAfter ?? 60));
	if (classified.status === 405 && data?.allow) head.push("allow", data.allow.join(", "));
	const body = errorBody(classified, pathOf(req), state?.operation?.body?.objectName);
	return {
		status: classified.status,
		head: [...head, "content-type", ERROR_CONTENT_TYPE],
		body: JSON.stringify(body),
	};
}

/** Writes a recorded answer; `more` are headers of this request only. */
export function writeRecorded(res: ServerResponse, answer: RecordedAnswer, more: string[] = []): void {
	end(res, answer.status, [...answer.head, ...more], answer.body);
}

/** An error in the spec's body; returns its status. */
export function writeError(req: IncomingMessage, res: ServerResponse, error: unknown, state?: RequestState): number {
	const answer = recordError(req, error, state);
	if (!res.headersSent) writeRecorded(res, answer);
	return answer.status;
}
