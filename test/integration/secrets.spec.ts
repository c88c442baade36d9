/**
 * No secret in logs or answers, no stack trace in an answer (issue 8, decisions §3, §8).
 *
 * The whole registry runs in this process with LOG_LEVEL=debug and the project's Console
 * logger (its console output captured here), plus a second appender at trace level that
 * renders every argument of every log call in full (errors with their data and stacks).
 * Then: requests with right and wrong Basic credentials, malformed Authorization headers,
 * bodies that carry passwords (dropped unknown fields, malformed JSON around a password),
 * the operator's account actions with passwords (add, reset, refused), every kind of 4xx,
 * a 503 (the accounts service stopped, so a login cannot be checked) and a 500 (a store
 * closed under a running service). Every log line, and every answer's body and headers,
 * must hold no password, no Authorization header value and no base64 credential; no answer
 * may hold a stack trace.
 */
import util from "node:util";
import { Loggers, type LoggerConfig, type ServiceBroker } from "moleculer";
import { brokerOptions } from "../../moleculer.config";
import { createRegistryBroker } from "../../services";
import { callerMeta } from "../../src/platform/caller-signature";
import { accountIdentifier } from "../../services/accounts/accounts.service";
import { OPERATIONS } from "../../src/contract/operations";
import { importSeed } from "../../src/exchange/seed";
import { STACK_FRAME, rawRequest, socketRequest, type RawAnswer, type RawRequest } from "../support/raw-http";
import { basic, demoSeed } from "../support/registry";

const DEMO_ACCOUNTS = demoSeed().accounts as Array<{ username: string; password: string; role: string }>;
const WRONG_PASSWORD = "Wg5Hn-wrong-Tz17";
const UNKNOWN_USER_PASSWORD = "Nb3Fk-unknown-Pd65";
const OPERATOR_PASSWORD = "Zx9Qv-added-Kp42!";
const RESET_PASSWORD = "Rt7Wm-reset-Lq88!";
const SHORT_PASSWORD = "Sh0rtKq9";
const BODY_PASSWORD = "Bc8Jd-in-a-body-Vx33";

const PASSWORDS = [
	...DEMO_ACCOUNTS.map((account) => account.password),
	WRONG_PASSWORD,
	UNKNOWN_USER_PASSWORD,
	OPERATOR_PASSWORD,
	RESET_PASSWORD,
	SHORT_PASSWORD,
	BODY_PASSWORD,
];
const AUTHORIZATIONS: string[] = [];

/** Every Authorization value sent, and its base64 credential, becomes a secret to look for. */
function credential(username: string, password: string): string {
	const value = basic(username, password);
	AUTHORIZATIONS.push(value);
	return value;
}

const logLines: string[] = [];

/** Renders every log call in full, whatever the level: what any appender could ever write. */
class CaptureAppender extends Loggers.Base {
	getLogHandler(bindings?: { mod?: string }) {
		return (type: string, args: unknown[]) => {
			const rendered = args.map((arg) =>
				typeof arg === "string"
					? arg
					: util.inspect(arg, {
							depth: 8,
							breakLength: Infinity,
							maxArrayLength: 500,
							maxStringLength: 100_000,
						}),
			);
			logLines.push(`[${type}] ${bindings?.mod ?? ""}: ${rendered.join(" ")}`);
		};
	}
}

let broker: ServiceBroker;
let url = "";
const answers: Array<{ what: string; answer: RawAnswer }> = [];
const previousEnv = { ...process.env };
// eslint-disable-next-line no-console
const print = console.log.bind(console);
let summary = "";

beforeAll(async () => {
	Object.assign(process.env, {
		DATA_DIR: ":memory:",
		PORT: "0",
		LOG_LEVEL: "debug",
		AUTH_USER_MAX_FAILURES: "1000",
		AUTH_ADDRESS_MAX_FAILURES: "1000",
	});
	// The Console appender writes through console.*: keep what it writes, print nothing.
	(["log", "info", "warn", "error", "debug", "trace"] as const).forEach((method) =>
		jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
			logLines.push(`[console.${method}] ${util.format(...args)}`);
		}),
	);
	const consoleLogger = brokerOptions(process.env).logger as LoggerConfig;
	broker = createRegistryBroker({
		overrides: { logger: [consoleLogger, new CaptureAppender({ level: "trace" }) as unknown as LoggerConfig] },
	});
	await broker.start();
	await importSeed(broker, demoSeed());
	url = `http://127.0.0.1:${(broker.getLocalService("api") as unknown as { settings: { port: number } }).settings.port}`;
}, 120000);

