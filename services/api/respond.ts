/**
 * How the gateway writes an answer (spec rule 4, decisions §2 and §8): the status of the
 * operation, its media type with the charset, `Location` for a 201, nothing for a 204, a
 * stream piped as it comes; errors in the spec's error body. Every answer's head, the common
 * no-cache and security headers and the request id first, is written in one call.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline, type Readable } from "node:stream";
import { classify, errorBody } from "../../src/contract/error-body";
import { API_BASE, type Operation } from "../../src/contract/operations";
import { COMMON_HEADER_LIST, ERROR_CONTENT_TYPE, withCharset } from "../../src/contract/response-headers";
import { joinParts } from "./answer-body";

/** The request's id: the caller's X-Correlation-ID or X-Request-ID, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
	const given = req.headers["x-correlation-id"] ?? req.headers["x-request-id"];
	return typeof given === "string" && given !== "" ? given : randomUUID();
}

function isReadable(value: unknown): value is Readable {
	return value !== null && typeof value === "object" && typeof (value as Readable).pipe === "function" && typeof (value as Readable).on === "function";
}

function locationOf(operation: Operation, answer: unknown): string | undefined {
	const identifier = (answer as { identifier?: unknown } | null)?.identifier;
	return typeof identifier === "string" ? `${API_BASE}${operation.path}/${identifier}` : undefined;
}

/** The head of an answer: the common headers, the request id, then `more` (name, value, …), in one call. */
function writeHead(res: ServerResponse, status: number, requestId: string, more: string[]): void {
	res.writeHead(status, [...COMMON_HEADER_LIST, "X-Request-ID", requestId, ...more]);
}

/** A successful answer: `parts` is the answer's JSON (services/api/answer-body.ts), or null when it has no body. */
export function writeAnswer(req: IncomingMessage, res: ServerResponse, requestId: string, operation: Operation, mediaType: string, answer: unknown, parts: readonly string[] | null): void {
	const location = operation.status === 201 ? locationOf(operation, answer) : undefined;
	const more = location ? ["Location", location] : [];
	if (operation.status === 204 || answer === null || answer === undefined) {
		writeHead(res, operation.status, requestId, more);
		res.end();
		return;
	}
	more.push("Content-Type", withCharset(mediaType));
	if (isReadable(answer)) {
		writeHead(res, operation.status, requestId, more);
		if (req.method === "HEAD") return void res.end();
		pipeline(answer, res, () => undefined); // a client gone or a failed stream ends the answer
		return;
	}
	const body = joinParts(parts ?? [JSON.stringify(answer)]);
	writeHead(res, operation.status, requestId, [...more, "Content-Length", String(Buffer.byteLength(body))]);
	res.end(body);
}

/** An error in the spec's body. `validated` is what the action was called with (for `rejectedValue`). */
export function writeError(req: IncomingMessage, res: ServerResponse, requestId: string, error: unknown, objectName?: string, validated?: unknown): number {
	const classified = classify(error, validated);
	if (res.headersSent) return classified.status;
	const path = (req.url ?? "").split("?")[0];
	const more: string[] = [];
	if (classified.status === 401) more.push("WWW-Authenticate", 'Basic realm="registry"');
	const data = (error as { data?: { retryAfter?: number; allow?: string[] } } | null)?.data;
	if (classified.status === 429) more.push("Retry-After", String(data?.retryAfter ?? 60));
	if (classified.status === 405 && data?.allow) more.push("Allow", data.allow.join(", "));
	if (req.method === "HEAD") {
		writeHead(res, classified.status, requestId, more);
		res.end();
		return classified.status;
	}
	const payload = JSON.stringify(errorBody(classified, path, objectName));
	writeHead(res, classified.status, requestId, [...more, "Content-Type", ERROR_CONTENT_TYPE, "Content-Length", String(Buffer.byteLength(payload))]);
	res.end(payload);
	return classified.status;
}
