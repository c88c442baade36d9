/**
 * Consented transfers (docs/decisions.md "Transfers", the registry's extension): the owning
 * provider starts one and gets a key, the receiving provider completes it with the key, the
 * sender may cancel it, an unclaimed one expires. Every refusal answers in the spec's error
 * shape and changes nothing: neither the participant, nor the transfer, nor the audit trail.
 * Runs against the one-process registry and again against the cluster.
 */
import request from "supertest";
import { organizationNumberSource } from "../support/bulk";
import { errorAnswerProblems, rawRequest } from "../support/raw-http";
import {
	basic,
	demoAccount,
	demoAuth,
	demoSeed,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";

const MEDIA = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;
const TRANSFERS = "/rest/api/transfers";
const BILLING = "55555555-0000-4000-8000-000000000001";
const CATALOGUE = "55555555-0000-4000-8000-000000000007";
const SP3 = "11111111-0000-4000-8000-000000000003"; // Vidda: an account is added for it below
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const organizationNumber = organizationNumberSource(52_000_000);
const DAY = 86_400_000;

let registry: RunningRegistry;
let sp1: string;
let sp2: string;
let sp3: string;
let admin: string;
let authority: string;
let SP1: string;
let SP2: string;

beforeAll(async () => {
	const seed = demoSeed();
	const accounts = [
		...(seed.accounts as object[]),
		{ username: "sp3", password: "sp3-transfer-password", role: "SERVICE_PROVIDER", serviceProvider: SP3 },
	];
	registry = await startRegistry({ seed: { ...seed, accounts } });
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	sp3 = basic("sp3", "sp3-transfer-password");
	admin = demoAuth("ADMIN");
	authority = demoAuth("NETWORK_AUTHORITY");
	SP1 = demoAccount("SERVICE_PROVIDER", 0).serviceProvider as string;
	SP2 = demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string;
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

interface Participant {
	identifier: string;
	qualifiedIdentifier: string;
	organizationIdentifier: string;
}

async function addParticipant(
	auth: string,
	processes = [BILLING],
	organizationIdentifier = organizationNumber(),
): Promise<Participant> {
	const answer = await request(registry.url)
		.post("/rest/api/participants")
		.set({
			Authorization: auth,
			Accept: MEDIA("participants", "add"),
			"Content-Type": MEDIA("participants", "add"),
		})
		.send({
			icd: "0192",
			organizationIdentifier,
			name: "Overført AS",
			processes: processes.map((identifier) => ({ identifier })),
			contact,
		});
	expect(answer.status).toBe(201);
	return answer.body;
}

function start(auth: string | null, body: object) {
	const req = request(registry.url)
		.post(TRANSFERS)
		.set({ Accept: MEDIA("transfers", "start"), "Content-Type": MEDIA("transfers", "start") });
	return (auth ? req.set("Authorization", auth) : req).send(body);
}

async function started(
	auth: string,
	body: object,
): Promise<{ identifier: string; key: string; [field: string]: unknown }> {
	const answer = await start(auth, body);
	expect({ status: answer.status, body: answer.status === 201 ? null : answer.body }).toEqual({
		status: 201,
		body: null,
	});
	return answer.body;
}

function complete(auth: string, identifier: string, key: string) {
	return request(registry.url)
		.post(`${TRANSFERS}/${identifier}/complete`)
		.set({
			Authorization: auth,
			Accept: MEDIA("transfers", "complete"),
			"Content-Type": MEDIA("transfers", "complete"),
		})
		.send({ key });
}

function cancel(auth: string, identifier: string) {
	return request(registry.url)
		.post(`${TRANSFERS}/${identifier}/cancel`)
		.set({ Authorization: auth, Accept: MEDIA("transfers", "cancel") });
}

function getTransfer(auth: string | null, identifier: string) {
	const req = request(registry.url).get(`${TRANSFERS}/${identifier}`).set("Accept", MEDIA("transfers", "get"));
	return auth ? req.set("Authorization", auth) : req;
}

function findTransfers(auth: string, query: Record<string, string> = {}) {
	return request(registry.url)
		.get(TRANSFERS)
		.query({ size: "1000", ...query })
		.set({ Authorization: auth, Accept: MEDIA("transfers", "find") });
}

function getParticipant(auth: string, value: string) {
	return request(registry.url)
		.get(`/rest/api/participants/${encodeURIComponent(value)}`)
		.set({ Authorization: auth, Accept: MEDIA("participants", "get") });
}

async function ownedBy(participant: Participant): Promise<string> {
	const answer = await getParticipant(admin, participant.identifier);
	expect(answer.status).toBe(200);
	return answer.body.provider.identifier;
}

interface AuditEvent {
	operation: string;
	resource: string;
	resourceId: string;
	before: unknown;
	after: unknown;
}

async function events(auth: string, query: Record<string, string> = {}): Promise<AuditEvent[]> {
	const answer = await request(registry.url)
		.get("/rest/api/events")
		.query({ size: "1000", ...query })
		.set({ Authorization: auth, Accept: MEDIA("events", "find") });
	expect(answer.status).toBe(200);
	return answer.body.content;
}

/** Polls until `check` passes or the deadline: audit records arrive through the relays asynchronously. */
async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 20000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value !== undefined && value !== false) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 25));
	}
}

