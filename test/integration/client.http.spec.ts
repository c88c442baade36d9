/**
 * The typed client against a running registry (issue 9): the example program's steps
 * (examples/register-participant.ts: sp1 registers an organization, then the anonymous
 * lookup shows its processes), and a few typed calls showing media types, paging forms and
 * the error body through the client.
 */
import { createRegistryClient, type RegistryError } from "../../client";
import { registerParticipant } from "../../examples/register-participant";
import { REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";

const BILLING = "55555555-0000-4000-8000-000000000001";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006";

let registry: RunningRegistry;
beforeAll(async () => {
	registry = await startRegistry();
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

describe("the example program: register a participant as sp1, read the lookup", () => {
	test("registers the organization and the lookup shows its processes", async () => {
		const lines: string[] = [];
		const result = await registerParticipant(registry.url, { log: (line) => lines.push(line) });
		expect(result.added).toBe(true);
		expect(result.participant).toMatchObject({
			qualifiedIdentifier: "iso6523-actorid-upis::0192:974760673",
			icd: "0192",
			provider: { title: "Nordlys E-faktura AS" },
		});
		expect(result.lookup.map((process) => process.identifier).sort()).toEqual([BILLING, INVOICE_RESPONSE]);
		expect(lines[0]).toMatch(
			/^registered iso6523-actorid-upis::0192:974760673 as participant [0-9a-f-]{36} \(\/rest\/api\/participants\/[0-9a-f-]{36}\)$/,
		);
		expect(lines).toContain(
			"  Peppol BIS Billing 3.0 (cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0)",
		);
	});

	test("running it again reads the participant sp1 already has", async () => {
		const first = await registerParticipant(registry.url, { log: () => undefined });
		expect(first.added).toBe(false);
		expect(first.lookup.map((process) => process.identifier).sort()).toEqual([BILLING, INVOICE_RESPONSE]);
	});

	test("an invalid organization number fails with the registry's validation error", async () => {
		await expect(
			registerParticipant(registry.url, { organizationIdentifier: "123", log: () => undefined }),
		).rejects.toThrow(/^400 MethodArgumentNotValidException: .*organizationIdentifier: OrganizationNumber/);
	});
});

describe("typed calls through the client", () => {
	const sp1 = () => createRegistryClient(registry.url, { username: "sp1", password: "sp1-demo-password" });

	test("the paged form by default, with the page envelope and the sort", async () => {
		const { data, response } = await sp1().GET("/rest/api/participants", {
			params: { query: { sort: ["name,DESC"], size: 2 } },
		});
		expect(response.status).toBe(200);
		expect(response.headers.get("Content-Type")).toBe(
			"application/vnd.registry.participants.find.v1+json;charset=UTF-8",
		);
		const page = data as { content: { name?: string | null }[]; size: number; totalElements: number };
		expect(page.size).toBe(2);
		expect(page.totalElements).toBeGreaterThanOrEqual(2);
		const names = page.content.map((participant) => participant.name ?? "");
		expect(names).toEqual([...names].sort().reverse());
	});

	test("the array form when asked for by its media type", async () => {
		const { data, response } = await sp1().GET("/rest/api/processes", {
			headers: { Accept: "application/vnd.registry.processes.stream.v1+json" },
		});
		expect(response.status).toBe(200);
		expect(Array.isArray(data)).toBe(true);
	});

	test("an error is the registry's error body, typed", async () => {
		const admin = createRegistryClient(registry.url, { username: "admin", password: "admin-demo-password" });
		const { data, error, response } = await admin.POST("/rest/api/document-types", { body: { title: "" } });
		expect(data).toBeUndefined();
		expect(response.status).toBe(400);
		const body = error as RegistryError;
		expect(body.exception).toBe("MethodArgumentNotValidException");
		expect(body.errors?.[0]).toMatchObject({ objectName: "documentTypeFormDTO", field: "title", code: "NotEmpty" });
	});

	test("wrong credentials are a 401", async () => {
		const wrong = createRegistryClient(registry.url, { username: "sp1", password: "not-the-password" });
		const { error, response } = await wrong.GET("/rest/api/processes");
		expect(response.status).toBe(401);
		expect((error as RegistryError).status).toBe(401);
	});
});
