/**
 * Health and metrics for a process that runs no gateway (e.g. SERVICES=lookup): Kubernetes
 * probes every pod on PORT, so every process answers /health/live, /health/ready and
 * /metrics there. The gateway serves the same paths itself.
 */
import http from "node:http";
import type { ServiceBroker } from "moleculer";
import { readiness } from "./health";
import { prometheusFormatter } from "./metrics";
import { COMMON_HEADERS } from "../contract/response-headers";

export function startOperationalServer(broker: ServiceBroker, port: number): Promise<http.Server> {
	const prometheus = prometheusFormatter(broker);
	const server = http.createServer((req, res) => {
		for (const [name, value] of Object.entries(COMMON_HEADERS)) res.setHeader(name, value);
		const path = (req.url ?? "").split("?")[0];
		const send = (status: number, type: string, body: string) => {
			res.statusCode = status;
			res.setHeader("Content-Type", type);
			res.end(body);
		};
		if (path === "/health/live") return send(200, "application/json;charset=UTF-8", JSON.stringify({ status: "UP" }));
		if (path === "/health/ready") {
			readiness(broker).then(
				(result) => send(result.status === "UP" ? 200 : 503, "application/json;charset=UTF-8", JSON.stringify(result)),
				() => send(503, "application/json;charset=UTF-8", JSON.stringify({ status: "DOWN" })),
			);
			return;
		}
		if (path === "/metrics" && prometheus) return send(200, "text/plain; version=0.0.4; charset=utf-8", prometheus());
		send(404, "application/json;charset=UTF-8", JSON.stringify({ status: 404, error: "Not Found", path }));
	});
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(port, () => resolve(server));
	});
}
