/**
 * Peppol Directory business cards over HTTP (issue 42, decisions §14, docs/smp.md): GET
 * /businesscard/{participantId} at the SMP root, anonymous, on the gateway and (distributed
 * project) on the lookup node, byte for byte the card src/contract/business-card.ts builds.
 * Each card is validated by Debian's xmllint against the BusinessCard V3 schema written from
 * peppol-reference.md. Changes are polled for, never slept on (the cluster's lookup applies
 * them asynchronously).
 */
import { businessCardXml, type BusinessEntity } from "../../src/contract/business-card";
import { importSeed } from "../../src/exchange/seed";
import { readCard, validateCard, withXmllint, xmllintAvailable } from "../support/business-card";
import { organizationNumberSource } from "../support/bulk";
import { pollUntil } from "../support/poll";
import { rawRequest, type RawAnswer } from "../support/raw-http";
import {
	demoAccount,
	demoAuth,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	TOPOLOGY,
	type RunningRegistry,
} from "../support/registry";

const MEDIA = (operation: string) => `application/vnd.registry.participants.${operation}.v1+json`;
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const SCHEME = "iso6523-actorid-upis";

let registry: RunningRegistry;
/** Where cards are asked: the gateway, and the lookup node on the distributed project. */
let nodes: string[];
const organizationNumber = organizationNumberSource(31_000_000);

