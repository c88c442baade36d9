/**
 * The gateway serves the built console at /console (services/api/console-assets.ts): its page
 * for every client-side route, never cached, under the console's Content-Security-Policy and the
 * registry's security headers; hashed assets with their type, cached for a year; nothing outside
 * dist/console. Needs `npm run build:console` (npm ci runs it).
 */
import fs from "node:fs";
import path from "node:path";
import request from "supertest";
import { rawRequest } from "../support/raw-http";
import { startRegistry, type RunningRegistry } from "../support/registry";

const BUILT = path.join(__dirname, "..", "..", "dist", "console");
let registry: RunningRegistry;

beforeAll(async () => {
	if (!fs.existsSync(path.join(BUILT, "index.html")))
		throw new Error(`${BUILT} is not built: run npm run build:console (npm ci runs it)`);
	registry = await startRegistry();
});

afterAll(async () => {
	await registry?.stop();
});

test("every console route answers the page: no-store, the CSP with only the console's own scripts and styles, the security headers", async () => {
	for (const route of [
		"/console",
		"/console/",
		"/console/participants",
		"/console/participants/iso6523-actorid-upis%3A%3A0192%3A991825827/edit",
	]) {
		const answer = await request(registry.url).get(route).expect(200);
		expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8");
		expect(answer.text).toContain('<div id="root"></div>');
		expect(answer.headers["cache-control"]).toContain("no-store");
		expect(answer.headers["x-content-type-options"]).toBe("nosniff");
		expect(answer.headers["x-frame-options"]).toBe("DENY");
		expect(answer.headers["strict-transport-security"]).toBeDefined();
		const policy = answer.headers["content-security-policy"] as string;
		expect(policy).toContain("script-src 'self'");
		expect(policy).toContain("style-src 'self'");
		expect(policy).toContain("default-src 'none'");
		expect(policy).not.toContain("unsafe-inline");
	}
	// The page has no inline script or style for the policy to refuse.
	const page = (await request(registry.url).get("/console/")).text;
	expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
	expect(page).not.toMatch(/<style|style=/);
});

test("hashed assets answer with their type and may be cached for a year; a missing one is 404, not the page", async () => {
	const page = (await request(registry.url).get("/console/")).text;
	const assets = [...page.matchAll(/\/console\/(assets\/[^"]+)"/g)].map((match) => match[1]);
	expect(assets.some((asset) => asset.endsWith(".js"))).toBe(true);
	expect(assets.some((asset) => asset.endsWith(".css"))).toBe(true);
	for (const asset of assets) {
		const answer = await request(registry.url).get(`/console/${asset}`).expect(200);
		expect(answer.headers["content-type"]).toBe(
			asset.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
		);
		expect(answer.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
		expect(answer.headers.pragma).toBeUndefined();
		expect(answer.headers["x-content-type-options"]).toBe("nosniff");
	}
	await request(registry.url).get("/console/assets/missing-0000.js").expect(404);
});

test("nothing outside dist/console is reachable, and only GET and HEAD are answered", async () => {
	for (const probe of [
		"/console/assets/..%2f..%2f..%2fpackage.json",
		"/console/assets/%2e%2e/%2e%2e/server.js",
		"/console/assets/..%5c..%5cpackage.json",
	]) {
		const answer = await rawRequest(registry.url, { method: "GET", path: probe });
		expect(answer.status).toBe(404);
		expect(answer.text).not.toContain('"dependencies"');
	}
	const head = await rawRequest(registry.url, { method: "HEAD", path: "/console/" });
	expect(head.status).toBe(200);
	expect(head.text).toBe("");
	expect((await rawRequest(registry.url, { method: "POST", path: "/console/" })).status).toBe(404);
});
