/**
 * OAuth 2.0 client credentials (issue 44, decisions §15), against a real authorization server
 * (npm oidc-provider in a child process, test/support/oauth-issuer.ts), on both topologies:
 *
 *   - the issuer unreachable at start: readiness 200 saying so, Basic works, Bearer 401; its keys
 *     are taken once it answers, without a restart; so is a new key (kid) later
 *   - a token acts as the account mapped to its client: role, ownership, the audit flag
 *   - PUT /accounts/{username}/oauth-client (ADMIN): set, 409 for another account's client, null clears
 *   - every refused token: 401 with `Bearer error="invalid_token"` (403 insufficient_scope), the
 *     spec's error body without a stack or key; none locks an account; refusals spend the address's rate
 *
 * In the distributed project the gateway, the lookup node and every service are processes of
 * their own: the token's caller (its `viaToken` flag signed with it) crosses the transporter.
 */
import { organizationNumberSource } from "../support/bulk";
import { ONE_PROCESS_PER_SERVICE, type Cluster } from "../support/cluster";
import { startIssuer, type IssuerClient, type TestIssuer } from "../support/oauth-issuer";
import { pollUntil } from "../support/poll";
import { errorAnswerProblems, rawRequest, type RawAnswer } from "../support/raw-http";
import { demoAuth, demoSeed, REGISTRY_START_TIMEOUT_MS, startRegistry, TOPOLOGY } from "../support/registry";

const SP1_CLIENT: IssuerClient = { id: "sp1-invoicing-system", secret: "sp1-secret-0123456789" };
const ADMIN_CLIENT: IssuerClient = { id: "admin-automation", secret: "admin-secret-0123456789" };
const UNMAPPED_CLIENT: IssuerClient = { id: "nobody-system", secret: "nobody-secret-0123456789" };
const DISABLED_CLIENT: IssuerClient = { id: "retired-system", secret: "retired-secret-0123456789" };
const RATE_LIMIT = 120;
const NORDLYS = "77777777-0000-4000-8000-000000000001"; // sp1's
const HAVBLIKK = "77777777-0000-4000-8000-000000000003"; // sp2's
const NORDLYS_ORGANIZATION = "iso6523-actorid-upis::0192:991825827";
const BILLING = "55555555-0000-4000-8000-000000000001";
const MEDIA = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;

let issuer: TestIssuer;
let gateway: string;
let lookupNode: string;
let stop: () => Promise<void>;
const admin = demoAuth("ADMIN");
const sp1 = demoAuth("SERVICE_PROVIDER", 0);

function seed(): Record<string, unknown> {
	const demo = demoSeed();
	const accounts = (demo.accounts as Record<string, unknown>[]).map((account) =>
		account.username === "sp1" ? { ...account, oauthClientId: SP1_CLIENT.id } : account,
	);
	accounts.push({
		username: "retired",
		password: "retired-password-123",
		role: "SERVICE_PROVIDER",
		serviceProvider: "11111111-0000-4000-8000-000000000002",
		oauthClientId: DISABLED_CLIENT.id,
	});
	return { ...demo, accounts };
}

beforeAll(async () => {
	// The issuer holds its port from the start but cuts every connection until `open()`.
	issuer = await startIssuer([SP1_CLIENT, ADMIN_CLIENT, UNMAPPED_CLIENT, DISABLED_CLIENT]);
	const env = {
		OAUTH_ISSUER: issuer.url,
		OAUTH_AUDIENCE: "urn:registry",
		OAUTH_KEYS_REFRESH_SECONDS: "1",
		RATE_LIMIT: String(RATE_LIMIT),
		TRUST_PROXY: "127.0.0.1,::1",
		AUTH_USER_MAX_FAILURES: "2",
		AUTH_ADDRESS_MAX_FAILURES: "3",
	};
	if (TOPOLOGY === "distributed") {
		const { startCluster, PROCESS_READY_TIMEOUT_MS } =
			// eslint-disable-next-line @typescript-eslint/no-require-imports
			require("../support/cluster") as typeof import("../support/cluster");
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const { importSeed } = require("../../src/exchange/seed") as typeof import("../../src/exchange/seed");
		const cluster: Cluster = await startCluster({ env, topology: ONE_PROCESS_PER_SERVICE });
		stop = () => cluster.stop();
		await cluster.broker.waitForServices(
			["accounts", "catalog", "accessPoints", "participants", "lookup", "audit"],
			PROCESS_READY_TIMEOUT_MS,
		);
		await importSeed(cluster.broker, seed());
		gateway = cluster.url;
		lookupNode = `http://127.0.0.1:${(cluster.processes.get("lookup") as { port: number }).port}`;
	} else {
		const registry = await startRegistry({ env, seed: seed() });
		stop = () => registry.stop();
		gateway = lookupNode = registry.url;
	}
}, REGISTRY_START_TIMEOUT_MS);

