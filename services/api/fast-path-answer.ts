/**
 * What the gateway's short paths share (services/api/lookup-fast-path.ts, services/api/participant-read-fast-path.ts):
 * reading the one path value of a request for an operation's URL, and writing an answer held
 * in memory exactly as the full path writes it. A short path answers only when nothing could
 * differ from the full path; everything here returns null instead of answering an error,
 * which stays the full path's to give.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { responseMediaType, selectByAccept } from "../../src/contract/negotiation";
import { API_BASE, type Operation } from "../../src/contract/operations";
import { withCharset } from "../../src/contract/response-headers";

/** An operation's URL around its one path parameter, as the short path matches it. */
export interface PathAround {
	prefix: string;
	suffix: string;
}

export function pathAround(operation: Operation, parameter: string): PathAround {
	const [prefix, suffix] = `${API_BASE}${operation.path}`.split(`:${parameter}`);
	return { prefix, suffix };
}

/** The decoded path value of a plain GET of that URL (no query string, no extra segment), else null. */
export function pathValueOf(req: IncomingMessage, around: PathAround): string | null {
	const url = req.url;
	if (req.method !== "GET" || !url || !url.startsWith(around.prefix) || !url.endsWith(around.suffix)) return null;
	if (url.length <= around.prefix.length + around.suffix.length) return null;
	const raw = url.slice(around.prefix.length, url.length - around.suffix.length);
	if (raw.includes("/") || raw.includes("?")) return null;
	try {
		return decodeURIComponent(raw);
	} catch {
		return null;
	}
}

/** The media type the full path would answer with, or null where it would answer 406. */
export function answerMediaType(operation: Operation, accept: string | undefined): string | null {
	try {
		selectByAccept([operation], accept);
		return responseMediaType(operation, accept);
	} catch {
		return null;
	}
}

/** Writes held JSON bytes with the status and headers of the full path's answer. */
export function writeHeldAnswer(req: IncomingMessage, res: ServerResponse, operation: Operation, mediaType: string, bytes: Buffer): void {
	res.statusCode = operation.status;
	// As moleculer-web does on the full path: the caller's request id, else a new one.
	const requestId = req.headers["x-correlation-id"] ?? req.headers["x-request-id"];
	res.setHeader("X-Request-ID", typeof requestId === "string" && requestId !== "" ? requestId : randomUUID());
	res.setHeader("Content-Type", withCharset(mediaType));
	res.end(bytes); // node adds Content-Length, as it does for the full path's answer
}
