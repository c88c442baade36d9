/**
 * GET /rest/api/organizations/{qualifiedIdentifier}/processes through real HTTP (spec
 * "Organizations", decisions §2 and §4). In one process a participant change is visible by
 * the time the changing request answered; in the cluster it travels over JetStream, so the
 * checks there wait (with a deadline) for it.
 */
import request from "supertest";
import {
	basic,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	TOPOLOGY,
	type RunningRegistry,
} from "../support/registry";

const PLURAL = "application/vnd.registry.organizations.processes.v1+json";
const SINGULAR = "application/vnd.registry.organization.processes.v1+json";
const ADD = "application/vnd.registry.participants.add.v1+json";
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006";
const PUNCH_OUT = "55555555-0000-4000-8000-000000000010"; // visible: false

const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const qid = (organization: string, icd = "0192") => `iso6523-actorid-upis::${icd}:${organization}`;
const lookupPath = (qualifiedIdentifier: string) =>
	`/rest/api/organizations/${encodeURIComponent(qualifiedIdentifier)}/processes`;

let registry: RunningRegistry;
let sp1: string;
let sp2: string;
let admin: string;

beforeAll(async () => {
	registry = await startRegistry();
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	admin = demoAuth("ADMIN");
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry.stop());

function lookup(qualifiedIdentifier: string, auth?: string, accept = PLURAL) {
	const req = request(registry.url).get(lookupPath(qualifiedIdentifier)).set("Accept", accept);
	return auth ? req.set("Authorization", auth) : req;
}

const ids = (body: { identifier: string }[]) => body.map((process) => process.identifier).sort();

/**
 * The lookup answer once it satisfies `accept`: at once in one process (the change was
 * applied before the request answered), within a deadline in the cluster.
 */
async function settled(
	qualifiedIdentifier: string,
	accept: (response: request.Response) => boolean,
	auth?: string,
): Promise<request.Response> {
	let response = await lookup(qualifiedIdentifier, auth);
	if (TOPOLOGY === "one-process") return response;
	const deadline = Date.now() + 10000;
	while (!accept(response) && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 50));
		response = await lookup(qualifiedIdentifier, auth);
	}
	return response;
}

async function add(auth: string, organization: string, processes: string[]) {
	const response = await request(registry.url)
		.post("/rest/api/participants")
		.set("Authorization", auth)
		.set("Accept", ADD)
		.set("Content-Type", ADD)
		.send({
			icd: "0088",
			organizationIdentifier: organization,
			processes: processes.map((identifier) => ({ identifier })),
			contact,
		});
	expect(response.status).toBe(201);
	return response.body as { qualifiedIdentifier: string };
}

let organizationCounter = 0;
const newOrganization = () => `lookup-http-${process.pid}-${organizationCounter++}`;

describe("media types", () => {
	test.each([
		["plural (usage samples)", PLURAL],
		["singular (version table)", SINGULAR],
		["with charset", `${PLURAL};charset=UTF-8`],
		["generic application/json", "application/json"],
	])("the %s media type is accepted", async (_name, accept) => {
		const response = await lookup(qid("991825827"), undefined, accept);
		expect(response.status).toBe(200);
		expect(response.headers["content-type"]).toMatch(
			/^application\/vnd\.registry\.organizations?\.processes\.v1\+json;charset=UTF-8$/,
		);
		expect(ids(response.body)).toEqual([BILLING, INVOICE_RESPONSE]);
	});

	test("another media type is 406", async () => {
		expect(
			(await lookup(qid("991825827"), undefined, "application/vnd.registry.participants.get.v1+json")).status,
		).toBe(406);
	});
});