afterAll(async () => {
	await stop?.();
	await issuer?.stop();
});

function call(
	authorization: string | null,
	path: string,
	options: { method?: string; accept?: string; body?: unknown; from?: string; base?: string } = {},
): Promise<RawAnswer> {
	const headers: Record<string, string> = {};
	if (authorization !== null) headers.authorization = authorization;
	if (options.accept) headers.accept = options.accept;
	if (options.from) headers["x-forwarded-for"] = options.from;
	if (options.body !== undefined) headers["content-type"] = "application/json";
	return rawRequest(options.base ?? gateway, {
		method: options.method ?? "GET",
		path,
		headers,
		body: options.body === undefined ? undefined : JSON.stringify(options.body),
	});
}

const ownAccount = (authorization: string | null, base = gateway) => call(authorization, "/rest/api/account", { base });
const bearer = (token: string) => `Bearer ${token}`;

/** A refusal as §15 says: status, challenge, the spec's error body, nothing of a key or a stack. */
function expectRefused(answer: RawAnswer, status: 401 | 403 = 401): void {
	expect({ status: answer.status, challenge: answer.headers["www-authenticate"] }).toEqual({
		status,
		challenge:
			status === 401 ? 'Bearer error="invalid_token"' : 'Bearer error="insufficient_scope", scope="registry"',
	});
	expect(errorAnswerProblems(answer)).toEqual([]);
	expect(JSON.parse(answer.text).exception).toBe(
		status === 401 ? "AuthenticationException" : "AccessDeniedException",
	);
	expect(answer.text).not.toMatch(/BEGIN|"kty"|"n":|stack/i);
}

test("the issuer unreachable at start: ready, Basic works, Bearer 401; its keys are taken once it answers", async () => {
	try {
		const ready = await call(null, "/health/ready");
		expect(ready.status).toBe(200);
		expect(JSON.parse(ready.text).details.oauthIssuer).toMatch(/^issuer unreachable/);
		// The first Basic request derives sp1's password (scrypt): on a loaded machine a cluster may answer it 503 (timeout).
		await pollUntil("Basic", 60_000, async () => ((await ownAccount(sp1)).status === 200 ? true : undefined));
		expectRefused(await ownAccount(bearer(await issuer.sign({ client_id: SP1_CLIENT.id })))); // a good token, no keys
	} finally {
		await issuer.open(); // the tests below need the issuer, whatever happened above
	}
	const token = await issuer.token(SP1_CLIENT, { scope: "registry" });
	for (const base of [gateway, lookupNode]) {
		await pollUntil("the issuer's keys", 60_000, async () => {
			const answer = await call(bearer(token), `/rest/api/organizations/${NORDLYS_ORGANIZATION}/processes`, {
				base,
			});
			return answer.status === 200 ? answer : undefined;
		});
	}
	expect(JSON.parse((await call(null, "/health/ready")).text).details).toEqual({ oauthIssuer: "keys loaded" });
});

test("a token acts as the account mapped to its client: its role and its own participants only", async () => {
	const token = bearer(await issuer.token(SP1_CLIENT, { scope: "registry" }));
	const account = await ownAccount(token);
	expect(account.status).toBe(200);
	expect(JSON.parse(account.text)).toMatchObject({
		username: "sp1",
		role: "SERVICE_PROVIDER",
		oauthClientId: SP1_CLIENT.id,
	});
	expect((await call(token, `/rest/api/participants/${NORDLYS}`)).status).toBe(200);
	expect((await call(token, `/rest/api/participants/${HAVBLIKK}`)).status).toBe(404); // another provider's
	const forAdmins = await call(token, "/rest/api/accounts");
	expect(forAdmins.status).toBe(403);
	expect(forAdmins.headers["www-authenticate"]).toBeUndefined();
});