afterAll(async () => {
	await broker?.stop();
	// The spies stay: a stopped broker may still log a late debug line, which goes nowhere.
	if (summary) print(summary);
	for (const key of Object.keys(process.env)) if (!(key in previousEnv)) delete process.env[key];
	Object.assign(process.env, previousEnv);
});

async function send(what: string, request: RawRequest): Promise<RawAnswer> {
	const answer = await rawRequest(url, request);
	answers.push({ what, answer });
	return answer;
}

const account = (role: string) =>
	DEMO_ACCOUNTS.find((candidate) => candidate.role === role) as { username: string; password: string };
const json = (authorization: string | undefined, extra: Record<string, string> = {}) => ({
	...(authorization ? { Authorization: authorization } : {}),
	"Content-Type": "application/json",
	...extra,
});

test("requests with right and wrong credentials, bodies with passwords, and every kind of error", async () => {
	const admin = credential(account("ADMIN").username, account("ADMIN").password);
	const sp = credential(account("SERVICE_PROVIDER").username, account("SERVICE_PROVIDER").password);
	for (const role of ["ACCESS_POINT_PROVIDER", "NETWORK_AUTHORITY"]) {
		expect(
			(
				await send(`right credentials of ${role}`, {
					method: "GET",
					path: "/rest/api/processes",
					headers: { Authorization: credential(account(role).username, account(role).password) },
				})
			).status,
		).toBe(200);
	}
	expect(
		(
			await send("right credentials (ADMIN)", {
				method: "GET",
				path: "/rest/api/accessPoints",
				headers: { Authorization: admin },
			})
		).status,
	).toBe(200);
	expect(
		(
			await send("wrong password", {
				method: "GET",
				path: "/rest/api/accessPoints",
				headers: { Authorization: credential(account("ADMIN").username, WRONG_PASSWORD) },
			})
		).status,
	).toBe(401);
	expect(
		(
			await send("unknown username", {
				method: "GET",
				path: "/rest/api/processes",
				headers: { Authorization: credential("intruder", UNKNOWN_USER_PASSWORD) },
			})
		).status,
	).toBe(401);
	const noColon = `Basic ${Buffer.from(`admin${WRONG_PASSWORD}`).toString("base64")}`;
	AUTHORIZATIONS.push(noColon);
	expect(
		(
			await send("Basic without a colon", {
				method: "GET",
				path: "/rest/api/processes",
				headers: { Authorization: noColon },
			})
		).status,
	).toBe(401);
	const bearer = `Bearer ${WRONG_PASSWORD}`;
	AUTHORIZATIONS.push(bearer);
	expect(
		(
			await send("another scheme", {
				method: "GET",
				path: "/rest/api/processes",
				headers: { Authorization: bearer },
			})
		).status,
	).toBe(401);

	// Bodies carrying passwords: an unknown field (dropped), a wrong type next to it, malformed JSON around one.
	const created = await send("password in an unknown field", {
		method: "POST",
		path: "/rest/api/document-types",
		headers: json(admin),
		body: JSON.stringify({
			title: "Secrets test",
			qualifiedIdentifier: "busdox-docid-qns::secrets-test",
			password: BODY_PASSWORD,
			credentials: { password: BODY_PASSWORD },
		}),
	});
	expect(created.status).toBe(201);
	expect(
		(
			await send("password next to a validation error", {
				method: "POST",
				path: "/rest/api/document-types",
				headers: json(admin),
				body: JSON.stringify({ title: 42, password: BODY_PASSWORD }),
			})
		).status,
	).toBe(400);
	for (const body of [
		`{"password": ${BODY_PASSWORD}}`,
		`{"title": "x", "password": "${BODY_PASSWORD}", oops}`,
		`${BODY_PASSWORD}`,
		`"${BODY_PASSWORD}`,
		`{"password":"${BODY_PASSWORD}"}}`,
	]) {
		const answer = await send(`malformed JSON: ${body.slice(0, 20)}`, {
			method: "POST",
			path: "/rest/api/document-types",
			headers: json(admin),
			body,
		});
		expect({ body, status: answer.status, exception: JSON.parse(answer.text).exception }).toEqual({
			body,
			status: 400,
			exception: "HttpMessageNotReadableException",
		});
	}

	// The other 4xx: 403, 404, 405, 406, 413, 415, 400 (path), 431, a parser refusal.
	const refusals: Array<[string, RawRequest, number]> = [
		[
			"403",
			{
				method: "POST",
				path: "/rest/api/processes",
				headers: json(sp),
				body: JSON.stringify({ domain: "x", password: BODY_PASSWORD }),
			},
			403,
		],
		[
			"404",
			{
				method: "GET",
				path: "/rest/api/processes/5b0f5a3c-0000-4000-8000-000000000000",
				headers: { Authorization: admin },
			},
			404,
		],
		["405", { method: "PATCH", path: "/rest/api/processes", headers: { Authorization: admin } }, 405],
		[
			"406",
			{ method: "GET", path: "/rest/api/processes", headers: { Authorization: admin, Accept: "text/html" } },
			406,
		],
		[
			"413",
			{
				method: "POST",
				path: "/rest/api/processes",
				headers: json(admin),
				body: JSON.stringify({ domain: "x".repeat(1_100_000), password: BODY_PASSWORD }),
			},
			413,
		],
		[
			"415",
			{
				method: "POST",
				path: "/rest/api/processes",
				headers: json(admin, { "Content-Type": "text/plain" }),
				body: `password=${BODY_PASSWORD}`,
			},
			415,
		],
		["400 path", { method: "GET", path: "/rest/api/participants/%zz", headers: { Authorization: sp } }, 400],
		[
			"431",
			{
				method: "GET",
				path: "/rest/api/processes",
				headers: { Authorization: admin, "X-Padding": "p".repeat(20000) },
			},
			431,
		],
	];
	for (const [what, request, status] of refusals)
		expect({ what, status: (await send(what, request)).status }).toEqual({ what, status });
	const parserRefusal = await socketRequest(
		url,
		`GET /rest/api/processes\u0001 HTTP/1.1\r\nHost: x\r\nAuthorization: ${admin}\r\nConnection: close\r\n\r\n`,
	);
	answers.push({ what: "parser refusal", answer: parserRefusal });
	expect(parserRefusal.status).toBe(400);

	// Metrics and health are answers too.
	await send("metrics", { method: "GET", path: "/metrics" });
	await send("health", { method: "GET", path: "/health/ready" });
	const events = OPERATIONS.find((operation) => operation.id === "findEvents");
	if (events)
		await send("audit events", {
			method: "GET",
			path: "/rest/api/events?size=1000",
			headers: { Authorization: admin, Accept: events.mediaTypes[0] },
		});
});

