/**
 * The baseline of `npm run bench`: a bare node:http server, in a process of its own, that
 * answers every request with one lookup answer captured from the registry — the same
 * status, headers (in the same order) and body bytes — from memory. It tells how many
 * requests per second this machine's Node can answer at all, so the registry's figures are
 * read as a share of that.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

process.once("message", (answer: { status: number; headers: [string, string][]; body: string }) => {
	const body = Buffer.from(answer.body, "utf8");
	const headers = answer.headers.filter(
		([name]) =>
			!["date", "connection", "keep-alive", "content-length", "transfer-encoding"].includes(name.toLowerCase()),
	);
	headers.push(["Content-Length", String(body.length)]);
	const server = http.createServer((_req, res) => {
		res.writeHead(answer.status, headers.flat());
		res.end(body);
	});
	// As the registry's gateway (services/api/api.service.ts).
	server.keepAliveTimeout = 65000;
	server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
	process.once("SIGTERM", () => {
		server.close(() => process.exit(0));
		server.closeAllConnections();
	});
});
