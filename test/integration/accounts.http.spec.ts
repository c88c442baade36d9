/**
 * Accounts over HTTP (docs/decisions.md "Accounts over HTTP", the registry's extension): every
 * caller reads its own account; an ADMIN lists, adds, disables accounts and sets passwords, and
 * lists and adds service providers, through the same actions as the operator CLI. Each change
 * is in the audit trail; a refusal answers in the spec's error shape and changes nothing.
 * (Which role gets 401/403 on each operation: test/integration/roles.http.spec.ts.)
 */
import request from "supertest";
import { errorAnswerProblems, rawRequest } from "../support/raw-http";
import { basic, demoAccount, demoAuth, startRegistry, type RunningRegistry } from "../support/registry";

const MEDIA = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;
const API = "/rest/api";

let registry: RunningRegistry;
let admin: string;
let sp1: string;
let authority: string;

beforeAll(async () => {
	registry = await startRegistry();
	admin = demoAuth("ADMIN");
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	authority = demoAuth("NETWORK_AUTHORITY");
});

afterAll(async () => {
	await registry?.stop();
});

const unique = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}`;

function post(path: string, authorization: string, media: string, body?: unknown) {
	const call = request(registry.url).post(`${API}${path}`).set("Authorization", authorization).set("Accept", media);
	return body === undefined ? call : call.set("Content-Type", media).send(JSON.stringify(body));
}

async function accountEvents(
	operation: string,
	identifier: string,
): Promise<{ operation: string; resourceId?: string; user?: string; before?: unknown; after?: unknown }[]> {
	const answer = await request(registry.url)
		.get(`${API}/events?operation=${operation}&size=100`)
		.set("Authorization", admin)
		.expect(200);
	return (answer.body.content as { operation: string; resourceId?: string }[]).filter((event) =>
		JSON.stringify(event).includes(identifier),
	);
}

/** The audit trail is fed asynchronously (an outbox): wait until the event is there. */
async function eventually<T>(read: () => Promise<T[]>): Promise<T[]> {
	for (;;) {
		const found = await read();
		if (found.length > 0) return found;
		await new Promise((resolve) => setImmediate(resolve));
	}
}

test("GET /account answers the caller's own account: role, provider and its title, never a password", async () => {
	const answer = await request(registry.url).get(`${API}/account`).set("Authorization", sp1).expect(200);
	expect(answer.headers["content-type"]).toBe(`${MEDIA("account", "get")};charset=UTF-8`);
	const account = demoAccount("SERVICE_PROVIDER", 0);
	expect(answer.body).toEqual({
		identifier: expect.any(String),
		username: account.username,
		role: "SERVICE_PROVIDER",
		serviceProvider: account.serviceProvider,
		serviceProviderTitle: expect.any(String),
		disabled: false,
	});
	expect(JSON.stringify(answer.body)).not.toMatch(/password|scrypt/i);
	await request(registry.url).get(`${API}/account`).expect(401);
	expect(
		(await request(registry.url).get(`${API}/account`).set("Authorization", authority).expect(200)).body,
	).toMatchObject({ role: "NETWORK_AUTHORITY" });
});

test("an ADMIN adds an account (201, Location), it signs in, a new password replaces the old one, disabling it shuts it out; each step is audited", async () => {
	const username = unique("http-account");
	const added = await post("/accounts", admin, MEDIA("accounts", "add"), {
		username,
		password: "first-password-123",
		role: "NETWORK_AUTHORITY",
	}).expect(201);
	expect(added.body).toEqual({
		identifier: expect.any(String),
		username,
		role: "NETWORK_AUTHORITY",
		disabled: false,
	});
	expect(added.headers.location).toBe(`${API}/accounts/${added.body.identifier}`);
	const identifier = added.body.identifier as string;
	await request(registry.url).get(added.headers.location).set("Authorization", admin).expect(200, added.body);
	await request(registry.url)
		.get(`${API}/account`)
		.set("Authorization", basic(username, "first-password-123"))
		.expect(200);

	await request(registry.url)
		.put(`${API}/accounts/${identifier}/password`)
		.set("Authorization", admin)
		.set("Content-Type", MEDIA("accounts", "password"))
		.send(JSON.stringify({ password: "second-password-456" }))
		.expect(200);
	await request(registry.url)
		.get(`${API}/account`)
		.set("Authorization", basic(username, "first-password-123"))
		.expect(401);
	await request(registry.url)
		.get(`${API}/account`)
		.set("Authorization", basic(username, "second-password-456"))
		.expect(200);

	expect(
		(await post(`/accounts/${identifier}/disable`, admin, MEDIA("accounts", "disable")).expect(200)).body,
	).toMatchObject({ username, disabled: true });
	await request(registry.url)
		.get(`${API}/account`)
		.set("Authorization", basic(username, "second-password-456"))
		.expect(401);

	for (const operation of ["addAccount", "resetPassword", "disableAccount"]) {
		const events = await eventually(() => accountEvents(operation, identifier));
		expect(JSON.stringify(events)).not.toMatch(/scrypt|second-password|first-password/);
	}
});

test("the account list pages on the server, sorts by username and filters by role", async () => {
	const page = await request(registry.url)
		.get(`${API}/accounts?sort=username&size=2&page=0`)
		.set("Authorization", admin)
		.expect(200);
	expect(page.body).toMatchObject({ size: 2, number: 0, numberOfElements: 2 });
	expect(page.body.totalElements).toBeGreaterThan(2);
	const names = (page.body.content as { username: string }[]).map((account) => account.username);
	expect([...names].sort()).toEqual(names);
	const providers = await request(registry.url)
		.get(`${API}/accounts?role=SERVICE_PROVIDER&size=100`)
		.set("Authorization", admin)
		.expect(200);
	expect((providers.body.content as { role: string }[]).every((account) => account.role === "SERVICE_PROVIDER")).toBe(
		true,
	);
	await request(registry.url).get(`${API}/accounts?sort=password`).set("Authorization", admin).expect(400);
});

test("an account body that breaks the rules answers 400 with every field error in errors[], and adds nothing", async () => {
	const before = (await request(registry.url).get(`${API}/accounts?size=1`).set("Authorization", admin).expect(200))
		.body.totalElements;
	const answer = await post("/accounts", admin, MEDIA("accounts", "add"), {
		username: "with:colon",
		password: "short",
		role: "ANONYMOUS",
	});
	expect(answer.status).toBe(400);
	const fields = (answer.body.errors as { field: string; objectName: string; code: string }[])
		.map(({ field, objectName, code }) => `${objectName}.${field}:${code}`)
		.sort();
	expect(fields).toEqual([
		"accountFormDTO.password:Size",
		"accountFormDTO.role:Pattern",
		"accountFormDTO.username:Pattern",
	]);
	const raw = await rawRequest(registry.url, {
		method: "POST",
		path: `${API}/accounts`,
		headers: { Authorization: admin, "Content-Type": "application/json" },
		body: JSON.stringify({ username: "x" }),
	});
	expect(raw.status).toBe(400);
	expect(errorAnswerProblems(raw)).toEqual([]);

	const unlinked = await post("/accounts", admin, MEDIA("accounts", "add"), {
		username: unique("unlinked"),
		password: "long-enough-password",
		role: "SERVICE_PROVIDER",
	});
	expect(unlinked.status).toBe(400);
	expect(unlinked.body.errors).toEqual([expect.objectContaining({ field: "serviceProvider", code: "NotNull" })]);
	const taken = await post("/accounts", admin, MEDIA("accounts", "add"), {
		username: demoAccount("ADMIN").username,
		password: "long-enough-password",
		role: "ADMIN",
	});
	expect(taken.status).toBe(409);
	expect(
		(await request(registry.url).get(`${API}/accounts?size=1`).set("Authorization", admin).expect(200)).body
			.totalElements,
	).toBe(before);

	const weak = await request(registry.url)
		.put(
			`${API}/accounts/${(await request(registry.url).get(`${API}/account`).set("Authorization", authority)).body.identifier}/password`,
		)
		.set("Authorization", admin)
		.set("Content-Type", MEDIA("accounts", "password"))
		.send(JSON.stringify({ password: "short" }));
	expect(weak.status).toBe(400);
	expect(weak.body.errors).toEqual([
		expect.objectContaining({ objectName: "passwordFormDTO", field: "password", code: "Size" }),
	]);
	await request(registry.url).get(`${API}/account`).set("Authorization", authority).expect(200);
	await post("/accounts/0f0f0f0f-0000-4000-8000-000000000000/disable", admin, MEDIA("accounts", "disable")).expect(
		404,
	);
});

test("an ADMIN adds a service provider, finds it in the paged list, and an account may then act for it", async () => {
	const title = unique("HTTP Provider");
	const added = await post("/service-providers", admin, MEDIA("service-providers", "add"), { title }).expect(201);
	expect(added.headers.location).toBe(`${API}/service-providers/${added.body.identifier}`);
	const found = await request(registry.url)
		.get(`${API}/service-providers?sort=title&size=1000`)
		.set("Authorization", admin)
		.expect(200);
	// A new provider receives through no access point yet (docs/decisions.md "SMP publishing data").
	expect(found.body.content).toContainEqual({ identifier: added.body.identifier, title, accessPoints: [] });
	const username = unique("provider-account");
	await post("/accounts", admin, MEDIA("accounts", "add"), {
		username,
		password: "provider-password-1",
		role: "SERVICE_PROVIDER",
		serviceProvider: added.body.identifier,
	}).expect(201);
	expect(
		(
			await request(registry.url)
				.get(`${API}/account`)
				.set("Authorization", basic(username, "provider-password-1"))
				.expect(200)
		).body,
	).toMatchObject({
		serviceProvider: added.body.identifier,
		serviceProviderTitle: title,
	});
	await eventually(() => accountEvents("addServiceProvider", added.body.identifier));
	const empty = await post("/service-providers", admin, MEDIA("service-providers", "add"), { title: "" });
	expect(empty.status).toBe(400);
	expect(empty.body.errors).toEqual([
		expect.objectContaining({ objectName: "serviceProviderFormDTO", field: "title", code: "NotEmpty" }),
	]);
	await post("/service-providers", admin, MEDIA("service-providers", "add"), {
		title: "Again",
		identifier: added.body.identifier,
	}).expect(409);
	await post("/service-providers", sp1, MEDIA("service-providers", "add"), { title: "Not mine to add" }).expect(403);
});
