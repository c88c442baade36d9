/**
 * Joining the network (decisions §14) against a stand-in SML and Directory the test starts
 * (HTTPS demanding the test CA's client certificate, SOAP bodies checked against the busdox
 * WSDLs): the SMP record at start, organizations in the SML while they have a participant
 * (CreateList for many), faults and an outage and their end, reconciliation of a lost and a
 * stray record, the Directory told once the lookup answers the new card, and
 * GET /rest/api/network/{qualifiedIdentifier}. Runs on the one-process and distributed projects.
 */
import request from "supertest";
import { participantDnsNames } from "../../services/network/dns-names";
import { pollUntil } from "../support/poll";

import {
	demoAuth,
	demoSeed,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";
import {
	makeTestPki,
	missingOpenssl,
	networkEnv,
	StandInDirectory,
	StandInSml,
	type TestPki,
} from "../support/stand-in-network";

const suite = missingOpenssl().length ? describe.skip : describe;

const ADD = "application/vnd.registry.participants.add.v1+json";
const NETWORK = "application/vnd.registry.network.get.v1+json";
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const qid = (organization: string, icd = "0192") => `iso6523-actorid-upis::${icd}:${organization}`;
/** Valid MOD11 organization numbers no demo participant uses. */
const ORGANIZATIONS = ["971000007", "971000015", "971000023"];
const DEADLINE_MS = 90_000;

/** Waits (with a deadline) until `check` holds. */
const until = (what: string, check: () => Promise<boolean>) =>
	pollUntil(what, DEADLINE_MS, async () => ((await check()) ? true : undefined));

let pki: TestPki;
let sml: StandInSml;
let directory: StandInDirectory;
let registry: RunningRegistry;
let sp1: string;
let sp2: string;
let admin: string;

interface NetworkState {
	sml: { state: string; message: string | null; at: string | null };
	directory: { state: string; message: string | null; at: string | null };
	dns: { naptr: string; cname: string };
}

function networkOf(organization: string, auth = admin) {
	return request(registry.url)
		.get(`/rest/api/network/${encodeURIComponent(qid(organization))}`)
		.set("Accept", NETWORK)
		.set("Authorization", auth);
}

async function stateOnceTrue(organization: string, done: (state: NetworkState) => boolean): Promise<NetworkState> {
	let last: NetworkState | null = null;
	await until(`the network state of ${organization}`, async () => {
		const answer = await networkOf(organization);
		last = answer.status === 200 ? (answer.body as NetworkState) : null;
		return last !== null && done(last);
	});
	return last as unknown as NetworkState;
}

function add(organization: string, auth = sp1, name = "Fjellbekk Regnskap AS", process = BILLING) {
	return request(registry.url)
		.post("/rest/api/participants")
		.set("Authorization", auth)
		.set("Content-Type", ADD)
		.set("Accept", ADD)
		.send({
			icd: "0192",
			organizationIdentifier: organization,
			name,
			contact,
			processes: [{ identifier: process }],
		});
}

function remove(organization: string, auth = sp1) {
	return request(registry.url)
		.delete(`/rest/api/participants/${encodeURIComponent(qid(organization))}`)
		.set("Authorization", auth);
}

suite("the SML and the Directory hear of the registry's participants", () => {
	beforeAll(async () => {
		pki = makeTestPki();
		sml = await new StandInSml(pki).start();
		directory = await new StandInDirectory(pki).start();
		registry = await startRegistry({ env: { ...networkEnv(pki, sml, directory), SML_SYNC_INTERVAL: "0" } });
		directory.smpUrl = registry.url;
		sp1 = demoAuth("SERVICE_PROVIDER", 0);
		sp2 = demoAuth("SERVICE_PROVIDER", 1);
		admin = demoAuth("ADMIN");
	}, REGISTRY_START_TIMEOUT_MS);
	afterAll(async () => {
		await registry?.stop();
		await sml?.stop();
		await directory?.stop();
	});

	it("at start the registry creates its SMP record with SMP_PUBLIC_URL and SML_PHYSICAL_ADDRESS", async () => {
		await until("the SMP record", async () => sml.smp !== null);
		expect(sml.smp).toEqual({ logicalAddress: "https://smp.registry.example", physicalAddress: "192.0.2.10" });
	});

	it("the seeded organizations reach the SML in lists, not one call each", async () => {
		const seeded = new Set(
			(demoSeed().participants as { icd: string; organizationIdentifier: string }[]).map((participant) =>
				`${participant.icd}:${participant.organizationIdentifier}`.toLowerCase(),
			),
		);
		await until("the seeded organizations in the SML", async () =>
			[...seeded].every((key) => sml.participants.has(key)),
		);
		expect(sml.count("CreateList")).toBeGreaterThanOrEqual(1);
		expect(sml.count("CreateParticipantIdentifier")).toBeLessThan(seeded.size);
	});

	it("an added participant's organization is registered, with its DNS names", async () => {
		const [organization] = ORGANIZATIONS;
		expect((await add(organization)).status).toBe(201);
		const state = await stateOnceTrue(organization, (s) => s.sml.state === "registered");
		expect(sml.participants.has(`0192:${organization}`)).toBe(true);
		expect(state.dns).toEqual(participantDnsNames(`0192:${organization}`, "participant.sml.prod.tech.peppol.org"));
		expect(state.dns.naptr).toMatch(
			/^[a-z2-7]{52}\.iso6523-actorid-upis\.participant\.sml\.prod\.tech\.peppol\.org$/,
		);
		expect(state.dns.cname).toMatch(
			/^B-[0-9a-f]{32}\.iso6523-actorid-upis\.participant\.sml\.prod\.tech\.peppol\.org$/,
		);
	});

	it("the Directory is told once the lookup answers the new card, and fetches a card naming the participant", async () => {
		const [organization] = ORGANIZATIONS;
		await stateOnceTrue(organization, (s) => s.directory.state === "registered");
		const notices = directory.about(qid(organization));
		expect(notices.length).toBeGreaterThanOrEqual(1);
		expect(notices[0].method).toBe("PUT");
		expect(notices[0].card).toContain("<Name>Fjellbekk Regnskap AS</Name>");
	});

	it("a second provider's participant keeps the organization in the SML when the first one's goes", async () => {
		const [organization] = ORGANIZATIONS;
		const second = await add(organization, sp2, "Fjellbekk Regnskap AS avd. Bergen", ORDERING);
		expect([second.status, second.body.message]).toEqual([201, undefined]);
		expect((await remove(organization)).status).toBe(204);
		await stateOnceTrue(organization, (s) => s.directory.state === "registered" && s.sml.state === "registered");
		expect(sml.participants.has(`0192:${organization}`)).toBe(true);
		await until("the Directory told of the card without the deleted participant", async () =>
			directory
				.about(qid(organization))
				.some(
					(notice) =>
						notice.card?.includes("avd. Bergen") === true &&
						!notice.card.includes("<Name>Fjellbekk Regnskap AS</Name>"),
				),
		);
	});

	it("the last participant deleted: deleted from the SML and the Directory, and the network answers 404", async () => {
		const [organization] = ORGANIZATIONS;
		expect((await remove(organization, sp2)).status).toBe(204);
		await until("the organization deleted from the SML", async () => !sml.participants.has(`0192:${organization}`));
		await until("the Directory told of the deletion", async () =>
			directory.about(qid(organization)).some((notice) => notice.method === "DELETE"),
		);
		await until(
			"the organization's network state gone",
			async () => (await networkOf(organization)).status === 404,
		);
	});

	it("an SML fault shows as failing with the SML's message, and the delivery goes through once the SML accepts", async () => {
		const organization = ORGANIZATIONS[1];
		sml.refused.set(`0192:${organization}`, {
			fault: "UnauthorizedFault",
			message: "The certificate is not allowed here",
		});
		expect((await add(organization)).status).toBe(201);
		const failing = await stateOnceTrue(organization, (s) => s.sml.state === "failing");
		expect(failing.sml.message).toContain("The certificate is not allowed here");
		sml.refused.delete(`0192:${organization}`);
		await stateOnceTrue(organization, (s) => s.sml.state === "registered");
		expect(sml.participants.has(`0192:${organization}`)).toBe(true);
	});

	it("during an SML outage the organization is failing; after it, registered", async () => {
		const organization = ORGANIZATIONS[2];
		sml.down = true;
		try {
			expect((await add(organization)).status).toBe(201);
			const failing = await stateOnceTrue(organization, (s) => s.sml.state === "failing");
			expect(failing.sml.message).toBeTruthy();
		} finally {
			sml.down = false;
		}
		await stateOnceTrue(organization, (s) => s.sml.state === "registered");
		expect(sml.participants.has(`0192:${organization}`)).toBe(true);
	});

	it("reconciliation creates a lost record and deletes a stray one; status shows them first and changes nothing", async () => {
		const lost = `0192:${ORGANIZATIONS[2]}`;
		const stray = "0192:991825827x";
		await stateOnceTrue(ORGANIZATIONS[2], (s) => s.sml.state === "registered");
		sml.participants.delete(lost);
		sml.participants.add(stray);
		// Small pages: the registry follows NextPageIdentifier to the end.
		sml.pageSize = 2;
		const status = await registry.broker.call<{ missing: string[]; stray: string[] }, object>("network.status", {});
		expect(status.missing).toContain(lost);
		expect(status.stray).toContain(stray);
		expect(sml.participants.has(lost)).toBe(false);
		await registry.broker.call("network.sync", {});
		await until("the SML reconciled", async () => sml.participants.has(lost) && !sml.participants.has(stray));
	});

	it("who may see an organization's network state (decisions §4)", async () => {
		const organization = ORGANIZATIONS[2];
		expect((await networkOf(organization, sp1)).status).toBe(200);
		expect((await networkOf(organization, sp2)).status).toBe(404);
		expect((await networkOf(organization, demoAuth("NETWORK_AUTHORITY"))).status).toBe(200);
		expect((await networkOf(organization, demoAuth("ACCESS_POINT_PROVIDER"))).status).toBe(403);
		const anonymous = await request(registry.url)
			.get(`/rest/api/network/${encodeURIComponent(qid(organization))}`)
			.set("Accept", NETWORK);
		expect(anonymous.status).toBe(401);
		expect((await networkOf("123456785")).status).toBe(404);
		const bad = await request(registry.url).get("/rest/api/network/not-an-identifier").set("Authorization", admin);
		expect(bad.status).toBe(400);
	});

	it("every SOAP body and Directory call matched the WSDL and the indexer's interface", () => {
		expect(sml.malformed).toEqual([]);
		expect(directory.malformed).toEqual([]);
	});
});