/** Waits until ADMIN's trail holds the transfer's record of `operation` (so a snapshot taken after it is settled). */
async function audited(transfer: string, operation: string): Promise<void> {
	await eventually(
		async () => (await events(admin, { operation })).some((event) => event.resourceId === transfer),
		`the ${operation} audit record of ${transfer}`,
	);
}

/** What a refusal must leave as it was: the participant, the transfer, and their audit records. */
async function snapshot(participant: Participant, transfer: string) {
	const [stored, read, trail] = await Promise.all([
		getParticipant(admin, participant.identifier),
		getTransfer(admin, transfer),
		events(admin),
	]);
	return {
		participant: stored.body,
		transfer: read.body,
		events: trail.filter((event) => event.resourceId === transfer || event.resourceId === participant.identifier)
			.length,
	};
}

/**
 * The refusal changed nothing: the same participant and transfer, and (after a later audited
 * change of the transfer, the marker, has reached the trail) no audit record in between.
 */
async function expectUnchanged(
	before: Awaited<ReturnType<typeof snapshot>>,
	participant: Participant,
	transfer: string,
	marker: () => Promise<unknown>,
) {
	const now = await snapshot(participant, transfer);
	expect({ participant: now.participant, transfer: now.transfer }).toEqual({
		participant: before.participant,
		transfer: before.transfer,
	});
	await marker();
	await eventually(
		async () =>
			(await events(admin)).some((event) => event.resourceId === transfer && event.operation !== "startTransfer"),
		"the marker's audit record",
	);
	const after = await snapshot(participant, transfer);
	expect(after.events).toBe(before.events + 1);
}

function expectError(answer: request.Response, status: number, exception: string): void {
	expect({ status: answer.status, exception: answer.body.exception }).toEqual({ status, exception });
	expect(answer.headers["content-type"]).toBe("application/json;charset=UTF-8");
	expect(answer.body).toMatchObject({
		status,
		path: expect.stringMatching(/^\/rest\/api\/transfers/),
		message: expect.any(String),
		timestamp: expect.any(String),
	});
}

