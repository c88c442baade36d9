/**
 * Requests that node's HTTP parser refuses before the gateway sees them (a control character
 * in the request line or a header, a malformed header, headers over the size limit) are
 * answered in the spec's error shape with the common headers too (decisions §2, §8), instead
 * of node's bare `400 Bad Request` without a body. There is no request object: the answer is
 * written to the socket, which is then closed. Found by the fuzz test (issue 8).
 */
import type { Duplex } from "node:stream";
import { errorBody } from "../../src/contract/error-body";
import { COMMON_HEADERS, ERROR_CONTENT_TYPE } from "../../src/contract/response-headers";

/** Node's own choice of status per parser error (node:_http_server), kept. */
function statusOf(code: string | undefined): number {
	if (code === "HPE_HEADER_OVERFLOW") return 431;
	if (code === "HPE_CHUNK_EXTENSIONS_OVERFLOW") return 413;
	if (code === "ERR_HTTP_REQUEST_TIMEOUT") return 408;
	return 400;
}

export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
	// As node's default handler does: never write into an answer already on its way on this
	// connection (bytes after a request without a length are parsed as a next request).
	const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
	if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
		socket.destroy();
		return;
	}
	const status = statusOf(error.code);
	const message =
		status === 431
			? "Request header fields are too large"
			: status === 408
				? "Request timed out"
				: status === 413
					? "Request is too large"
					: "Malformed HTTP request";
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
