/**
 * What each step of the gateway costs per request (docs/performance.md "What each hook costs"):
 * the registry in this process (demo data, METRICS on, RATE_LIMIT set), and each of its
 * moleculer-web hooks called many times in a loop on one request as moleculer-web hands it over
 * (its `api.rest` context, the matched alias, the parsed path values). The hooks run here
 * exactly as they run for a request; what moleculer-web itself costs around them is the
 * "moleculer-web limit" side's CPU per request in `npm run bench`. Prints one JSON line.
 */
import type { ServerResponse } from "node:http";
import { Context, type ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../services";
import { operationAliases } from "../services/api/routes";
import { stateOf, type GatewayRequest, type OperationAlias } from "../services/api/request-state";
import { readDemoSeed } from "./lib/load";
import { importSeed } from "../src/exchange/seed";
import type { Caller } from "../src/contract/model";

const LOOKUP_ACCEPT = "application/vnd.registry.organizations.processes.v1+json";
const READ_ACCEPT = "application/vnd.registry.participants.get.v1+json";
const ROUNDS = Number(process.env.HOOK_COST_ROUNDS ?? 200_000);

interface GatewayUnderTest {
	authenticate(
		ctx: Context,
		route: unknown,
		req: GatewayRequest,
		res: ServerResponse,
		alias: OperationAlias,
	): Caller | null | Promise<Caller | null>;
	authorize(ctx: Context, route: unknown, req: GatewayRequest): void;
	operationCalls: {
		serve(req: GatewayRequest, res: ServerResponse, state: unknown, fail: (error: unknown) => void): void;
	};
	settings: { port: number };
}

/** A response that takes what the gateway writes and sends nothing. */
function sink(): ServerResponse {
	return {
		headersSent: false,
		writeHead: () => undefined,
		end: () => undefined,
		setHeader: () => undefined,
	} as unknown as ServerResponse;
}

function request(
	broker: ServiceBroker,
	api: GatewayUnderTest,
	path: string,
	params: Record<string, string>,
	headers: Record<string, string>,
): GatewayRequest {
	const ctx = new Context(broker, undefined as never);
	(ctx as unknown as { service: unknown }).service = api;
	return {
		method: "GET",
		url: path,
		originalUrl: path,
		headers,
		socket: { remoteAddress: "127.0.0.1" },
		$ctx: ctx,
		$params: { params, query: {} },
	} as unknown as GatewayRequest;
}

/** Nanoseconds per call of `run`, the best of three loops. */
function timed(run: () => void): number {
	let best = Infinity;
	for (let loop = 0; loop < 3; loop++) {
		const started = process.hrtime.bigint();
		for (let index = 0; index < ROUNDS; index++) run();
		best = Math.min(best, Number(process.hrtime.bigint() - started) / ROUNDS);
	}
	return best;
}

async function main(): Promise<void> {
	Object.assign(process.env, {
		DATA_DIR: ":memory:",
		PORT: "0",
		LOG_LEVEL: "warn",
		METRICS: process.env.METRICS ?? "true",
		RATE_LIMIT: "1000000000",
	});
	const broker = createRegistryBroker({ overrides: { logger: false } });
	await broker.start();
	const seed = readDemoSeed();
	await importSeed(broker, seed as never);
	const api = broker.getLocalService("api") as unknown as GatewayUnderTest;
	const url = `http://127.0.0.1:${api.settings.port}`;
	const aliases = operationAliases(() => undefined);
	const sp1 = seed.accounts.find((account) => account.username === "sp1");
	if (!sp1) throw new Error("the demo seed has no sp1");
	const authorization = `Basic ${Buffer.from(`${sp1.username}:${sp1.password}`).toString("base64")}`;
	const organization = "iso6523-actorid-upis::0192:991825827";
	const lookupPath = `/rest/api/organizations/${organization}/processes`;
	const readPath = `/rest/api/participants/${organization}`;
	// The full path once each: it fills the held answers and remembers sp1's credential.
	for (const [path, headers] of [
		[lookupPath, { accept: LOOKUP_ACCEPT }],
		[readPath, { accept: READ_ACCEPT, authorization }],
	] as const) {
		const response = await fetch(`${url}${path}`, { headers });
		if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
	}

	const costs: Record<string, number> = {};
	for (const [name, path, alias, params, headers] of [
		[
			"lookup",
			lookupPath,
			aliases["GET /organizations/:qualifiedIdentifier/processes"],
			{ qualifiedIdentifier: organization },
			{ accept: LOOKUP_ACCEPT },
		],
		[
			"read",
			readPath,
			aliases["GET /participants/:participant"],
			{ participant: organization },
			{ accept: READ_ACCEPT, authorization },
		],
	] as const) {
		const req = request(broker, api, path, params, headers);
		const res = sink();
		const fail = (error: unknown) => {
			throw error;
		};
		const authenticate = () => {
			const user = api.authenticate(req.$ctx, null, req, res, alias);
			if (user instanceof Promise) throw new Error("the credential is not remembered");
			req.$ctx.meta.user = user;
		};
		authenticate();
		costs[`${name}: authentication hook`] = timed(authenticate);
		costs[`${name}: authorization hook`] = timed(() => api.authorize(req.$ctx, null, req));
		costs[`${name}: alias handler (held answer, metrics, answer written)`] = timed(() =>
			api.operationCalls.serve(req, res, stateOf(req), fail),
		);
	}
	await broker.stop();
	console.log(
		JSON.stringify(
			Object.fromEntries(
				Object.entries(costs).map(([name, nanoseconds]) => [name, Math.round(nanoseconds) / 1000]),
			),
		),
	);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
