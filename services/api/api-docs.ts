/** Swagger UI at /docs from the swagger-ui-dist package, reading our OpenAPI document: no CDN, no public validator. */
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { API_BASE } from "../../src/contract/operations";
import { send } from "../../src/platform/operational-server";

const ASSET_DIR = path.dirname(require.resolve("swagger-ui-dist/package.json"));

/** Only the files the page needs are served: nothing else from node_modules is reachable. */
const ASSETS: Record<string, string> = {
	"swagger-ui.css": "text/css; charset=utf-8",
	"index.css": "text/css; charset=utf-8",
	"swagger-ui-bundle.js": "application/javascript; charset=utf-8",
	"swagger-ui-standalone-preset.js": "application/javascript; charset=utf-8",
	"favicon-32x32.png": "image/png",
	"favicon-16x16.png": "image/png",
};

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Participant Registry API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="stylesheet" href="/docs/index.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-ui-standalone-preset.js"></script>
<script src="/docs/initializer.js"></script>
</body>
</html>
`;

const INITIALIZER_JS = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "${API_BASE}/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    persistAuthorization: true,
    displayRequestDuration: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: "StandaloneLayout"
  });
};
`;

const cache = new Map<string, Buffer>();

function asset(name: string): Buffer {
	let content = cache.get(name);
	if (!content) cache.set(name, (content = fs.readFileSync(path.join(ASSET_DIR, name))));
	return content;
}

/** Answers GET /docs and its assets; false for any other path. */
export function serveApiDocs(res: http.ServerResponse, urlPath: string): boolean {
	if (urlPath !== "/docs" && !urlPath.startsWith("/docs/")) return false;
	const name = urlPath.slice("/docs/".length);
	if (urlPath === "/docs" || name === "" || name === "index.html")
		return send(res, 200, "text/html; charset=utf-8", INDEX_HTML);
	if (name === "initializer.js") return send(res, 200, "application/javascript; charset=utf-8", INITIALIZER_JS);
	const type = Object.prototype.hasOwnProperty.call(ASSETS, name) ? ASSETS[name] : undefined;
	if (!type) return false;
	return send(res, 200, type, asset(name));
}