describe("answers", () => {
	test("an anonymous caller gets full Process objects, the catalog's shape", async () => {
		const response = await lookup(qid("991825827"));
		const billing = response.body.find((process: { identifier: string }) => process.identifier === BILLING);
		const fromCatalog = await request(registry.url)
			.get(`/rest/api/processes/${BILLING}`)
			.set("Accept", "application/vnd.registry.processes.get.v1+json");
		expect(billing).toEqual(fromCatalog.body);
		expect(response.headers["cache-control"]).toBe("no-cache, no-store, max-age=0, must-revalidate");
	});

	test("the answer is the union of every participant's processes of the organization", async () => {
		const organization = newOrganization();
		await add(sp1, organization, [BILLING]);
		await add(sp2, organization, [ORDERING]);
		const response = await settled(
			qid(organization, "0088"),
			(answer) => answer.status === 200 && answer.body.length === 2,
		);
		expect(ids(response.body)).toEqual([BILLING, ORDERING]);
	});

	test("an organization with no participant is 404 NotFoundException with the organization message", async () => {
		const response = await lookup(qid("000000000"));
		expect(response.status).toBe(404);
		expect(response.body).toMatchObject({
			exception: "NotFoundException",
			message: `organization for qualified identifier ${qid("000000000")} cannot be found`,
		});
	});

	test("a path that is not a participant qualified identifier is 400", async () => {
		const response = await request(registry.url)
			.get("/rest/api/organizations/not-an-organization/processes")
			.set("Accept", PLURAL);
		expect(response.status).toBe(400);
	});

	test("hidden processes are left out for anonymous callers; authenticated callers see them", async () => {
		const organization = newOrganization();
		await add(sp1, organization, [PUNCH_OUT, BILLING]);
		const authenticated = await settled(qid(organization, "0088"), (answer) => answer.status === 200, admin);
		expect(ids(authenticated.body)).toEqual([BILLING, PUNCH_OUT]);
		expect(ids((await lookup(qid(organization, "0088"))).body)).toEqual([BILLING]);
	});

	test("an organization whose participants hold only hidden processes answers [] to anonymous callers", async () => {
		const organization = newOrganization();
		await add(sp1, organization, [PUNCH_OUT]);
		const response = await settled(qid(organization, "0088"), (answer) => answer.status === 200);
		expect(response.status).toBe(200);
		expect(response.body).toEqual([]);
	});

	test("wrong credentials are 401 even here", async () => {
		expect((await lookup(qid("991825827"), basic("nobody", "wrong"))).status).toBe(401);
	});
});

describe("changes", () => {
	test("a deleted participant leaves the lookup: 404 when it was the organization's only one", async () => {
		const organization = newOrganization();
		const participant = await add(sp1, organization, [BILLING]);
		expect((await settled(participant.qualifiedIdentifier, (answer) => answer.status === 200)).status).toBe(200);
		const deleted = await request(registry.url)
			.delete(`/rest/api/participants/${encodeURIComponent(participant.qualifiedIdentifier)}`)
			.set("Authorization", sp1)
			.set("Accept", "application/vnd.registry.participants.delete.v1+json");
		expect(deleted.status).toBe(204);
		expect((await settled(participant.qualifiedIdentifier, (answer) => answer.status === 404)).status).toBe(404);
	});

	test("a process renamed in the catalog shows in the lookup", async () => {
		const organization = newOrganization();
		await add(sp1, organization, [ORDERING]);
		await settled(qid(organization, "0088"), (answer) => answer.status === 200);
		const get = await request(registry.url)
			.get(`/rest/api/processes/${ORDERING}`)
			.set("Accept", "application/vnd.registry.processes.get.v1+json");
		const original = get.body;
		const form = {
			domain: original.domain,
			title: "Ordering, renamed",
			alias: original.alias,
			qualifiedIdentifier: original.qualifiedIdentifier,
			restricted: original.restricted,
			visible: original.visible,
			capabilities: original.capabilities.map(({ identifier }: { identifier: string }) => ({ identifier })),
			documentTypes: original.documentTypes.map(({ identifier }: { identifier: string }) => ({ identifier })),
			dependencies: original.dependencies.map(({ identifier }: { identifier: string }) => ({ identifier })),
			requiredICDs: original.requiredICDs,
		};
		const update = (body: object) =>
			request(registry.url)
				.put(`/rest/api/processes/${ORDERING}`)
				.set("Authorization", admin)
				.set("Accept", "application/vnd.registry.processes.update.v1+json")
				.set("Content-Type", "application/json")
				.send(body);
		expect((await update(form)).status).toBe(200);
		try {
			const renamed = await settled(
				qid(organization, "0088"),
				(answer) => answer.body?.[0]?.title === "Ordering, renamed",
			);
			expect(renamed.body[0].title).toBe("Ordering, renamed");
		} finally {
			await update({ ...form, title: original.title });
		}
	});
});
