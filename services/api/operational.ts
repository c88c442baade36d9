/** What a gateway answers before moleculer-web, outside the operations table (docs/internals.md "Follow a request"). */
import type { ServiceBroker } from "moleculer";
import { openApiDocument } from "../../src/contract/openapi";
import { API_BASE } from "../../src/contract/operations";
import { JSON_CONTENT_TYPE, setCommonHeaders } from "../../src/contract/response-headers";
import { prometheusFormatter } from "../../src/platform/metrics";
import { answerOperational, send } from "../../src/platform/operational-server";
import { serveApiDocs } from "./api-docs";
import { consoleAssets } from "./console-assets";
import type { RequestHandlers } from "./http-server";
import type { GatewayRoutes } from "./routes";

/**
 * `documents`: the docs, the OpenAPI document and the console too (the full gateway, not a lookup
 * node); `operations`: health and metrics too (not when OPERATIONS_PORT gives them a port of their own).
 */
export function operationalAnswers(
	broker: ServiceBroker,
	registryVersion: string,
	routes: GatewayRoutes,
	{ documents, operations }: { documents: boolean; operations: boolean },
): RequestHandlers["operational"] {
	const prometheus = prometheusFormatter(broker);
	let openApiText: string | undefined;
	const serveConsole = documents ? consoleAssets() : null;
	const apiPrefix = `${API_BASE}/`;
	const openApiPath = `${API_BASE}/openapi.json`;
	return (req, res, path) => {
		// The API's own requests first: one test instead of every operational path's.
		if (req.method !== "OPTIONS" && path.startsWith(apiPrefix) && path !== openApiPath) return false;
		if (req.method === "OPTIONS") {
			const allowed = routes.methodsOf(path);
			if (allowed.length === 0) return false;
			setCommonHeaders(res);
			res.setHeader("allow", [...allowed, "OPTIONS"].join(", "));
			res.statusCode = 204;
			res.end();
			return true;
		}
		const answered = operations && answerOperational(broker, prometheus, req, res, path);
		if (answered !== false) return answered;
		if (!serveConsole || (req.method !== "GET" && req.method !== "HEAD")) return false;
		if (path === "/docs" || path.startsWith("/docs/")) setCommonHeaders(res);
		if (serveApiDocs(res, path)) return true;
		if (serveConsole(req, res, path)) return true;
		if (path === openApiPath) {
			setCommonHeaders(res);
			openApiText ??= JSON.stringify(openApiDocument(registryVersion));
			return send(res, 200, JSON_CONTENT_TYPE, openApiText);
		}
		return false;
	};
}
