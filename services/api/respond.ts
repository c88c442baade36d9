/**
 * How the gateway writes an answer (spec rule 4, decisions §2 and §8): the status of the
 * operation, its media type with the charset, `Location` for a 201, nothing for a 204, a
 * stream piped as it comes; errors in the spec's error body. The common no-cache and security
 * headers are set for every answer before the pipeline runs (services/api/http-server.ts).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline, type Readable } from "node:stream";
import { classify, errorBody } from "../../src/contract/error-body";
import { API_BASE, type Operation } from "../../src/contract/operations";
import { ERROR_CONTENT_TYPE, withCharset } from "../../src/contract/response-headers";
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

/** A successful answer: `parts` is the answer's JSON (services/api/answer-body.ts), or null when it has no body. */
export function writeAnswer(req: IncomingMessage, res: ServerResponse, operation: Operation, mediaType: string, answer: unknown, parts: readonly string[] | null): void {
	res.statusCode = operation.status;
	if (operation.status === 201) {
		const location = locationOf(operation, answer);
		if (location) res.setHeader("Location", location);
	}
	if (operation.status === 204 || answer === null || answer === undefined) {
		res.end();
		return;
	}
	res.setHeader("Content-Type", withCharset(mediaType));
	if (isReadable(answer)) {
		if (req.method === "HEAD") return void res.end();
		pipeline(answer, res, () => undefined); // a client gone or a failed stream ends the answer
		return;
	}
	res.end(joinParts(parts ?? [JSON.stringify(answer)]));
}

/** An error in the spec's body. `validated` is what the action was called with (for `rejectedValue`). */
export function writeError(req: IncomingMessage, res: ServerResponse, error: unknown, objectName?: string, validated?: unknown): number {
	const classified = classify(error, validated);
	if (res.headersSent) return classified.status;
	const path = (req.url ?? "").split("?")[0];
	const body = errorBody(classified, path, objectName);
	res.statusCode = classified.status;
	if (classified.status === 401) res.setHeader("WWW-Authenticate", 'Basic realm="registry"');
	const data = (error as { data?: { retryAfter?: number; allow?: string[] } } | null)?.data;
	if (classified.status === 429) res.setHeader("Retry-After", String(data?.retryAfter ?? 60));
	if (classified.status === 405 && data?.allow) res.setHeader("Allow", data.allow.join(", "));
	if (req.method === "HEAD") {
		res.end();
		return classified.status;
	}
	const payload = JSON.stringify(body);
	res.setHeader("Content-Type", ERROR_CONTENT_TYPE);
	res.setHeader("Content-Length", Buffer.byteLength(payload));
	res.end(payload);
	return classified.status;
}
