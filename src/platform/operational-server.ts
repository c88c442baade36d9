/**
 * Health and metrics on PORT for every process (decisions §1): the gateway answers them before its API;
 * a process without one (e.g. SERVICES=lookup) starts this small server, as Kubernetes probes every pod.
 */
import http from "node:http";
import type { ServiceBroker } from "moleculer";
import { readiness } from "./health";
import { prometheusFormatter } from "./metrics";
import { setCommonHeaders } from "../contract/response-headers";

const JSON_TYPE = "application/json;charset=UTF-8";

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
	setCommonHeaders(res);
	res.statusCode = status;
	res.setHeader("content-type", type);
	res.setHeader("content-length", Buffer.byteLength(body));
	res.end(body);
}

/** Answers a GET or HEAD of health or metrics: true, or a promise for readiness; false for any other request. */
export function answerOperational(
	broker: ServiceBroker,
	prometheus: (() => string) | null,
	req: http.IncomingMessage,
	res: http.ServerResponse,
	path: string,
): boolean | Promise<void> {
	if (req.method !== "GET" && req.method !== "HEAD") return false;
	if (path === "/health/live") {
		send(res, 200, JSON_TYPE, JSON.stringify({ status: "UP" }));
		return true;
	}
	if (path === "/health/ready") {
		return readiness(broker).then(
			(result) => send(res, result.status === "UP" ? 200 : 503, JSON_TYPE, JSON.stringify(result)),
			() => send(res, 503, JSON_TYPE, JSON.stringify({ status: "DOWN" })),
		);
	}
	if (path === "/metrics" && prometheus) {
		send(res, 200, "text/plain; version=0.0.4; charset=utf-8", prometheus());
		return true;
	}
	return false;
}

export function startOperationalServer(broker: ServiceBroker, port: number): Promise<http.Server> {
	const prometheus = prometheusFormatter(broker);
	const server = http.createServer((req, res) => {
		const path = (req.url ?? "").split("?")[0];
		if (answerOperational(broker, prometheus, req, res, path) === false)
			send(res, 404, JSON_TYPE, JSON.stringify({ status: 404, error: "Not Found", path }));
	});
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(port, () => resolve(server));
	});
}