test("the operator's account actions with passwords: added, reset, refused", async () => {
	const operator = { meta: callerMeta(broker, { username: "operator-cli", role: "ADMIN" }) };
	await broker.call(
		"accounts.addAccount",
		{ body: { username: "secrets-test-user", password: OPERATOR_PASSWORD, role: "NETWORK_AUTHORITY" } },
		operator,
	);
	await broker.call(
		"accounts.resetPassword",
		{ identifier: accountIdentifier("secrets-test-user"), body: { password: RESET_PASSWORD } },
		operator,
	);
	await expect(
		broker.call(
			"accounts.resetPassword",
			{ identifier: accountIdentifier("secrets-test-user"), body: { password: SHORT_PASSWORD } },
			operator,
		),
	).rejects.toMatchObject({ code: 422 });
	await expect(
		broker.call(
			"accounts.addAccount",
			{ body: { username: "secrets-test-user", password: OPERATOR_PASSWORD, role: "ADMIN" } },
			operator,
		),
	).rejects.toMatchObject({ code: 409 });
	const reset = credential("secrets-test-user", RESET_PASSWORD);
	expect(
		(
			await send("the reset password works", {
				method: "GET",
				path: "/rest/api/accessPoints",
				headers: { Authorization: reset },
			})
		).status,
	).toBe(200);
	expect(
		(
			await send("the old one does not", {
				method: "GET",
				path: "/rest/api/accessPoints",
				headers: { Authorization: credential("secrets-test-user", OPERATOR_PASSWORD) },
			})
		).status,
	).toBe(401);
	const events = OPERATIONS.find((operation) => operation.id === "findEvents");
	if (events) {
		const admin = credential(account("ADMIN").username, account("ADMIN").password);
		const trail = await send("audit events after the account changes", {
			method: "GET",
			path: "/rest/api/events?size=1000",
			headers: { Authorization: admin, Accept: events.mediaTypes[0] },
		});
		if (trail.status === 200) expect(trail.text).not.toMatch(/passwordHash|scrypt\$|\$scrypt/i);
	}
});

