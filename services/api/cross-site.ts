/** A change a browser says came from another site is refused (docs/security.md "Cross-site request forgery"). */
import type { IncomingMessage } from "node:http";

const READS = new Set(["GET", "HEAD", "OPTIONS"]);
/** What a browser sends for its own pages, and for what a user typed or bookmarked. */
const OWN_SITE = new Set(["same-origin", "none"]);

export function isCrossSiteChange(req: IncomingMessage): boolean {
	if (READS.has(req.method ?? "GET")) return false;
	const fetchSite = req.headers["sec-fetch-site"];
	if (typeof fetchSite === "string") return !OWN_SITE.has(fetchSite.toLowerCase());
	const origin = req.headers.origin;
	if (origin === undefined) return false;
	// The registry's own origin is the host the browser asked for (a proxy in front keeps Host).
	try {
		return new URL(origin).host !== req.headers.host;
	} catch {
		return true; // "null" (a sandboxed or file page) or anything unreadable: not the registry's own
	}
}