test("a change made with a token is audited as the account, flagged viaToken; one made with Basic is not", async () => {
	const organizationNumber = organizationNumberSource(44_000_000);
	const add = (authorization: string) =>
		call(authorization, "/rest/api/participants", {
			method: "POST",
			accept: MEDIA("participants", "add"),
			body: {
				icd: "0192",
				organizationIdentifier: organizationNumber(),
				name: "Tokenfirma AS",
				processes: [{ identifier: BILLING }],
				contact: { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" },
			},
		});
	const withToken = await add(bearer(await issuer.token(SP1_CLIENT, { scope: "registry" })));
	const withPassword = await add(sp1);
	expect([withToken.status, withPassword.status]).toEqual([201, 201]);
	const actorOf = (participant: string) =>
		pollUntil("the audit record", 60_000, async () => {
			const answer = await call(admin, `/rest/api/events?participant=${participant}&operation=addParticipant`);
			return JSON.parse(answer.text).content?.[0]?.actor;
		});
	expect(await actorOf(JSON.parse(withToken.text).identifier)).toEqual({
		username: "sp1",
		role: "SERVICE_PROVIDER",
		serviceProvider: "11111111-0000-4000-8000-000000000001",
		viaToken: true,
	});
	expect(await actorOf(JSON.parse(withPassword.text).identifier)).not.toHaveProperty("viaToken");
});

test("PUT /accounts/{username}/oauth-client: ADMIN maps a client (its tokens act as ADMIN), 409 for another's, null clears", async () => {
	const put = (authorization: string, username: string, body: unknown) =>
		call(authorization, `/rest/api/accounts/${username}/oauth-client`, {
			method: "PUT",
			accept: MEDIA("accounts", "oauth-client"),
			body,
		});
	const adminToken = bearer(await issuer.token(ADMIN_CLIENT, { scope: "registry" }));
	expectRefused(await ownAccount(adminToken)); // not mapped yet
	const set = await put(admin, "admin", { oauthClientId: ADMIN_CLIENT.id });
	expect(set.status).toBe(200);
	expect(JSON.parse(set.text)).toMatchObject({ username: "admin", oauthClientId: ADMIN_CLIENT.id });
	expect((await call(adminToken, "/rest/api/accounts")).status).toBe(200);

	const taken = await put(admin, "sp2", { oauthClientId: SP1_CLIENT.id });
	expect([taken.status, JSON.parse(taken.text).exception]).toEqual([409, "ConflictException"]);
	expect((await put(sp1, "sp2", { oauthClientId: "x" })).status).toBe(403);
	expect((await put(admin, "sp2", {})).status).toBe(400);
	expect((await put(admin, "sp2", { oauthClientId: "two words" })).status).toBe(400);
	expect((await put(admin, "no-such-account", { oauthClientId: "x" })).status).toBe(404);

	const cleared = await put(admin, "admin", { oauthClientId: null });
	expect(cleared.status).toBe(200);
	expect(JSON.parse(cleared.text)).not.toHaveProperty("oauthClientId");
	expectRefused(await ownAccount(adminToken)); // the change reached the gateway's cache at once
	const audited = await pollUntil("the audit records", 60_000, async () => {
		const events = JSON.parse((await call(admin, "/rest/api/events?operation=setOAuthClient")).text).content;
		return events?.length === 2 ? events : undefined;
	});
	expect(
		audited.map((event: { after: { oauthClientId?: string } }) => event.after.oauthClientId ?? null).sort(),
	).toEqual([ADMIN_CLIENT.id, null]);
});

describe("refused tokens: 401 invalid_token (403 insufficient_scope), the spec's body, nothing of the key", () => {
	const now = () => Math.floor(Date.now() / 1000);
	const cases: [string, () => Promise<string>][] = [
		["another issuer", () => issuer.sign({ client_id: SP1_CLIENT.id, iss: "https://issuer.example" })],
		["another audience", () => issuer.token(SP1_CLIENT, { scope: "registry", resource: "urn:another" })],
		[
			"a bad signature",
			async () => {
				const [head, body, signature] = (await issuer.token(SP1_CLIENT, { scope: "registry" })).split(".");
				const flipped = signature[10] === "A" ? "B" : "A";
				return `${head}.${body}.${signature.slice(0, 10)}${flipped}${signature.slice(11)}`;
			},
		],
		[
			"alg none",
			async () => {
				const [, body] = (await issuer.token(SP1_CLIENT, { scope: "registry" })).split(".");
				return `${Buffer.from('{"alg":"none","typ":"at+jwt"}').toString("base64url")}.${body}.`;
			},
		],
		[
			"an HMAC",
			() => issuer.sign({ client_id: SP1_CLIENT.id }, { alg: "HS256" }, new TextEncoder().encode("k".repeat(32))),
		],
		["expired", () => issuer.sign({ client_id: SP1_CLIENT.id, iat: now() - 600, exp: now() - 120 })],
		["not valid yet", () => issuer.sign({ client_id: SP1_CLIENT.id, nbf: now() + 600 })],
		["a key the issuer does not publish", () => issuer.sign({ client_id: SP1_CLIENT.id }, { kid: "key-unknown" })],
		["an unknown client", () => issuer.token(UNMAPPED_CLIENT, { scope: "registry" })],
		["malformed", async () => "not-a-jwt"],
		["malformed parts", async () => "e30.e30.e30"],
		["12 KB", async () => "a".repeat(12 * 1024)],
	];
	test.each(cases)("%s", async (_name, token) => {
		expectRefused(await ownAccount(bearer(await token())));
	});

	test("a disabled account's client", async () => {
		const token = bearer(await issuer.token(DISABLED_CLIENT, { scope: "registry" }));
		expect((await ownAccount(token)).status).toBe(200);
		const account = JSON.parse((await ownAccount(token)).text).identifier;
		expect((await call(admin, `/rest/api/accounts/${account}/disable`, { method: "POST" })).status).toBe(200);
		expectRefused(await ownAccount(token));
	});

	test("no scope: 403 insufficient_scope", async () => {
		expectRefused(await ownAccount(bearer(await issuer.token(SP1_CLIENT))), 403);
	});

	test("no credentials: both challenges; a header over Node's limit stays 431", async () => {
		const none = await ownAccount(null);
		expect([none.status, none.headers["www-authenticate"]]).toEqual([
			401,
			'Basic realm="registry", Bearer realm="registry"',
		]);
		expect((await ownAccount(bearer("a".repeat(20 * 1024)))).status).toBe(431);
	});

	test("refused tokens lock no account and are rate limited per address like anonymous requests", async () => {
		const from = "10.44.0.1";
		const expired = bearer(await issuer.sign({ client_id: SP1_CLIENT.id, iat: now() - 600, exp: now() - 120 }));
		for (let i = 0; i < 5; i++) expectRefused(await call(expired, "/rest/api/account", { from }));
		expect((await call(sp1, "/rest/api/account", { from })).status).toBe(200); // AUTH_*_MAX_FAILURES are 2 and 3

		let answer: RawAnswer | undefined;
		for (let i = 0; i <= 2 * RATE_LIMIT && answer?.status !== 429; i++)
			answer = await call(expired, "/rest/api/account", { from: "10.44.0.2" });
		expect(answer?.status).toBe(429);
		expect(errorAnswerProblems(answer as RawAnswer)).toEqual([]);
		expect((await call(sp1, "/rest/api/account", { from: "10.44.0.2" })).status).toBe(200); // sp1's own rate
	});
});

test("a new key at the issuer (a new kid) is taken without a restart; tokens of the old one still verify", async () => {
	const before = bearer(await issuer.token(SP1_CLIENT, { scope: "registry" }));
	const kid = await issuer.rotate();
	const after = await issuer.token(SP1_CLIENT, { scope: "registry" });
	expect(JSON.parse(Buffer.from(after.split(".")[0], "base64url").toString()).kid).toBe(kid);
	// A refetch at most once per OAUTH_KEYS_REFRESH_SECONDS (1 s here): the first try may come too soon.
	await pollUntil("the new key", 60_000, async () =>
		(await ownAccount(bearer(after))).status === 200 ? true : undefined,
	);
	expect((await ownAccount(before)).status).toBe(200);
});
