/**
 * Safe writes (docs/decisions.md "Safe writes"): single records answer an ETag, a GET with a
 * current If-None-Match answers 304, and a PUT or DELETE with an If-Match that no longer names
 * the record answers 412 in the spec's error shape and changes nothing. Runs against the
 * one-process registry and again against the cluster.
 */
import request from "supertest";
import { organizationNumberSource } from "../support/bulk";
import {
	demoAccount,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";

const MEDIA = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;
const BILLING = "55555555-0000-4000-8000-000000000001";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006";
const ACCESS_POINT = "33333333-0000-4000-8000-000000000001";
const INVOICE_DOCUMENT_TYPE = "66666666-0000-4000-8000-000000000001";
const contact = (name: string) => ({ name, email: "kari@example.no", phoneNumber: "+47 22 33 44 55" });
const refs = (...ids: string[]) => ids.map((identifier) => ({ identifier }));
const qid = (organization: string) => `iso6523-actorid-upis::0192:${organization}`;
const organizationNumber = organizationNumberSource(31_000_000);

let registry: RunningRegistry;
let sp1: string;
let sp2: string;
let admin: string;
let app: string;

beforeAll(async () => {
	registry = await startRegistry();
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	admin = demoAuth("ADMIN");
	app = demoAuth("ACCESS_POINT_PROVIDER");
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

async function addParticipant(auth = sp1): Promise<{ identifier: string; organization: string }> {
	const organization = organizationNumber();
	const answer = await request(registry.url)
		.post("/rest/api/participants")
		.set({
			Authorization: auth,
			Accept: MEDIA("participants", "add"),
			"Content-Type": MEDIA("participants", "add"),
		})
		.send({
			icd: "0192",
			organizationIdentifier: organization,
			name: "Safe AS",
			processes: refs(BILLING),
			contact: contact("Kari"),
		});
	expect(answer.status).toBe(201);
	return { identifier: answer.body.identifier, organization };
}

function read(path: string, auth: string | null, accept: string, headers: Record<string, string> = {}) {
	const req = request(registry.url)
		.get(path)
		.set({ Accept: accept, ...headers });
	return auth ? req.set("Authorization", auth) : req;
}

function update(organization: string, name: string, ifMatch?: string) {
	const req = request(registry.url)
		.put(`/rest/api/participants/${encodeURIComponent(qid(organization))}`)
		.set({
			Authorization: sp1,
			Accept: MEDIA("participants", "update"),
			"Content-Type": MEDIA("participants", "update"),
		});
	return (ifMatch ? req.set("If-Match", ifMatch) : req).send({ processes: refs(BILLING), contact: contact(name) });
}

function expectPreconditionFailed(answer: request.Response, path: string): void {
	expect(answer.status).toBe(412);
	expect(answer.headers["content-type"]).toBe("application/json;charset=UTF-8");
	expect(answer.body).toMatchObject({
		status: 412,
		error: "Precondition Failed",
		exception: "PreconditionFailedException",
		path,
	});
	expect(answer.body.message).toMatch(/changed since/);
}

describe("ETag and If-None-Match", () => {
	test("a participant's ETag is stable while it is unchanged, 304 for a current If-None-Match, and new after a change", async () => {
		const { identifier, organization } = await addParticipant();
		const path = `/rest/api/participants/${identifier}`;
		const first = await read(path, sp1, MEDIA("participants", "get"));
		expect(first.status).toBe(200);
		const tag = first.headers.etag as string;
		expect(tag).toMatch(/^"[A-Za-z0-9_-]+"$/);
		const again = await read(path, sp1, MEDIA("participants", "get"));
		expect(again.headers.etag).toBe(tag);

		const notModified = await read(path, sp1, MEDIA("participants", "get"), { "If-None-Match": tag });
		expect(notModified.status).toBe(304);
		expect(notModified.text ?? "").toBe("");
		expect(notModified.headers.etag).toBe(tag);
		expect(notModified.headers["cache-control"]).toBe("no-cache, no-store, max-age=0, must-revalidate");
		// Weak comparison, lists and * (RFC 9110 §13.1.2).
		expect(
			(await read(path, sp1, MEDIA("participants", "get"), { "If-None-Match": `"other", W/${tag}` })).status,
		).toBe(304);
		expect((await read(path, sp1, MEDIA("participants", "get"), { "If-None-Match": "*" })).status).toBe(304);

		// The same participant by its qualified identifier: the same representation, the same tag.
		expect(
			(
				await read(
					`/rest/api/participants/${encodeURIComponent(qid(organization))}`,
					sp1,
					MEDIA("participants", "get"),
				)
			).headers.etag,
		).toBe(tag);

		const updated = await update(organization, "Ola");
		expect(updated.status).toBe(200);
		expect(updated.headers.etag).toMatch(/^".+"$/);
		expect(updated.headers.etag).not.toBe(tag);
		const fresh = await read(path, sp1, MEDIA("participants", "get"), { "If-None-Match": tag });
		expect(fresh.status).toBe(200);
		expect(fresh.body.contact.name).toBe("Ola");
		expect(fresh.headers.etag).toBe(updated.headers.etag);
	});

	test("a refused read is refused before any 304: no credentials 401, another provider's participant 404", async () => {
		const { identifier } = await addParticipant();
		const path = `/rest/api/participants/${identifier}`;
		const tag = (await read(path, sp1, MEDIA("participants", "get"))).headers.etag as string;
		expect((await read(path, null, MEDIA("participants", "get"), { "If-None-Match": tag })).status).toBe(401);
		expect((await read(path, sp2, MEDIA("participants", "get"), { "If-None-Match": tag })).status).toBe(404);
	});

	test("processes, document types and access points carry ETags too", async () => {
		for (const [path, auth, accept] of [
			[`/rest/api/processes/${INVOICE_RESPONSE}`, null, MEDIA("processes", "get")],
			[`/rest/api/document-types/${INVOICE_DOCUMENT_TYPE}`, null, MEDIA("document-types", "get")],
			[`/rest/api/accessPoints/${ACCESS_POINT}`, app, MEDIA("accesspoints", "get")],
		] as const) {
			const first = await read(path, auth, accept);
			expect(first.status).toBe(200);
			expect(first.headers.etag).toMatch(/^".+"$/);
			expect((await read(path, auth, accept, { "If-None-Match": first.headers.etag })).status).toBe(304);
		}
	});

	test("lists carry no ETag", async () => {
		const list = await read("/rest/api/processes", null, MEDIA("processes", "find"));
		expect(list.status).toBe(200);
		expect(list.headers.etag).toBeUndefined();
	});
});

describe("If-Match", () => {
	test("two clients updating one participant from the same ETag: one 200, one 412, and the store holds the winner's state", async () => {
		const { identifier, organization } = await addParticipant();
		const path = `/rest/api/participants/${identifier}`;
		const tag = (await read(path, sp1, MEDIA("participants", "get"))).headers.etag as string;
		const [first, second] = await Promise.all([
			update(organization, "Winner A", tag),
			update(organization, "Winner B", tag),
		]);
		expect([first.status, second.status].sort()).toEqual([200, 412]);
		const winner = first.status === 200 ? first : second;
		const loser = first.status === 200 ? second : first;
		expectPreconditionFailed(loser, `/rest/api/participants/${encodeURIComponent(qid(organization))}`);
		const stored = await read(path, sp1, MEDIA("participants", "get"));
		expect(stored.body.contact.name).toBe(winner.body.contact.name);
		expect(stored.headers.etag).toBe(winner.headers.etag);
	});

	test("a current If-Match (or *) lets the change through; a stale one changes nothing", async () => {
		const { identifier, organization } = await addParticipant();
		const path = `/rest/api/participants/${identifier}`;
		const tag = (await read(path, sp1, MEDIA("participants", "get"))).headers.etag as string;
		const changed = await update(organization, "Current", `"other", ${tag}`);
		expect(changed.status).toBe(200);
		const stale = await update(organization, "Stale", tag);
		expectPreconditionFailed(stale, `/rest/api/participants/${encodeURIComponent(qid(organization))}`);
		expect((await read(path, sp1, MEDIA("participants", "get"))).body.contact.name).toBe("Current");
		expect((await update(organization, "Any", "*")).status).toBe(200);
		// W/ tags never match If-Match (strong comparison).
		const current = (await read(path, sp1, MEDIA("participants", "get"))).headers.etag as string;
		expect((await update(organization, "Weak", `W/${current}`)).status).toBe(412);
	});

	test("a malformed If-Match is 400 and changes nothing", async () => {
		const { identifier, organization } = await addParticipant();
		const answer = await update(organization, "Malformed", "not-a-tag");
		expect(answer.status).toBe(400);
		expect(answer.body.exception).toBe("MethodArgumentTypeMismatchException");
		expect(
			(await read(`/rest/api/participants/${identifier}`, sp1, MEDIA("participants", "get"))).body.contact.name,
		).toBe("Kari");
	});

	test("DELETE with a stale If-Match keeps the participant; with the current one removes it", async () => {
		const { identifier, organization } = await addParticipant();
		const path = `/rest/api/participants/${identifier}`;
		const tag = (await read(path, sp1, MEDIA("participants", "get"))).headers.etag as string;
		expect((await update(organization, "Changed", tag)).status).toBe(200);
		const remove = (ifMatch: string) =>
			request(registry.url)
				.delete(path)
				.set({ Authorization: sp1, Accept: MEDIA("participants", "delete"), "If-Match": ifMatch });
		expectPreconditionFailed(await remove(tag), path);
		expect((await read(path, sp1, MEDIA("participants", "get"))).status).toBe(200);
		const current = (await read(path, sp1, MEDIA("participants", "get"))).headers.etag as string;
		expect((await remove(current)).status).toBe(204);
		expect((await read(path, sp1, MEDIA("participants", "get"))).status).toBe(404);
	});

	test("a transfer changes the ETag, and a transfer with a stale If-Match moves nothing", async () => {
		const { identifier, organization } = await addParticipant();
		const path = `/rest/api/participants/${identifier}`;
		const tag = (await read(path, admin, MEDIA("participants", "get"))).headers.etag as string;
		expect((await update(organization, "Before transfer", tag)).status).toBe(200);
		const sp2Provider = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;
		const transfer = (ifMatch: string) =>
			request(registry.url)
				.put(`/rest/api/participants/${encodeURIComponent(qid(organization))}/transfer/${sp2Provider}`)
				.set({ Authorization: sp1, Accept: MEDIA("participants", "transfer"), "If-Match": ifMatch });
		expect((await transfer(tag)).status).toBe(412);
		expect((await read(path, sp1, MEDIA("participants", "get"))).status).toBe(200);
		const current = (await read(path, admin, MEDIA("participants", "get"))).headers.etag as string;
		expect((await transfer(current)).status).toBe(200);
		const moved = await read(path, admin, MEDIA("participants", "get"));
		expect(moved.body.provider.identifier).toBe(sp2Provider);
		expect(moved.headers.etag).not.toBe(current);
	});

	test("catalog records: a stale If-Match on PUT and DELETE is 412; a current one goes through", async () => {
		const created = await request(registry.url)
			.post("/rest/api/processes")
			.set({ Authorization: admin, Accept: MEDIA("processes", "add"), "Content-Type": MEDIA("processes", "add") })
			.send({ domain: "Safe writes", title: "Original" });
		expect(created.status).toBe(201);
		const path = `/rest/api/processes/${created.body.identifier}`;
		const tag = (await read(path, admin, MEDIA("processes", "get"))).headers.etag as string;
		const put = (title: string, ifMatch: string) =>
			request(registry.url)
				.put(path)
				.set({
					Authorization: admin,
					Accept: MEDIA("processes", "update"),
					"Content-Type": MEDIA("processes", "update"),
					"If-Match": ifMatch,
				})
				.send({ domain: "Safe writes", title });
		const changed = await put("First", tag);
		expect(changed.status).toBe(200);
		expect(changed.headers.etag).not.toBe(tag);
		expectPreconditionFailed(await put("Second", tag), path);
		expect((await read(path, admin, MEDIA("processes", "get"))).body.title).toBe("First");
		const remove = (ifMatch: string) =>
			request(registry.url)
				.delete(path)
				.set({ Authorization: admin, Accept: MEDIA("processes", "delete"), "If-Match": ifMatch });
		expectPreconditionFailed(await remove(tag), path);
		expect((await remove(changed.headers.etag as string)).status).toBe(204);
	});

	test("without If-Match, writes behave as before (last write wins)", async () => {
		const { identifier, organization } = await addParticipant();
		expect((await update(organization, "One")).status).toBe(200);
		expect((await update(organization, "Two")).status).toBe(200);
		expect(
			(await read(`/rest/api/participants/${identifier}`, sp1, MEDIA("participants", "get"))).body.contact.name,
		).toBe("Two");
	});

	test("the answer the gateway holds for a read carries the same tag and honours If-None-Match", async () => {
		const { identifier } = await addParticipant();
		const path = `/rest/api/participants/${identifier}`;
		const tags = new Set<string>();
		for (let i = 0; i < 5; i++)
			tags.add((await read(path, sp1, MEDIA("participants", "get"))).headers.etag as string);
		expect(tags.size).toBe(1);
		expect((await read(path, sp1, MEDIA("participants", "get"), { "If-None-Match": [...tags][0] })).status).toBe(
			304,
		);
		// And the lookup, which is held too, has no ETag (it is not a single record).
		expect(
			(
				await read(
					`/rest/api/organizations/${encodeURIComponent(qid("991825827"))}/processes`,
					null,
					MEDIA("organizations", "processes"),
				)
			).headers.etag,
		).toBeUndefined();
	});
});
