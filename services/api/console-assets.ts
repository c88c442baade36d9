/** The web console at /console from dist/console: its caching and CSP are in docs/console.md. */
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { setCommonHeaders } from "../../src/contract/response-headers";
import { send } from "../../src/platform/operational-server";

const CONSOLE_PATH = "/console";

const CONSOLE_CSP = [
	"default-src 'none'",
	"script-src 'self'",
	"style-src 'self'",
	"img-src 'self' data:",
	"font-src 'self'",
	"connect-src 'self'",
	"manifest-src 'self'",
	"base-uri 'none'",
	"form-action 'self'",
	"frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
	".html": "text/html; charset=utf-8",
	".js": "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
	".png": "image/png",
	".ico": "image/x-icon",
	".woff2": "font/woff2",
	".json": "application/json",
};

const IMMUTABLE = "public, max-age=31536000, immutable";

/** dist/console, found upwards from this file: from the sources (ts-jest) and from dist/services/api alike. */
function consoleDirectory(): string {
	for (let directory = __dirname; ; directory = path.dirname(directory)) {
		const candidate = path.join(directory, "dist", "console");
		if (fs.existsSync(candidate)) return candidate;
		if (path.dirname(directory) === directory) return path.resolve(__dirname, "..", "..", "dist", "console");
	}
}

/** What answers GET/HEAD under /console (false for any other path). */
export function consoleAssets(directory = consoleDirectory()) {
	const root = path.resolve(directory);
	const files = new Map<string, Buffer>();
	const read = (file: string): Buffer | null => {
		let content = files.get(file);
		if (content) return content;
		try {
			content = fs.readFileSync(file);
		} catch {
			return null;
		}
		files.set(file, content);
		return content;
	};

	return (req: http.IncomingMessage, res: http.ServerResponse, urlPath: string): boolean => {
		if (urlPath !== CONSOLE_PATH && !urlPath.startsWith(`${CONSOLE_PATH}/`)) return false;
		if (req.method !== "GET" && req.method !== "HEAD") return false;
		setCommonHeaders(res);
		res.setHeader("content-security-policy", CONSOLE_CSP);
		res.setHeader("referrer-policy", "no-referrer");
		let relative: string;
		try {
			relative = decodeURIComponent(urlPath.slice(CONSOLE_PATH.length)).replace(/^\/+/, "");
		} catch {
			return send(res, 400, "text/plain; charset=utf-8", "Bad path\n");
		}
		const file = path.resolve(root, relative);
		// A hashed asset: the file itself, or 404 (never index.html in its place: a stale page would run a missing script).
		if (relative.startsWith("assets/")) {
			const content = file.startsWith(root + path.sep) ? read(file) : null;
			const type = TYPES[path.extname(file)];
			if (!content || !type) return send(res, 404, "text/plain; charset=utf-8", "Not found\n");
			res.setHeader("cache-control", IMMUTABLE);
			res.removeHeader("Pragma");
			res.removeHeader("Expires");
			return send(res, 200, type, content);
		}
		// Any other path is a route of the console's own (client-side routing): its page.
		const index = read(path.join(root, "index.html"));
		if (index) return send(res, 200, TYPES[".html"], index);
		const unbuilt =
			"The console is not built in this installation: run `npm run build:console` (npm ci does it).\n";
		return send(res, 404, "text/plain; charset=utf-8", unbuilt);
	};
}
