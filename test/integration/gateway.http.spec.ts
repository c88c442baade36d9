/**
 * The gateway's contract through real HTTP: headers on every answer, content negotiation,
 * the error body, authentication and roles, health and metrics (spec "Endpoints" rule 4,
 * "Authentication", "Errors"; decisions §1–§3, §8).
 */
import request from "supertest";
import { basic, demoAuth, REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";

const FIND_PROCESSES = "application/vnd.registry.processes.find.v1+json";
const ADD_PROCESS = "application/vnd.registry.processes.add.v1+json";

const COMMON = {
	"cache-control": "no-cache, no-store, max-age=0, must-revalidate",
	pragma: "no-cache",
	expires: "0",
	"x-content-type-options": "nosniff",
	"x-xss-protection": "1; mode=block",
	"x-frame-options": "DENY",
};

let registry: RunningRegistry;
let admin: string;

beforeAll(async () => {
	registry = await startRegistry({ env: { AUTH_USER_MAX_FAILURES: "3", AUTH_LOCKOUT_SECONDS: "2" } });
	admin = demoAuth("ADMIN");
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

function expectCommonHeaders(headers: Record<string, string>) {
	expect(headers).toMatchObject(COMMON);
	expect(headers["strict-transport-security"]).toMatch(/max-age=31536000.*includeSubDomains/);
}

function expectErrorBody(body: Record<string, unknown>, status: number, exception: string, path: string) {
	expect(body).toMatchObject({ status, exception, path });
	expect(typeof body.error).toBe("string");
	expect(typeof body.message).toBe("string");
	expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
	expect(JSON.stringify(body)).not.toMatch(/\bat .*\.(ts|js):\d+/);
}

describe("headers on every response", () => {
	test("a success carries the operation media type with charset and the no-cache and security headers", async () => {
		const response = await request(registry.url).get("/rest/api/processes").set("Accept", FIND_PROCESSES);
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toBe(`${FIND_PROCESSES};charset=UTF-8`);
		expectCommonHeaders(response.headers);
	});

	test("an error carries application/json;charset=UTF-8 and the same headers", async () => {
		const response = await request(registry.url)
			.get("/rest/api/processes/5b0f5a3c-0000-4000-8000-000000000000")
			.set("Accept", "application/vnd.registry.processes.get.v1+json");
		expect(response.status).toBe(404);
		expect(response.headers["content-type"]).toBe("application/json;charset=UTF-8");
		expectCommonHeaders(response.headers);
		expectErrorBody(
			response.body,
			404,
			"NotFoundException",
			"/rest/api/processes/5b0f5a3c-0000-4000-8000-000000000000",
		);
		expect(response.body.message).toMatch(/5b0f5a3c-0000-4000-8000-000000000000.*cannot be found/);
	});

	test("an unknown path is 404 in the error shape, with the headers", async () => {
		const response = await request(registry.url).get("/rest/api/nothing-here");
		expect(response.status).toBe(404);
		expectCommonHeaders(response.headers);
		expectErrorBody(response.body, 404, "NotFoundException", "/rest/api/nothing-here");
		const outside = await request(registry.url).get("/favicon.ico");
		expect(outside.status).toBe(404);
		expectCommonHeaders(outside.headers);
	});

	test("a method the path does not have is 405 with Allow", async () => {
		const response = await request(registry.url).patch("/rest/api/processes").set("Authorization", admin);
		expect(response.status).toBe(405);
		expect(response.headers.allow.split(", ").sort()).toEqual(["GET", "HEAD", "POST"]);
		expectErrorBody(response.body, 405, "HttpRequestMethodNotSupportedException", "/rest/api/processes");
		expectCommonHeaders(response.headers);
	});
});

describe("HEAD is answered wherever GET is (decisions §2)", () => {
	const PROCESS = "/rest/api/processes";

	test("a find: the GET's status and headers, no body", async () => {
		const get = await request(registry.url).get(PROCESS).set("Accept", FIND_PROCESSES);
		const head = await request(registry.url).head(PROCESS).set("Accept", FIND_PROCESSES);
		expect(head.status).toBe(200);
		expect(head.text ?? "").toBe("");
		expectCommonHeaders(head.headers);
		expect(head.headers["content-type"]).toBe(get.headers["content-type"]);
		expect(head.headers["content-length"]).toBe(get.headers["content-length"]);
	});

	test("a single record: its ETag, and 304 to a matching If-None-Match", async () => {
		const page = await request(registry.url).get(PROCESS).set("Accept", FIND_PROCESSES);
		const identifier = page.body.content[0].identifier as string;
		const accept = "application/vnd.registry.processes.get.v1+json";
		const get = await request(registry.url).get(`${PROCESS}/${identifier}`).set("Accept", accept);
		const head = await request(registry.url).head(`${PROCESS}/${identifier}`).set("Accept", accept);
		expect(head.status).toBe(200);
		expect(head.headers.etag).toBe(get.headers.etag);
		const notModified = await request(registry.url)
			.head(`${PROCESS}/${identifier}`)
			.set("Accept", accept)
			.set("If-None-Match", get.headers.etag);
		expect(notModified.status).toBe(304);
	});

	test("refused as the GET is refused, with the GET's status", async () => {
		const anonymous = await request(registry.url).head("/rest/api/participants");
		expect(anonymous.status).toBe(401);
		expect(anonymous.headers["www-authenticate"]).toMatch(/^Basic/);
		const missing = await request(registry.url).head(`${PROCESS}/5b0f5a3c-0000-4000-8000-000000000000`);
		expect(missing.status).toBe(404);
		expect(missing.headers["content-type"]).toBe("application/json;charset=UTF-8");
		expect((await request(registry.url).head(PROCESS).set("Accept", "text/html")).status).toBe(406);
	});

	test("a path without GET answers HEAD 405, and its Allow names no HEAD", async () => {
		const response = await request(registry.url)
			.head("/rest/api/transfers/5b0f5a3c-0000-4000-8000-000000000000/complete")
			.set("Authorization", admin);
		expect(response.status).toBe(405);
		expect(response.headers.allow).toBe("POST");
		expectCommonHeaders(response.headers);
	});
});

test("OPTIONS names the methods of a path with Allow", async () => {
	const response = await request(registry.url).options(
		"/rest/api/document-types/5b0f5a3c-0000-4000-8000-000000000000",
	);
	expect(response.status).toBe(204);
	expect(response.headers.allow.split(", ").sort()).toEqual(["DELETE", "GET", "HEAD", "OPTIONS", "PUT"]);
	expectCommonHeaders(response.headers);
});

test("a rejected value that is not a string is answered as its JSON text (decisions §8)", async () => {
	const response = await request(registry.url)
		.post("/rest/api/processes")
		.set("Authorization", admin)
		.set("Content-Type", ADD_PROCESS)
		.send({ title: 42, domain: ["x"] });
	expect(response.status).toBe(400);
	const rejected = Object.fromEntries(
		(response.body.errors as { field: string; rejectedValue: unknown }[]).map((error) => [
			error.field,
			error.rejectedValue,
		]),
	);
	expect(rejected).toMatchObject({ title: "42", domain: '["x"]' });
	for (const error of response.body.errors as { rejectedValue: unknown }[])
		expect(error.rejectedValue === null || typeof error.rejectedValue === "string").toBe(true);
});

test("moleculer-web's route-changing actions cannot be called", async () => {
	for (const action of ["api.addRoute", "api.removeRoute", "api.listAliases"]) {
		await expect(
			registry.broker.call(action, {
				route: { path: "/x", aliases: { "GET /": "catalog.findProcesses" } },
				path: "/rest/api",
			}),
		).rejects.toMatchObject({ name: "ServiceNotFoundError" });
	}
	expect((await request(registry.url).get("/rest/api/processes")).status).toBe(200);
});

describe("content negotiation", () => {
	test("an Accept the operation does not produce is 406", async () => {
		const response = await request(registry.url).get("/rest/api/processes").set("Accept", "text/html");
		expect(response.status).toBe(406);
		expectErrorBody(response.body, 406, "HttpMediaTypeNotAcceptableException", "/rest/api/processes");
	});

	test("the stream media type answers an array, the find media type a page", async () => {
		const stream = await request(registry.url)
			.get("/rest/api/processes")
			.set("Accept", "application/vnd.registry.processes.stream.v1+json");
		expect(stream.status).toBe(200);
		expect(Array.isArray(stream.body)).toBe(true);
		expect(stream.headers["content-type"]).toBe("application/vnd.registry.processes.stream.v1+json;charset=UTF-8");
		const page = await request(registry.url).get("/rest/api/processes");
		expect(page.body).toHaveProperty("pageable");
		expect(page.headers["content-type"]).toBe(`${FIND_PROCESSES};charset=UTF-8`);
	});

	test("a body with an unsupported Content-Type is 415 and changes nothing", async () => {
		const response = await request(registry.url)
			.post("/rest/api/processes")
			.set("Authorization", admin)
			.set("Content-Type", "text/plain")
			.send(JSON.stringify({ domain: "x" }));
		expect(response.status).toBe(415);
		expectErrorBody(response.body, 415, "HttpMediaTypeNotSupportedException", "/rest/api/processes");
	});

	test("a body that is not JSON is 400 HttpMessageNotReadableException", async () => {
		const response = await request(registry.url)
			.post("/rest/api/processes")
			.set("Authorization", admin)
			.set("Content-Type", ADD_PROCESS)
			.send("{not json");
		expect(response.status).toBe(400);
		expectErrorBody(response.body, 400, "HttpMessageNotReadableException", "/rest/api/processes");
	});

	test("a body over 1 MiB is 413", async () => {
		const response = await request(registry.url)
			.post("/rest/api/processes")
			.set("Authorization", admin)
			.set("Content-Type", ADD_PROCESS)
			.send(JSON.stringify({ domain: "x".repeat(1_100_000) }));
		expect(response.status).toBe(413);
		expect(response.body.status).toBe(413);
	});

	test("a validation failure lists every violation in the spec's shape", async () => {
		const response = await request(registry.url)
			.post("/rest/api/processes")
			.set("Authorization", admin)
			.set("Content-Type", ADD_PROCESS)
			.send({ title: "No domain" });
		expect(response.status).toBe(400);
		expectErrorBody(response.body, 400, "MethodArgumentNotValidException", "/rest/api/processes");
		expect(response.body.message).toBe("Validation failed for object='processFormDTO'. Error count: 1");
		expect(response.body.errors).toEqual([
			{
				codes: ["NotNull.processFormDTO.domain", "NotNull.domain", "NotNull"],
				defaultMessage: "must not be null",
				objectName: "processFormDTO",
				field: "domain",
				rejectedValue: null,
				bindingFailure: false,
				code: "NotNull",
				arguments: [{ codes: ["processFormDTO.domain", "domain"], defaultMessage: "domain", code: "domain" }],
			},
		]);
	});

	test("a bad page or sort is 400 MethodArgumentTypeMismatchException", async () => {
		for (const query of ["page=-1", "size=0", "size=abc", "sort=nonexistent"]) {
			const response = await request(registry.url).get(`/rest/api/processes?${query}`);
			expect(response.status).toBe(400);
			expect(response.body.exception).toBe("MethodArgumentTypeMismatchException");
		}
	});

	test("a path UUID that is not a UUID is 400", async () => {
		const response = await request(registry.url).get("/rest/api/processes/not-a-uuid");
		expect(response.status).toBe(400);
		expect(response.body.exception).toBe("MethodArgumentTypeMismatchException");
	});
});

describe("authentication and roles (decisions §3)", () => {
	test("no credentials on an operation closed to ANONYMOUS is 401 with WWW-Authenticate", async () => {
		const response = await request(registry.url).get("/rest/api/accessPoints");
		expect(response.status).toBe(401);
		expect(response.headers["www-authenticate"]).toBe('Basic realm="registry"');
		expectErrorBody(response.body, 401, "AuthenticationException", "/rest/api/accessPoints");
		expectCommonHeaders(response.headers);
	});

	test("wrong credentials are 401 even on an ANONYMOUS operation", async () => {
		const response = await request(registry.url)
			.get("/rest/api/processes")
			.set("Authorization", basic("nobody-here", "wrong"));
		expect(response.status).toBe(401);
		expect(response.headers["www-authenticate"]).toBe('Basic realm="registry"');
	});

	test("a malformed Authorization header is 401", async () => {
		const response = await request(registry.url).get("/rest/api/processes").set("Authorization", "Bearer abc");
		expect(response.status).toBe(401);
	});

	test("a known caller whose role is not allowed is 403", async () => {
		const response = await request(registry.url)
			.post("/rest/api/processes")
			.set("Authorization", demoAuth("SERVICE_PROVIDER"))
			.set("Content-Type", ADD_PROCESS)
			.send({ domain: "poacc" });
		expect(response.status).toBe(403);
		expectErrorBody(response.body, 403, "AccessDeniedException", "/rest/api/processes");
	});

	test("concurrent requests with a credential not verified yet share one password verification (issue 7)", async () => {
		// Each verification is an scrypt derivation (32 MiB, tens of ms): a burst of new connections
		// must not pay one each. Counted by the gateway's own request metrics (local or remote call).
		const verifications = async () =>
			(await request(registry.url).get("/metrics")).text
				.split("\n")
				.filter(
					(line) =>
						line.startsWith("moleculer_request_total{") && line.includes('action="accounts.authenticate"'),
				)
				.reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
		const before = await verifications();
		const answers = await Promise.all(
			Array.from({ length: 32 }, () =>
				request(registry.url)
					.get("/rest/api/processes")
					.set("Accept", FIND_PROCESSES)
					.set("Authorization", demoAuth("SERVICE_PROVIDER", 1)),
			),
		);
		expect(answers.map((answer) => answer.status)).toEqual(Array(32).fill(200));
		expect((await verifications()) - before).toBe(1);
	});

	test("repeated failed logins lock the username: 429 with Retry-After for right and wrong passwords, then recovery", async () => {
		const authority = demoAuth("NETWORK_AUTHORITY");
		const username = Buffer.from(authority.slice(6), "base64").toString().split(":")[0];
		for (let attempt = 0; attempt < 3; attempt++) {
			const wrong = await request(registry.url)
				.get("/rest/api/processes")
				.set("Authorization", basic(username, `wrong-${attempt}`));
			expect(wrong.status).toBe(401);
		}
		const locked = await request(registry.url).get("/rest/api/processes").set("Authorization", authority);
		expect(locked.status).toBe(429);
		expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
		expectErrorBody(locked.body, 429, "TooManyRequestsException", "/rest/api/processes");
		const deadline = Date.now() + 5000;
		let status = 429;
		while (status === 429 && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 250));
			status = (await request(registry.url).get("/rest/api/processes").set("Authorization", authority)).status;
		}
		expect(status).toBe(200);
	});
});

describe("operational endpoints (decisions §1)", () => {
	test("health answers without credentials", async () => {
		const live = await request(registry.url).get("/health/live");
		expect(live.status).toBe(200);
		expect(live.body.status).toBe("UP");
		const ready = await request(registry.url).get("/health/ready");
		expect(ready.status).toBe(200);
		expect(ready.body.status).toBe("UP");
		expectCommonHeaders(ready.headers);
	});

	test("metrics are Prometheus text, with or without credentials", async () => {
		const anonymous = await request(registry.url).get("/metrics");
		expect(anonymous.status).toBe(200);
		expect(anonymous.headers["content-type"]).toMatch(/^text\/plain/);
		expect(anonymous.text).toMatch(/# TYPE moleculer_/);
		const authenticated = await request(registry.url).get("/metrics").set("Authorization", admin);
		expect(authenticated.status).toBe(200);
	});

	test("request times are histograms Prometheus aggregates: buckets, and no per-process quantiles kept", async () => {
		await request(registry.url)
			.get("/rest/api/processes")
			.set("Accept", FIND_PROCESSES)
			.set("Authorization", admin);
		const metrics = (await request(registry.url).get("/metrics")).text;
		expect(metrics).toMatch(
			/^moleculer_request_time_bucket\{[^}]*action="catalog\.findProcesses"[^}]*le="1"\} \d+$/m,
		);
		expect(metrics).not.toMatch(/quantile="/);
	});
});