test("a 503 (accounts stopped: a login cannot be checked) and a 500 (a store closed) answer without a secret or a stack trace", async () => {
	const accounts = broker.getLocalService("accounts");
	await broker.destroyService(accounts);
	const unverifiable = credential(account("SERVICE_PROVIDER").username, `${WRONG_PASSWORD}-503`);
	const unavailable = await send("503: accounts stopped", {
		method: "GET",
		path: "/rest/api/participants",
		headers: { Authorization: unverifiable },
	});
	expect({ status: unavailable.status, exception: JSON.parse(unavailable.text).exception }).toEqual({
		status: 503,
		exception: "ServiceUnavailableException",
	});

	// A store closed under its running service: every write fails inside the service.
	const catalog = broker.getLocalService("catalog") as unknown as { store: { close(): Promise<void> } };
	await catalog.store.close();
	const admin = basic(account("ADMIN").username, account("ADMIN").password);
	const failed = await send("500: store closed", {
		method: "POST",
		path: "/rest/api/processes",
		headers: json(admin),
		body: JSON.stringify({ domain: "Secrets", title: "fails", password: BODY_PASSWORD }),
	});
	expect({ status: failed.status, body: JSON.parse(failed.text) }).toMatchObject({
		status: 500,
		body: { exception: "InternalServerError", message: "Internal server error" },
	});
	// The failure itself was logged (with its stack: logs may have one, answers may not).
	expect(
		logLines.some((line) => /POST \/rest\/api\/processes failed/.test(line) && /store is closed/.test(line)),
	).toBe(true);
});

test("no password, Authorization value or base64 credential in any log line or answer; no stack trace in any answer", () => {
	// Whole values, and for the passwords made up here (not the demo ones, which share words
	// with field names) every 8-character piece: a quoted fragment of a body is a leak too.
	const pieces = [
		WRONG_PASSWORD,
		UNKNOWN_USER_PASSWORD,
		OPERATOR_PASSWORD,
		RESET_PASSWORD,
		SHORT_PASSWORD,
		BODY_PASSWORD,
	].flatMap((password) =>
		Array.from({ length: password.length - 7 }, (_, start) => password.slice(start, start + 8)),
	);
	const secrets = [
		...new Set([
			...PASSWORDS,
			...AUTHORIZATIONS,
			...AUTHORIZATIONS.map((value) => value.replace(/^\S+\s+/, "")),
			...pieces,
		]),
	];
	expect(logLines.length).toBeGreaterThan(50);
	expect(logLines.some((line) => line.startsWith("[debug]"))).toBe(true);
	const leakedInLogs = logLines.flatMap((line) =>
		secrets.filter((secret) => line.includes(secret)).map((secret) => `${secret} in: ${line.slice(0, 300)}`),
	);
	expect(leakedInLogs).toEqual([]);
	const leakedInAnswers = answers.flatMap(({ what, answer }) => {
		const text = `${JSON.stringify(answer.headers)}\n${answer.text}`;
		return secrets.filter((secret) => text.includes(secret)).map((secret) => `${secret} in the answer to ${what}`);
	});
	expect(leakedInAnswers).toEqual([]);
	const stackTraces = answers
		.filter(({ answer }) => STACK_FRAME.test(answer.text) || /\n\s+at /.test(answer.text))
		.map(({ what }) => what);
	expect(stackTraces).toEqual([]);
	summary = `secrets: ${logLines.length} log lines (LOG_LEVEL=debug, plus every call at trace) and ${answers.length} answers searched for ${secrets.length} secrets`;
});
