/**
 * HTTP without a client library in between, for the reliability and security suites
 * (issue 8): node's http module sends paths, query strings and headers exactly as given
 * (supertest/fetch would normalise or refuse some), and a plain socket sends bytes that no
 * HTTP client would (control characters in the request line). Also the checks every error
 * answer must pass: the spec's error shape and the common headers.
 */
import http from "node:http";
import net from "node:net";

export interface RawAnswer {
	status: number;
	headers: http.IncomingHttpHeaders;
	/** The body as received (UTF-8). */
	text: string;
}

export interface RawRequest {
	method: string;
	/** Path and query string, sent as they are. */
	path: string;
	headers?: Record<string, string | string[]>;
	body?: string | Buffer;
	timeoutMs?: number;
}

/** Whether a new TCP connection to the local port is refused (nothing listens there any more). */
export function connectionRefused(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const socket = net.connect({ host: "127.0.0.1", port });
		socket.once("connect", () => {
			socket.destroy();
			resolve(false);
		});
		socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
	});
}

/** One request on its own connection (no agent), so no state is shared between requests. */
export function rawRequest(baseUrl: string, request: RawRequest): Promise<RawAnswer> {
	const { hostname, port } = new URL(baseUrl);
	return new Promise((resolve, reject) => {
		const req = http.request(
			{
				host: hostname,
				port: Number(port),
				method: request.method,
				path: request.path,
				headers: request.headers,
				agent: false,
			},
			(res) => {
				const chunks: Buffer[] = [];
				const answer = () => ({
					status: res.statusCode ?? 0,
					headers: res.headers,
					text: Buffer.concat(chunks).toString("utf8"),
				});
				// A change stream (GET /changes as text/event-stream) never ends: its first event is the answer.
				const stream = String(res.headers["content-type"] ?? "").startsWith("text/event-stream");
				res.on("data", (chunk: Buffer) => {
					chunks.push(chunk);
					if (stream && /\n\n/.test(Buffer.concat(chunks).toString("utf8"))) {
						resolve(answer());
						req.destroy();
					}
				});
				res.on("end", () => resolve(answer()));
				res.on("error", reject);
			},
		);
		req.setTimeout(request.timeoutMs ?? 30000, () =>
			req.destroy(
				new Error(
					`no answer within ${request.timeoutMs ?? 30000} ms: ${request.method} ${request.path.slice(0, 200)}`,
				),
			),
		);
		req.on("error", reject);
		// node's client sends no length for a GET, DELETE or OPTIONS body: say it, so the request stays well-formed.
		if (
			request.body !== undefined &&
			!Object.keys(request.headers ?? {}).some((name) => /^(content-length|transfer-encoding)$/i.test(name))
		) {
			req.setHeader("Content-Length", Buffer.byteLength(request.body));
		}
		req.end(request.body);
	});
}

/** Bytes on a socket; the answer parsed just enough to check status, headers and body. */
export function socketRequest(baseUrl: string, bytes: string | Buffer, timeoutMs = 30000): Promise<RawAnswer> {
	const { hostname, port } = new URL(baseUrl);
	return new Promise((resolve, reject) => {
		// Not end(): node's server drops a request whose client half-closed before the answer.
		const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
		const chunks: Buffer[] = [];
		socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
		socket.on("data", (chunk: Buffer) => chunks.push(chunk));
		socket.on("error", reject);
		socket.on("close", () => {
			const text = Buffer.concat(chunks).toString("utf8");
			const split = text.indexOf("\r\n\r\n");
			const head = split < 0 ? text : text.slice(0, split);
			const [statusLine, ...lines] = head.split("\r\n");
			const headers: http.IncomingHttpHeaders = {};
			for (const line of lines) {
				const colon = line.indexOf(":");
				if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
			}
			resolve({
				status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0),
				headers,
				text: split < 0 ? "" : text.slice(split + 4),
			});
		});
	});
}

export const COMMON_HEADERS = {
	"cache-control": "no-cache, no-store, max-age=0, must-revalidate",
	pragma: "no-cache",
	expires: "0",
	"x-content-type-options": "nosniff",
	"x-xss-protection": "1; mode=block",
	"x-frame-options": "DENY",
};

/** A stack frame as node prints it: `at fn (/path/file.js:12:3)` or `at /path/file.ts:12`. */
export const STACK_FRAME = /\bat (?:[^\s()]+ )?\(?(?:[A-Za-z]:)?[^\s()]*\.(?:[cm]?js|ts):\d+(?::\d+)?\)?/;

/**
 * What is wrong with an error answer, or null: the spec's error shape (timestamp, status,
 * error, exception, message, path), application/json;charset=UTF-8, the common headers, no
 * stack trace. A list of problems (not expect()) so that property tests can report them.
 */
export function errorAnswerProblems(answer: RawAnswer): string[] {
	const problems: string[] = [];
	for (const [name, value] of Object.entries(COMMON_HEADERS)) {
		if (answer.headers[name] !== value) problems.push(`header ${name} is ${JSON.stringify(answer.headers[name])}`);
	}
	if (!/max-age=31536000.*includeSubDomains/.test(String(answer.headers["strict-transport-security"] ?? "")))
		problems.push("no Strict-Transport-Security");
	if (STACK_FRAME.test(answer.text)) problems.push("a stack trace in the body");
	if (answer.status === 405 && !answer.headers.allow) problems.push("405 without Allow");
	// Basic, or a refused Bearer token's own challenge (decisions §15).
	const challenge = String(answer.headers["www-authenticate"] ?? "");
	if (answer.status === 401 && challenge !== 'Basic realm="registry"' && !challenge.startsWith("Bearer error="))
		problems.push("401 without WWW-Authenticate");
	if (answer.status === 429 && !(Number(answer.headers["retry-after"]) > 0)) problems.push("429 without Retry-After");
	if (String(answer.headers["content-type"]).toLowerCase() !== "application/json;charset=utf-8")
		problems.push(`content-type ${answer.headers["content-type"]}`);
	let body: Record<string, unknown>;
	try {
		body = JSON.parse(answer.text);
	} catch {
		return [...problems, `body is not JSON: ${answer.text.slice(0, 200)}`];
	}
	if (body === null || typeof body !== "object" || Array.isArray(body)) return [...problems, "body is not an object"];
	if (typeof body.timestamp !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/.test(body.timestamp))
		problems.push(`timestamp ${JSON.stringify(body.timestamp)}`);
	if (body.status !== answer.status)
		problems.push(`status field ${JSON.stringify(body.status)} for an answer ${answer.status}`);
	for (const field of ["error", "exception", "message", "path"])
		if (typeof body[field] !== "string") problems.push(`${field} is not a string`);
	if (body.errors !== undefined && !Array.isArray(body.errors)) problems.push("errors is not an array");
	return problems;
}
