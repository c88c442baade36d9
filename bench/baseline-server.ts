/**
 * The baselines of `npm run bench`, each in a process of its own, answering every request with
 * one answer captured from the registry (the same status, headers and body bytes) from memory:
 * - `node:http` (the default): a bare server; how many requests per second this machine's Node
 *   answers at all, so the registry's figures are read as a share of that;
 * - `moleculer-web`: a bare moleculer-web route whose action returns the answer, with Moleculer's
 *   metrics on as the registry runs them; what the framework alone costs per request.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ServiceBroker, type Context } from "moleculer";
import ApiGateway from "moleculer-web";
import { brokerOptions } from "../moleculer.config";

interface Answer {
	status: number;
	headers: [string, string][];
	body: string;
}

const KEEP_ALIVE_MS = 65000; // as the registry's gateway (services/api/http-server.ts)

function nodeHttp(answer: Answer, headers: [string, string][], body: Buffer): Promise<number> {
	const server = http.createServer((_req, res) => {
		res.writeHead(answer.status, headers.flat());
		res.end(body);
	});
	server.keepAliveTimeout = KEEP_ALIVE_MS;
	process.once("SIGTERM", () => {
		server.close(() => process.exit(0));
		server.closeAllConnections();
	});
	return new Promise((resolve) =>
		server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
	);
}

async function moleculerWeb(answer: Answer, headers: [string, string][], body: Buffer): Promise<number> {
	const broker = new ServiceBroker({ logger: false, metrics: brokerOptions({ METRICS: "true" }).metrics });
	broker.createService({
		name: "answer",
		actions: {
			get(ctx: Context<unknown, { $statusCode?: number; $responseHeaders?: Record<string, string> }>) {
				ctx.meta.$statusCode = answer.status;
				ctx.meta.$responseHeaders = Object.fromEntries(headers);
				return body;
			},
		},
	});
	const gateway = broker.createService({
		name: "api",
		mixins: [ApiGateway],
		settings: {
			port: 0,
			ip: "127.0.0.1",
			routes: [
				{
					path: "/rest/api",
					mappingPolicy: "restrict",
					aliases: {
						"GET organizations/:organization/processes": "answer.get",
						"GET participants/:participant": "answer.get",
					},
				},
			],
		},
	}) as unknown as { server: http.Server };
	await broker.start();
	gateway.server.keepAliveTimeout = KEEP_ALIVE_MS;
	process.once("SIGTERM", () => void broker.stop().then(() => process.exit(0)));
	return (gateway.server.address() as AddressInfo).port;
}

process.once("message", (answer: Answer) => {
	const body = Buffer.from(answer.body, "utf8");
	const headers = answer.headers.filter(
		([name]) =>
			!["date", "connection", "keep-alive", "content-length", "transfer-encoding"].includes(name.toLowerCase()),
	);
	headers.push(["Content-Length", String(body.length)]);
	const serve = process.argv[2] === "moleculer-web" ? moleculerWeb : nodeHttp;
	serve(answer, headers, body).then(
		(port) => process.send?.({ port }),
		(error: Error) => process.send?.({ error: error.message }),
	);
});