beforeAll(async () => {
	registry = await startRegistry();
	nodes = [registry.url, ...(registry.lookupUrl ? [registry.lookupUrl] : [])];
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

const cardPath = (participant: string) => `/businesscard/${encodeURIComponent(participant)}`;

function ask(base: string, path: string, method = "GET", headers: Record<string, string> = {}): Promise<RawAnswer> {
	return rawRequest(base, { method, path, headers });
}

async function send(method: string, path: string, auth: string, operation: string, body?: unknown) {
	const response = await fetch(`${registry.url}/rest/api/participants${path}`, {
		method,
		headers: {
			Authorization: auth,
			Accept: MEDIA(operation),
			...(body === undefined ? {} : { "Content-Type": MEDIA(operation) }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
		signal: AbortSignal.timeout(60_000),
	});
	const text = await response.text();
	return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A service provider adds a participant; its answer gives what the card must show. */
async function add(auth: string, icd: string, organizationIdentifier: string, name: string, processes: string[]) {
	const { status, body } = await send("POST", "", auth, "add", {
		icd,
		organizationIdentifier,
		name,
		processes: processes.map((identifier) => ({ identifier })),
		contact,
	});
	expect({ status, body }).toMatchObject({ status: 201 });
	return { name, icd, organizationIdentifier, registrationDate: body.registrationDate as string };
}

/** The card every node answers once it equals `expected` (null: once every node answers 404); xmllint validates it. */
async function cardOn(
	participant: string,
	expected: string | null,
	path = cardPath(participant),
): Promise<RawAnswer[]> {
	const answers = await pollUntil(`every node's card of ${participant}`, 30_000, async () => {
		const replies = await Promise.all(nodes.map((node) => ask(node, path)));
		const settled = replies.every((reply) =>
			expected === null ? reply.status === 404 : reply.status === 200 && reply.text === expected,
		);
		return settled ? replies : undefined;
	});
	if (expected !== null && xmllintAvailable) expect(validateCard(expected)).toMatchObject({ status: 0 });
	return answers;
}

const expectedCard = (icd: string, organizationIdentifier: string, entities: BusinessEntity[]) =>
	businessCardXml(`${icd}:${organizationIdentifier.toLowerCase()}`, entities, "NO");

describe(`GET /businesscard/{participantId} (${TOPOLOGY})`, () => {
	const number = organizationNumber();
	const participant = `${SCHEME}::0192:${number}`;
	const entities: BusinessEntity[] = [];

	test("after an add: the card of the organization with its one participant, as the shared builder writes it, text/xml", async () => {
		entities.push(await add(demoAuth("SERVICE_PROVIDER", 0), "0192", number, "Kystlys Sjømat & Co AS", [BILLING]));
		const answers = await cardOn(participant, expectedCard("0192", number, entities));
		for (const answer of answers) {
			expect(answer.headers["content-type"]).toBe("text/xml;charset=UTF-8");
			expect(answer.headers.etag).toMatch(/^"/);
		}
		expect(readCard(answers[0].text)).toEqual({
			participant: `${SCHEME}::0192:${number}`,
			entities: [
				{
					name: "Kystlys Sjømat & Co AS",
					countryCode: "NO",
					identifiers: [`0192::${number}`],
					registrationDate: entities[0].registrationDate,
				},
			],
		});
	});

	test("a second participant of the organization (another service provider): two entities", async () => {
		entities.push(await add(demoAuth("SERVICE_PROVIDER", 1), "0192", number, "Kystlys Ordre AS", [ORDERING]));
		const [answer] = await cardOn(participant, expectedCard("0192", number, entities));
		expect(
			readCard(answer.text)
				.entities.map((entity) => entity.name)
				.sort(),
		).toEqual(["Kystlys Ordre AS", "Kystlys Sjømat & Co AS"]);
	});

	withXmllint("xmllint validates the cards the registry serves against BusinessCard V3", async () => {
		const [answer] = await cardOn(participant, expectedCard("0192", number, entities));
		expect(validateCard(answer.text)).toMatchObject({ status: 0 });
	});

	test("percent-encoded (%3A%3A) and literal, scheme in any case: the same card", async () => {
		const expected = expectedCard("0192", number, entities);
		for (const path of [
			`/businesscard/${SCHEME}%3A%3A0192%3A${number}`,
			`/businesscard/${SCHEME}::0192:${number}`,
			`/businesscard/${SCHEME.toUpperCase()}%3a%3a0192%3a${number}`,
		])
			for (const node of nodes) expect(await ask(node, path)).toMatchObject({ status: 200, text: expected });
	});

	test("ETag: a matching If-None-Match answers 304 without a body; HEAD answers the headers alone", async () => {
		for (const node of nodes) {
			const answer = await ask(node, cardPath(participant));
			expect(answer.status).toBe(200);
			const etag = answer.headers.etag as string;
			const again = await ask(node, cardPath(participant), "GET", { "If-None-Match": etag });
			expect({ status: again.status, text: again.text }).toEqual({ status: 304, text: "" });
			const head = await ask(node, cardPath(participant), "HEAD");
			expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: "" });
			expect(head.headers["content-type"]).toBe("text/xml;charset=UTF-8");
			expect(head.headers.etag).toBe(etag);
		}
	});

	test("a rename (a seed upsert, the way names change) shows in the card, and the ETag changes", async () => {
		const before = await ask(registry.url, cardPath(participant));
		await importSeed(registry.broker, {
			participants: [
				{
					serviceProvider: demoAccount("SERVICE_PROVIDER", 0).serviceProvider,
					icd: "0192",
					organizationIdentifier: number,
					name: "Kystlys Havbruk AS",
					processes: [{ identifier: BILLING }],
					contact,
				},
			],
		});
		entities[0] = { ...entities[0], name: "Kystlys Havbruk AS" };
		const [answer] = await cardOn(participant, expectedCard("0192", number, entities));
		expect(readCard(answer.text).entities.map((entity) => entity.name)).toContain("Kystlys Havbruk AS");
		expect(answer.headers.etag).not.toBe(before.headers.etag);
	});

	test("deleting one participant leaves the other's entity; deleting the last answers 404", async () => {
		expect(
			(await send("DELETE", `/${encodeURIComponent(participant)}`, demoAuth("SERVICE_PROVIDER", 1), "delete"))
				.status,
		).toBe(204);
		await cardOn(participant, expectedCard("0192", number, [entities[0]]));
		expect(
			(await send("DELETE", `/${encodeURIComponent(participant)}`, demoAuth("SERVICE_PROVIDER", 0), "delete"))
				.status,
		).toBe(204);
		const answers = await cardOn(participant, null);
		for (const answer of answers)
			expect(JSON.parse(answer.text)).toMatchObject({
				status: 404,
				message: `participant ${participant} is not published by this registry`,
			});
	});

	test("an organization identifier with letters: the card's participant is lower case, its Identifier as registered", async () => {
		const registered = `CardTest-${number}`;
		const entity = await add(demoAuth("SERVICE_PROVIDER", 0), "0088", registered, "Bokstav AS", [BILLING]);
		const expected = expectedCard("0088", registered, [entity]);
		await cardOn(`${SCHEME}::0088:${registered.toUpperCase()}`, expected);
		const card = readCard(expected);
		expect(card.participant).toBe(`${SCHEME}::0088:${registered.toLowerCase()}`);
		expect(card.entities[0].identifiers).toEqual([`0088::${registered}`]);
	});

	test("the cards are asked of every node that answers them: the gateway, and the lookup node in a cluster", () => {
		expect(nodes).toHaveLength(TOPOLOGY === "distributed" ? 2 : 1);
	});

	test("no participant, or not a participant identifier: 404; another method: 405", async () => {
		for (const node of nodes) {
			for (const path of [
				cardPath(`${SCHEME}::0192:${organizationNumber()}`),
				cardPath("busdox-docid-qns::urn:x"),
				"/businesscard/not-an-identifier",
			])
				expect({ path, status: (await ask(node, path)).status }).toEqual({ path, status: 404 });
			expect((await ask(node, cardPath(participant), "DELETE")).status).toBe(405);
		}
	});
});