describe("the happy path", () => {
	test("start → the receiver completes: the participant, its lookup and both providers' finds show the new owner; the key is shown once", async () => {
		const participant = await addParticipant(sp1, [BILLING, CATALOGUE]);
		const lookupBefore = await request(registry.url)
			.get(`/rest/api/organizations/${participant.qualifiedIdentifier}/processes`)
			.set("Accept", MEDIA("organizations", "processes"));
		expect(lookupBefore.status).toBe(200);

		const answer = await start(sp1, {
			participant: participant.qualifiedIdentifier,
			serviceProviderIdentifier: SP2,
		});
		expect(answer.status).toBe(201);
		expect(answer.headers["content-type"]).toBe(`${MEDIA("transfers", "start")};charset=UTF-8`);
		expect(answer.headers.location).toBe(`${TRANSFERS}/${answer.body.identifier}`);
		const transfer = answer.body;
		expect(transfer).toMatchObject({
			participant: {
				identifier: participant.identifier,
				qualifiedIdentifier: participant.qualifiedIdentifier,
				name: "Overført AS",
			},
			from: { identifier: SP1, name: "Nordlys E-faktura AS" },
			to: { identifier: SP2, name: "Fjordnett Fakturaservice AS" },
			state: "PENDING",
		});
		expect(transfer.key.length).toBeLessThanOrEqual(24);
		expect(transfer.key).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}$/);
		const validFor = Date.parse(transfer.expiresDate) - Date.parse(transfer.createdDate);
		expect(validFor).toBe(7 * DAY);

		// The key is never shown again: not by the sender's, the receiver's or an ADMIN's read, nor in a find.
		for (const auth of [sp1, sp2, admin]) {
			const read = await getTransfer(auth, transfer.identifier);
			expect(read.status).toBe(200);
			expect(read.headers.etag).toMatch(/^".+"$/);
			expect(read.body).not.toHaveProperty("key");
			expect(read.text).not.toContain(transfer.key);
			expect((await findTransfers(auth)).text).not.toContain(transfer.key);
		}

		const completed = await complete(sp2, transfer.identifier, transfer.key);
		expect(completed.status).toBe(200);
		expect(completed.headers["content-type"]).toBe(`${MEDIA("transfers", "complete")};charset=UTF-8`);
		expect(completed.body).toMatchObject({
			identifier: transfer.identifier,
			state: "COMPLETED",
			completedDate: expect.any(String),
		});
		expect(completed.body).not.toHaveProperty("key");

		expect(await ownedBy(participant)).toBe(SP2);
		expect((await getParticipant(sp1, participant.qualifiedIdentifier)).status).toBe(404);
		expect((await getParticipant(sp2, participant.qualifiedIdentifier)).body).toMatchObject({
			identifier: participant.identifier,
			provider: { identifier: SP2 },
		});
		const listOf = async (auth: string) =>
			(
				await request(registry.url)
					.get("/rest/api/participants")
					.query({ size: "1000" })
					.set({ Authorization: auth })
			).body.content.map((item: { identifier: string }) => item.identifier);
		expect(await listOf(sp1)).not.toContain(participant.identifier);
		expect(await listOf(sp2)).toContain(participant.identifier);
		// The lookup still answers the organization's processes (the same claims, now the new owner's participant).
		const lookupAfter = await request(registry.url)
			.get(`/rest/api/organizations/${participant.qualifiedIdentifier}/processes`)
			.set("Accept", MEDIA("organizations", "processes"));
		expect(lookupAfter.status).toBe(200);
		expect(lookupAfter.body.map((process: { identifier: string }) => process.identifier).sort()).toEqual(
			[BILLING, CATALOGUE].sort(),
		);

		// Single use: the same key again is 409, and the transfer reads COMPLETED for both sides.
		expectError(await complete(sp2, transfer.identifier, transfer.key), 409, "ConflictException");
		expect((await getTransfer(sp1, transfer.identifier)).body.state).toBe("COMPLETED");
	});

	test("the key is accepted in lower case and without hyphens; effectiveDate and validDays set the expiry", async () => {
		const participant = await addParticipant(sp1);
		const today = new Date().toISOString().slice(0, 10);
		const transfer = await started(sp1, {
			participant: participant.identifier,
			serviceProviderIdentifier: SP2,
			effectiveDate: today,
			validDays: 2,
		});
		expect(transfer.effectiveDate).toBe(today);
		expect(Date.parse(transfer.expiresDate as string) - Date.parse(transfer.createdDate as string)).toBe(2 * DAY);
		const answer = await complete(sp2, transfer.identifier, transfer.key.replace(/-/g, "").toLowerCase());
		expect(answer.status).toBe(200);
		expect(await ownedBy(participant)).toBe(SP2);
	});

	test("the contract's one-step transfer still works, and a pending consented transfer of that participant is then cancelled by its completion", async () => {
		const participant = await addParticipant(sp1);
		const transfer = await started(sp1, {
			participant: participant.qualifiedIdentifier,
			serviceProviderIdentifier: SP2,
		});
		const oneStep = await request(registry.url)
			.put(`/rest/api/participants/${encodeURIComponent(participant.qualifiedIdentifier)}/transfer/${SP3}`)
			.set({ Authorization: sp1, Accept: MEDIA("participants", "transfer") });
		expect(oneStep.status).toBe(200);
		expect(oneStep.text === "" || oneStep.text === "null").toBe(true);
		expect(await ownedBy(participant)).toBe(SP3);

		const refused = await complete(sp2, transfer.identifier, transfer.key);
		expectError(refused, 409, "ConflictException");
		expect(refused.body.message).toMatch(/no longer belongs to the sender/);
		expect(await ownedBy(participant)).toBe(SP3);
		expect((await getTransfer(sp2, transfer.identifier)).body).toMatchObject({
			state: "CANCELLED",
			cancelledDate: expect.any(String),
		});
	});
});

