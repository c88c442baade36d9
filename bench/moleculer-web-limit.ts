/**
 * The "moleculer-web limit" side of `npm run bench`: a bare moleculer-web 0.10 gateway, in a
 * process of its own, whose one route's alias is a function writing the captured lookup answer
 * (status, headers, body bytes) from memory (for the authenticated read's paths too). Every request still takes moleculer-web's path
 * (the `api.rest` action, route and alias matching, the hooks' places): it is the most a
 * gateway built on moleculer-web can answer on this machine, what the registry is held to.
 * BENCH_LIMIT_HOOKS=true adds the two hooks the design asks of the gateway (`authentication`,
 * `authorization`), each returning at once: what they cost before any work is done in them.
 */
import type { ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ServiceBroker } from "moleculer";
import ApiGateway from "moleculer-web";

process.once("message", async (answer: { status: number; headers: [string, string][]; body: string }) => {
	const body = Buffer.from(answer.body, "utf8");
	const headers = answer.headers.filter(
		([name]) =>
			!["date", "connection", "keep-alive", "content-length", "transfer-encoding", "x-request-id"].includes(
				name.toLowerCase(),
			),
	);
	headers.push(["Content-Length", String(body.length)]);
	const head = headers.flat();
	// BENCH_LIMIT_METRICS=true: the same with moleculer's own request metrics and context tracking on, as the registry runs.
	const withMetrics = process.env.BENCH_LIMIT_METRICS === "true";
	const withHooks = process.env.BENCH_LIMIT_HOOKS === "true";
	const broker = new ServiceBroker({
		logger: false,
		metrics: { enabled: withMetrics },
		tracking: { enabled: withMetrics },
	});
	const writeAnswer = (_req: unknown, res: ServerResponse) => {
		res.writeHead(answer.status, head);
		res.end(body);
	};
	const gateway = broker.createService({
		name: "api",
		mixins: [ApiGateway],
		methods: {
			authenticate: () => null,
			authorize: () => undefined,
		},
		settings: {
			port: 0,
			ip: "127.0.0.1",
			logRequest: null,
			logResponse: null,
			logRequestParams: null,
			logRouteRegistration: null,
			routes: [
				{
					path: "/rest/api",
					mappingPolicy: "restrict",
					bodyParsers: false,
					logging: false,
					authentication: withHooks,
					authorization: withHooks,
					// The paths of both hot reads (the read is held to the same limit, with the lookup's bytes).
					aliases: {
						"GET /organizations/:qualifiedIdentifier/processes": writeAnswer,
						"GET /participants/:participant": writeAnswer,
					},
				},
			],
		},
	});
	await broker.start();
	const server = (gateway as unknown as { server: import("node:http").Server }).server;
	server.keepAliveTimeout = 65000;
	process.send?.({ port: (server.address() as AddressInfo).port });
	process.once("SIGTERM", () => {
		server.closeAllConnections();
		void broker.stop().then(() => process.exit(0));
	});
});
