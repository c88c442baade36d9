/**
 * Attacks over HTTP, each shown to fail (issue 36; docs/security.md lists every threat and its
 * test). Behind a trusted proxy (TRUST_PROXY, as k8s/ ships it) clients are told apart by
 * X-Forwarded-For:
 *   - ten wrong passwords for sp2 from one address do not stop sp2's right password from
 *     another; a flood of failures with made-up usernames from one address stops no one else;
 *   - a cross-site form POST from a browser holding admin's Basic credentials changes nothing
 *     (403); the console's own requests and non-browser clients are unaffected;
 *   - an X-Request-ID too long or with other characters is not echoed.
 */
import { rawRequest, type RawAnswer } from "../support/raw-http";
import {
	basic,
	demoAccount,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";

const USER_MAX_FAILURES = 10;
/** The default is 200 (decisions §3); fewer here, as each failure costs a password derivation. */
const ADDRESS_MAX_FAILURES = 20;

let registry: RunningRegistry;

beforeAll(async () => {
	registry = await startRegistry({
		env: {
			TRUST_PROXY: "127.0.0.1,::1",
			AUTH_USER_MAX_FAILURES: String(USER_MAX_FAILURES),
			AUTH_ADDRESS_MAX_FAILURES: String(ADDRESS_MAX_FAILURES),
			AUTH_LOCKOUT_SECONDS: "300",
		},
	});
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
	return rawRequest(registry.url, { method, path: `/rest/api${path}`, headers, ...(body ? { body } : {}) });
}

const PROCESSES = "application/vnd.registry.processes.find.v1+json";

describe("no client locks another out (decisions §3)", () => {
	test("ten wrong passwords for sp2 from one address: sp2's right password from another address still works", async () => {
		const sp2 = demoAccount("SERVICE_PROVIDER", 1);
		for (let attempt = 0; attempt < USER_MAX_FAILURES + 2; attempt++)
			await send("GET", "/processes", {
				Accept: PROCESSES,
				Authorization: basic(sp2.username, `guess-${attempt}`),
				"X-Forwarded-For": "198.51.100.66",
			});
		const attacker = await send("GET", "/processes", {
			Accept: PROCESSES,
			Authorization: demoAuth("SERVICE_PROVIDER", 1),
			"X-Forwarded-For": "198.51.100.66",
		});
		expect(attacker.status).toBe(429);
		const owner = await send("GET", "/processes", {
			Accept: PROCESSES,
			Authorization: demoAuth("SERVICE_PROVIDER", 1),
			"X-Forwarded-For": "203.0.113.20",
		});
		expect(owner.status).toBe(200);
	});

	test("a flood of failed logins with made-up usernames from one address refuses nobody else, and not the credentials that address used before", async () => {
		const flooder = "198.51.100.77";
		const authority = demoAuth("NETWORK_AUTHORITY");
		expect(
			(
				await send("GET", "/processes", {
					Accept: PROCESSES,
					Authorization: authority,
					"X-Forwarded-For": flooder,
				})
			).status,
		).toBe(200);
		for (let attempt = 0; attempt < ADDRESS_MAX_FAILURES; attempt++)
			await send("GET", "/processes", {
				Accept: PROCESSES,
				Authorization: basic(`made-up-${attempt}`, "Winter2026!"),
				"X-Forwarded-For": flooder,
			});
		expect(
			(
				await send("GET", "/processes", {
					Accept: PROCESSES,
					Authorization: basic("made-up-x", "y"),
					"X-Forwarded-For": flooder,
				})
			).status,
		).toBe(429);
		for (const [role, index] of [
			["SERVICE_PROVIDER", 0],
			["ADMIN", 0],
			["ACCESS_POINT_PROVIDER", 0],
		] as const)
			expect(
				(
					await send("GET", "/processes", {
						Accept: PROCESSES,
						Authorization: demoAuth(role, index),
						"X-Forwarded-For": "203.0.113.21",
					})
				).status,
			).toBe(200);
		expect(
			(
				await send("GET", "/processes", {
					Accept: PROCESSES,
					Authorization: authority,
					"X-Forwarded-For": flooder,
				})
			).status,
		).toBe(200);
		expect((await send("GET", "/processes", { Accept: PROCESSES, "X-Forwarded-For": "203.0.113.22" })).status).toBe(
			200,
		);
	});
});

describe("cross-site requests change nothing (decisions §3)", () => {
	async function sp2Account(): Promise<{ identifier: string; disabled: boolean }> {
		const accounts = await send("GET", "/accounts?size=100", {
			Accept: "application/vnd.registry.accounts.find.v1+json",
			Authorization: demoAuth("ADMIN"),
		});
		const found = (
			JSON.parse(accounts.text).content as { identifier: string; username: string; disabled: boolean }[]
		).find((account) => account.username === demoAccount("SERVICE_PROVIDER", 1).username);
		if (!found) throw new Error("no sp2 account");
		return found;
	}

	test.each([
		["an Origin of another site", { Origin: "https://evil.example" }],
		["a null Origin", { Origin: "null" }],
		["Sec-Fetch-Site: cross-site", { "Sec-Fetch-Site": "cross-site" }],
		["Sec-Fetch-Site: same-site", { "Sec-Fetch-Site": "same-site", Origin: "https://evil.registry.example" }],
	])("a form POST with admin's credentials and %s is 403 and disables nothing", async (_name, headers) => {
		const account = await sp2Account();
		const answer = await send(
			"POST",
			`/accounts/${account.identifier}/disable`,
			{ Authorization: demoAuth("ADMIN"), "Content-Type": "application/x-www-form-urlencoded", ...headers },
			"confirm=yes",
		);
		expect(answer.status).toBe(403);
		expect(JSON.parse(answer.text)).toMatchObject({ status: 403, exception: "AccessDeniedException" });
		expect((await sp2Account()).disabled).toBe(false);
	});

	test("the registry's own pages (same origin) and clients that are not browsers change what they may", async () => {
		const host = new URL(registry.url).host;
		const body = JSON.stringify({ title: "Cross-site check", visible: true });
		const sameOrigin: Record<string, string>[] = [
			{ Origin: `http://${host}`, "Sec-Fetch-Site": "same-origin" },
			{ Origin: `http://${host}` },
			{},
		];
		for (const headers of sameOrigin) {
			const answer = await send(
				"POST",
				"/document-types",
				{
					Authorization: demoAuth("ADMIN"),
					"Content-Type": "application/vnd.registry.document-types.add.v1+json",
					Accept: "application/vnd.registry.document-types.add.v1+json",
					...headers,
				},
				body,
			);
			expect(answer.status).toBe(201);
		}
		// A read is never refused for its origin.
		const read = await send("GET", "/processes", {
			Accept: PROCESSES,
			Origin: "https://evil.example",
			"Sec-Fetch-Site": "cross-site",
		});
		expect(read.status).toBe(200);
	});
});

test("an X-Request-ID of 15 KB or with other characters is not echoed; a well-formed one is", async () => {
	for (const value of ["x".repeat(15_000), "a b", "<script>"]) {
		const answer = await send("GET", "/processes", { Accept: PROCESSES, "X-Request-ID": value });
		expect(answer.status).toBe(200);
		expect(answer.headers["x-request-id"]).not.toBe(value);
		expect(answer.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
	}
	expect(
		(await send("GET", "/processes", { Accept: PROCESSES, "X-Request-ID": "trace-4711" })).headers["x-request-id"],
	).toBe("trace-4711");
});
