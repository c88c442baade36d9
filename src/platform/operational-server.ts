/** Health and metrics where no gateway answers them (docs/operations.md "Health and metrics"). */
import http from "node:http";
import type { ServiceBroker } from "moleculer";
import { readiness } from "./health";
import { prometheusFormatter } from "./metrics";
import { JSON_CONTENT_TYPE, setCommonHeaders } from "../contract/response-headers";

/** Answers with a whole body and its length (node sends no body to a HEAD request); the caller sets the common headers. */
export function send(res: http.ServerResponse, status: number, type: string, body: string | Buffer): true {
	res.statusCode = status;
	res.setHeader("content-type", type);
	res.setHeader("content-length", Buffer.byteLength(body));
	res.end(body);
	return true;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): true {
	setCommonHeaders(res);
	return send(res, status, JSON_CONTENT_TYPE, JSON.stringify(value));
}

/** Answers a GET or HEAD of health or metrics: true, or a promise for readiness; false for any other request. */
export function answerOperational(
	broker: ServiceBroker,
	prometheus: (() => Promise<string>) | null,
	req: http.IncomingMessage,
	res: http.ServerResponse,
	path: string,
): boolean | Promise<void> {
	if (req.method !== "GET" && req.method !== "HEAD") return false;
	if (path === "/health/live") return sendJson(res, 200, { status: "UP" });
	if (path === "/health/ready")
		return readiness(broker).then(
			(result) => void sendJson(res, result.status === "UP" ? 200 : 503, result),
			() => void sendJson(res, 503, { status: "DOWN" }),
		);
	if (path !== "/metrics" || !prometheus) return false;
	return prometheus().then(
		(text) => {
			setCommonHeaders(res);
			send(res, 200, "text/plain; version=0.0.4; charset=utf-8", text);
		},
		() => void sendJson(res, 500, { status: 500, error: "Internal Server Error", path }),
	);
}

export function startOperationalServer(broker: ServiceBroker, port: number): Promise<http.Server> {
	const prometheus = prometheusFormatter(broker);
	const server = http.createServer((req, res) => {
		const path = (req.url ?? "").split("?")[0];
		if (answerOperational(broker, prometheus, req, res, path) === false)
			sendJson(res, 404, { status: 404, error: "Not Found", path });
	});
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(port, () => resolve(server));
	});
}