describe("refusals: the error shape, and nothing changed", () => {
	test("a wrong key is 400 on field `key`", async () => {
		const participant = await addParticipant(sp1);
		const transfer = await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
		await audited(transfer.identifier, "startTransfer");
		const before = await snapshot(participant, transfer.identifier);
		const answer = await complete(sp2, transfer.identifier, "AAAAA-AAAAA-AAAAA-AAAAA");
		expectError(answer, 400, "MethodArgumentNotValidException");
		expect(errorAnswerProblems({ status: answer.status, headers: answer.headers, text: answer.text })).toEqual([]);
		expect(answer.body.errors).toEqual([
			expect.objectContaining({
				objectName: "completeTransferFormDTO",
				field: "key",
				code: "TransferKey",
				rejectedValue: null,
			}),
		]);
		await expectUnchanged(before, participant, transfer.identifier, () => cancel(sp1, transfer.identifier));
		expect(await ownedBy(participant)).toBe(SP1);
	});

	test("an expired transfer is EXPIRED for everyone and completing it is 409", async () => {
		const participant = await addParticipant(sp1);
		const transfer = await started(sp1, {
			participant: participant.identifier,
			serviceProviderIdentifier: SP2,
			validDays: 1,
		});
		// The sweeper, run as of two days from now (as the participant sweeper's tests age a deleteDate).
		const swept = await registry.broker.call<{ expired: number }, { now: string }>("participants.expireTransfers", {
			now: new Date(Date.now() + 2 * DAY).toISOString(),
		});
		expect(swept.expired).toBeGreaterThanOrEqual(1);
		expect((await getTransfer(sp2, transfer.identifier)).body.state).toBe("EXPIRED");
		await audited(transfer.identifier, "expireTransfer");
		const before = await snapshot(participant, transfer.identifier);
		const answer = await complete(sp2, transfer.identifier, transfer.key);
		expectError(answer, 409, "ConflictException");
		expect(answer.body.message).toMatch(/expired/);
		expectError(await cancel(sp1, transfer.identifier), 409, "ConflictException");
		expect(await snapshot(participant, transfer.identifier)).toEqual(before);
		expect(await ownedBy(participant)).toBe(SP1);
		// The expiry is audited for both sides; an expired transfer no longer blocks a new one.
		for (const auth of [sp1, sp2]) {
			await eventually(
				async () =>
					(await events(auth, { operation: "expireTransfer" })).some(
						(event) => event.resourceId === transfer.identifier,
					),
				"the expiry's audit record",
			);
		}
		expect(
			(await findTransfers(sp1, { state: "EXPIRED" })).body.content.map(
				(item: { identifier: string }) => item.identifier,
			),
		).toContain(transfer.identifier);
		await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
	});

	test("a cancelled transfer cannot be completed: 409", async () => {
		const participant = await addParticipant(sp1);
		const transfer = await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
		const cancelled = await cancel(sp1, transfer.identifier);
		expect(cancelled.status).toBe(200);
		expect(cancelled.body).toMatchObject({ state: "CANCELLED", cancelledDate: expect.any(String) });
		await audited(transfer.identifier, "cancelTransfer");
		const before = await snapshot(participant, transfer.identifier);
		const answer = await complete(sp2, transfer.identifier, transfer.key);
		expectError(answer, 409, "ConflictException");
		expect(answer.body.message).toMatch(/cancelled/);
		expectError(await cancel(sp1, transfer.identifier), 409, "ConflictException");
		expect(await snapshot(participant, transfer.identifier)).toEqual(before);
		expect(await ownedBy(participant)).toBe(SP1);
	});

	test("a receiver that already has a participant for the organization: 409, as the one-step transfer", async () => {
		const participant = await addParticipant(sp1, [BILLING]);
		await addParticipant(sp2, [], participant.organizationIdentifier);
		const transfer = await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
		await audited(transfer.identifier, "startTransfer");
		const before = await snapshot(participant, transfer.identifier);
		const answer = await complete(sp2, transfer.identifier, transfer.key);
		expectError(answer, 409, "ConflictException");
		expect(answer.body.message).toMatch(/already has a participant/);
		await expectUnchanged(before, participant, transfer.identifier, () => cancel(sp1, transfer.identifier));
		expect(await ownedBy(participant)).toBe(SP1);
	});

	test("completion before the effective date: 409 naming the date", async () => {
		const participant = await addParticipant(sp1);
		const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
		const transfer = await started(sp1, {
			participant: participant.identifier,
			serviceProviderIdentifier: SP2,
			effectiveDate: tomorrow,
		});
		expect(Date.parse(transfer.expiresDate as string)).toBe(Date.parse(`${tomorrow}T00:00:00Z`) + 7 * DAY);
		await audited(transfer.identifier, "startTransfer");
		const before = await snapshot(participant, transfer.identifier);
		const answer = await complete(sp2, transfer.identifier, transfer.key);
		expectError(answer, 409, "ConflictException");
		expect(answer.body.message).toContain(tomorrow);
		await expectUnchanged(before, participant, transfer.identifier, () => cancel(sp1, transfer.identifier));
	});

	test("a second pending transfer of the same participant: 409; after a cancel a new one starts", async () => {
		const participant = await addParticipant(sp1);
		const first = await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
		const second = await start(sp1, {
			participant: participant.qualifiedIdentifier,
			serviceProviderIdentifier: SP3,
		});
		expectError(second, 409, "ConflictException");
		expect(second.body.message).toMatch(/already has a pending transfer/);
		const pending = (await findTransfers(sp1, { state: "PENDING" })).body.content.filter(
			(item: { participant: { identifier: string } }) => item.participant.identifier === participant.identifier,
		);
		expect(pending.map((item: { identifier: string }) => item.identifier)).toEqual([first.identifier]);
		expect((await cancel(sp1, first.identifier)).status).toBe(200);
		await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP3 });
	});

	test("the participant deleted meanwhile: completion 409 and the transfer is CANCELLED", async () => {
		const participant = await addParticipant(sp1);
		const transfer = await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
		const removed = await request(registry.url)
			.delete(`/rest/api/participants/${participant.identifier}`)
			.set({ Authorization: sp1, Accept: MEDIA("participants", "delete") });
		expect(removed.status).toBe(204);
		expectError(await complete(sp2, transfer.identifier, transfer.key), 409, "ConflictException");
		expect((await getTransfer(sp1, transfer.identifier)).body.state).toBe("CANCELLED");
		expect((await getParticipant(sp2, participant.qualifiedIdentifier)).status).toBe(404);
	});

	test("bad start bodies: 400 with the violations; another provider's participant is not found", async () => {
		const participant = await addParticipant(sp1);
		const cases: Array<[object, string, string]> = [
			[{ serviceProviderIdentifier: SP2 }, "participant", "NotEmpty"],
			[{ participant: participant.identifier }, "serviceProviderIdentifier", "NotNull"],
			[
				{ participant: participant.identifier, serviceProviderIdentifier: "not-a-uuid" },
				"serviceProviderIdentifier",
				"Pattern",
			],
			[
				{ participant: participant.identifier, serviceProviderIdentifier: SP2, validDays: 31 },
				"validDays",
				"Range",
			],
			[
				{ participant: participant.identifier, serviceProviderIdentifier: SP2, validDays: 0 },
				"validDays",
				"Range",
			],
			[
				{ participant: participant.identifier, serviceProviderIdentifier: SP2, validDays: "7" },
				"validDays",
				"TypeMismatch",
			],
			[
				{ participant: participant.identifier, serviceProviderIdentifier: SP2, effectiveDate: "2020-01-01" },
				"effectiveDate",
				"FutureOrPresent",
			],
			[
				{ participant: participant.identifier, serviceProviderIdentifier: SP2, effectiveDate: "2030-02-30" },
				"effectiveDate",
				"Pattern",
			],
			[
				{ participant: participant.identifier, serviceProviderIdentifier: SP1 },
				"serviceProviderIdentifier",
				"OtherProvider",
			],
			[
				{
					participant: participant.identifier,
					serviceProviderIdentifier: "11111111-0000-4000-8000-0000000000ff",
				},
				"serviceProviderIdentifier",
				"Exists",
			],
			[
				{ participant: "77777777-0000-4000-8000-000000000003", serviceProviderIdentifier: SP3 },
				"participant",
				"Exists",
			], // sp2's
			[{ participant: "no such thing", serviceProviderIdentifier: SP2 }, "participant", "Pattern"],
		];
		for (const [body, field, code] of cases) {
			const answer = await start(sp1, body);
			expect({
				body,
				status: answer.status,
				errors: answer.body.errors?.map(
					(error: { field: string; code: string }) => `${error.field} ${error.code}`,
				),
			}).toEqual({
				body,
				status: 400,
				errors: expect.arrayContaining([`${field} ${code}`]),
			});
			expect(answer.body.errors[0].objectName).toBe("startTransferFormDTO");
		}
		expectError(
			await complete(sp2, "0f0f0f0f-0000-4000-8000-000000000000", ""),
			400,
			"MethodArgumentNotValidException",
		);
		expect(
			(await findTransfers(sp1)).body.content.filter(
				(item: { participant: { identifier: string } }) =>
					item.participant.identifier === participant.identifier,
			),
		).toEqual([]);
	});
});

