/** What node's HTTP parser refuses, answered in the spec's error shape with the common headers, then closed. */
import type { Duplex } from "node:stream";
import { errorBody } from "../../src/contract/error-body";
import { COMMON_HEADERS, ERROR_CONTENT_TYPE } from "../../src/contract/response-headers";

/** Node's own status per parser error (node:_http_server), with our message; any other is 400. */
const REFUSALS = new Map([
	["HPE_HEADER_OVERFLOW", { status: 431, message: "Request header fields are too large" }],
	["HPE_CHUNK_EXTENSIONS_OVERFLOW", { status: 413, message: "Request is too large" }],
	["ERR_HTTP_REQUEST_TIMEOUT", { status: 408, message: "Request timed out" }],
]);

export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
	// As node's default handler does: never write into an answer already on its way on this
	// connection (bytes after a request without a length are parsed as a next request).
	const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
	if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
		socket.destroy();
		return;
	}
	const { status, message } = REFUSALS.get(error.code ?? "") ?? { status: 400, message: "Malformed HTTP request" };
	const body = errorBody({ status, exception: "HttpMessageNotReadableException", message }, "", undefined);
	const payload = JSON.stringify(body);
	const headers = {
		...COMMON_HEADERS,
		"content-type": ERROR_CONTENT_TYPE,
		"content-length": String(Buffer.byteLength(payload)),
		connection: "close",
	};
	const head = [`HTTP/1.1 ${status} ${body.error}`]
		.concat(Object.entries(headers).map(([name, value]) => `${name}: ${value}`))
		.join("\r\n");
	socket.end(`${head}\r\n\r\n${payload}`);
}