describe("who may see and do what", () => {
	test("a third provider gets 404 for every operation; anonymous 401; the sender may not complete, the receiver may not cancel (403)", async () => {
		const participant = await addParticipant(sp1);
		const transfer = await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
		await audited(transfer.identifier, "startTransfer");
		const before = await snapshot(participant, transfer.identifier);
		expectError(await getTransfer(sp3, transfer.identifier), 404, "NotFoundException");
		expectError(await complete(sp3, transfer.identifier, transfer.key), 404, "NotFoundException");
		expectError(await cancel(sp3, transfer.identifier), 404, "NotFoundException");
		expect(
			(await findTransfers(sp3)).body.content.map((item: { identifier: string }) => item.identifier),
		).not.toContain(transfer.identifier);
		const anonymous = await rawRequest(registry.url, {
			method: "GET",
			path: `${TRANSFERS}/${transfer.identifier}`,
			headers: { Accept: MEDIA("transfers", "get") },
		});
		expect(anonymous.status).toBe(401);
		expect(errorAnswerProblems(anonymous)).toEqual([]);
		expectError(await complete(sp1, transfer.identifier, transfer.key), 403, "AccessDeniedException");
		expectError(await cancel(sp2, transfer.identifier), 403, "AccessDeniedException");
		expect(await snapshot(participant, transfer.identifier)).toEqual(before);
		for (const auth of [sp1, sp2, admin, authority]) {
			expect((await getTransfer(auth, transfer.identifier)).status).toBe(200);
			expect(
				(await findTransfers(auth, { state: "PENDING" })).body.content.map(
					(item: { identifier: string }) => item.identifier,
				),
			).toContain(transfer.identifier);
		}
		expect((await findTransfers(sp1, { state: "pending-ish" })).status).toBe(400);
	});

	test("every state change is in the audit trail of both providers and of ADMIN and NETWORK_AUTHORITY, without the key", async () => {
		const participant = await addParticipant(sp1);
		const transfer = await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
		expect((await complete(sp2, transfer.identifier, transfer.key)).status).toBe(200);
		const cancelled = await started(sp2, { participant: participant.identifier, serviceProviderIdentifier: SP1 });
		expect((await cancel(sp2, cancelled.identifier)).status).toBe(200);
		const expected = [
			`transfer ${transfer.identifier} startTransfer`,
			`transfer ${transfer.identifier} completeTransfer`,
			`participant ${participant.identifier} completeTransfer`,
			`transfer ${cancelled.identifier} startTransfer`,
			`transfer ${cancelled.identifier} cancelTransfer`,
		];
		for (const auth of [sp1, sp2, admin, authority]) {
			const trail = await eventually(async () => {
				const found = (await events(auth)).filter((event) =>
					[transfer.identifier, cancelled.identifier, participant.identifier].includes(event.resourceId),
				);
				const names = found.map((event) => `${event.resource} ${event.resourceId} ${event.operation}`);
				return expected.every((name) => names.includes(name)) ? found : undefined;
			}, "the transfer's audit records");
			const text = JSON.stringify(trail);
			for (const key of [transfer.key, cancelled.key]) {
				expect(text).not.toContain(key);
				expect(text).not.toContain(key.replace(/-/g, ""));
			}
			expect(text).not.toContain("keyHash");
		}
		expect((await events(sp3)).filter((event) => event.resourceId === transfer.identifier)).toEqual([]);
	});
});

describe("concurrency", () => {
	test("two completes racing: one 200, one 409, and the participant moved once", async () => {
		const participant = await addParticipant(sp1);
		const transfer = await started(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 });
		const answers = await Promise.all([
			complete(sp2, transfer.identifier, transfer.key),
			complete(sp2, transfer.identifier, transfer.key),
		]);
		expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
		expectError(answers.find((answer) => answer.status === 409) as request.Response, 409, "ConflictException");
		expect(await ownedBy(participant)).toBe(SP2);
		const moves = await eventually(async () => {
			const found = (await events(admin, { participant: participant.identifier })).filter(
				(event) => event.operation === "completeTransfer",
			);
			return found.length > 0 ? found : undefined;
		}, "the move's audit record");
		expect(moves).toHaveLength(1);
	});

	test("two starts racing for one participant: one 201, one 409", async () => {
		const participant = await addParticipant(sp1);
		const answers = await Promise.all([
			start(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP2 }),
			start(sp1, { participant: participant.identifier, serviceProviderIdentifier: SP3 }),
		]);
		expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
	});
});
