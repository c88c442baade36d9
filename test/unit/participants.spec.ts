/**
 * The participants service on an in-memory broker with the real catalog, accounts and
 * lookup services, seeded from seed/demo.json (decisions §4–§7).
 */
import type { Readable } from "node:stream";
import type { Service, ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import type { Caller, Participant, Process } from "../../src/contract/model";
import type { Page } from "../../src/contract/paging";
import { calendarDate } from "../../src/contract/dates";
import { importSeed } from "../../src/exchange/seed";
import { callerMeta } from "../../src/platform/caller-signature";
import { demoSeed } from "../support/registry";
import { organizationNumberSource } from "../support/bulk";
import { LOOK_ALIKES, PLAIN_GLN } from "../support/look-alikes";

const SP1 = "11111111-0000-4000-8000-000000000001";
const SP2 = "11111111-0000-4000-8000-000000000002";
const SP3 = "11111111-0000-4000-8000-000000000003";
const BILLING = "55555555-0000-4000-8000-000000000001";
const SELF_BILLING = "55555555-0000-4000-8000-000000000002";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const DESPATCH = "55555555-0000-4000-8000-000000000005";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006"; // depends on BILLING
const CATALOGUE = "55555555-0000-4000-8000-000000000007";
const MLR = "55555555-0000-4000-8000-000000000008";
const DEPRECATED_EHF = "55555555-0000-4000-8000-000000000011"; // restricted, requiredICDs 0192
const EHF_ORDERING = "55555555-0000-4000-8000-000000000012"; // requiredICDs 0192
const NORDLYS = "77777777-0000-4000-8000-000000000001"; // SP1, 0192:991825827, BILLING + INVOICE_RESPONSE
const HAVBLIKK = "77777777-0000-4000-8000-000000000003"; // SP2, 0192:986252932

const sp1: Caller = { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: SP1 };
const sp2: Caller = { username: "sp2", role: "SERVICE_PROVIDER", serviceProvider: SP2 };
const sp3: Caller = { username: "sp3", role: "SERVICE_PROVIDER", serviceProvider: SP3 };
const admin: Caller = { username: "admin", role: "ADMIN" };
const authority: Caller = { username: "authority", role: "NETWORK_AUTHORITY" };

const qid = (icd: string, organization: string) => `iso6523-actorid-upis::${icd}:${organization}`;
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const refs = (...ids: string[]) => ids.map((identifier) => ({ identifier }));

let broker: ServiceBroker;
/** Valid Norwegian organization numbers (MOD11), handed out one per test so tests stay independent. */
const organizationNumber = organizationNumberSource(10_000_000);

function call<T>(action: string, params: object, user?: Caller): Promise<T> {
	return broker.call<T, object>(action, params, { meta: user ? callerMeta(broker, user) : {} });
}

/** The array form's answer (participants.stream: a stream of the JSON array), read whole. */
async function streamed(params: object, user?: Caller): Promise<Participant[]> {
	const chunks: Buffer[] = [];
	for await (const chunk of await call<Readable>("participants.stream", params, user)) chunks.push(chunk as Buffer);
	return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Participant[];
}

function add(user: Caller, body: object): Promise<Participant> {
	return call<Participant>("participants.add", { body }, user);
}

function addOrganization(user: Caller, processes: string[], extra: object = {}): Promise<Participant> {
	return add(user, {
		icd: "0192",
		organizationIdentifier: organizationNumber(),
		name: "Testfirma AS",
		processes: refs(...processes),
		contact,
		...extra,
	});
}

async function failure(promise: Promise<unknown>): Promise<{
	code: number;
	type: string;
	message: string;
	data?: { violations?: { field: string; code: string; defaultMessage: string }[] };
}> {
	try {
		await promise;
	} catch (error) {
		return error as never;
	}
	throw new Error("expected the call to fail");
}

function internals(): Service & {
	collections: Record<
		string,
		{ find(query: object): Promise<Record<string, unknown>[]>; count(query?: object): Promise<number> }
	>;
} {
	return broker.getLocalService("participants") as never;
}

beforeAll(async () => {
	process.env.DATA_DIR = ":memory:";
	// The registry's own broker configuration (validator, memory cacher, channels), in memory.
	broker = createRegistryBroker({
		env: { DATA_DIR: ":memory:" },
		services: ["catalog", "accounts", "accessPoints", "participants", "lookup"],
		overrides: { logger: false },
	});
	await broker.start();
	await importSeed(broker, demoSeed());
});
afterAll(() => broker.stop());

describe("add", () => {
	test("a service provider adds a participant: 201 body with dates, provider and resolved processes", async () => {
		const number = organizationNumber();
		const participant = await add(sp1, {
			icd: "0192",
			organizationIdentifier: number,
			name: "Solskinn AS",
			processes: refs(BILLING, ORDERING),
			contact,
		});
		expect(participant).toMatchObject({
			qualifiedIdentifier: qid("0192", number),
			icd: "0192",
			organizationIdentifier: number,
			name: "Solskinn AS",
			contact,
			provider: { identifier: SP1, title: "Nordlys E-faktura AS" },
		});
		expect(participant.identifier).toMatch(/^[0-9a-f-]{36}$/);
		expect(participant.registrationDate).toBe(calendarDate(new Date()));
		expect(participant.lastModificationDate).toBe(participant.registrationDate);
		expect(participant).not.toHaveProperty("deleteDate");
		expect(participant.processes?.map((process) => process.identifier)).toEqual([BILLING, ORDERING]);
		expect(participant.processes?.[0]).toMatchObject({
			title: "Peppol BIS Billing 3.0",
			restricted: false,
			visible: true,
		});
	});

	test("a service provider adding an organization it already has gets 409", async () => {
		const first = await addOrganization(sp1, [CATALOGUE]);
		const again = await failure(
			add(sp1, { icd: "0192", organizationIdentifier: first.organizationIdentifier, processes: [], contact }),
		);
		expect(again).toMatchObject({ code: 409, type: "ConflictException" });
	});

	test("the organization identifier is compared case-insensitively", async () => {
		const first = await add(sp1, { icd: "0088", organizationIdentifier: "ABC-Case-1", processes: [], contact });
		expect(first.organizationIdentifier).toBe("ABC-Case-1");
		expect(
			await failure(add(sp1, { icd: "0088", organizationIdentifier: "abc-case-1", processes: [], contact })),
		).toMatchObject({ code: 409 });
	});

	test("a process already registered for the organization by another provider is 409 naming the process", async () => {
		const first = await addOrganization(sp1, [BILLING]);
		const error = await failure(
			add(sp2, {
				icd: "0192",
				organizationIdentifier: first.organizationIdentifier,
				processes: refs(BILLING),
				contact,
			}),
		);
		expect(error).toMatchObject({ code: 409, type: "ConflictException" });
		expect(error.message).toContain(BILLING);
	});

	test("another provider may register the same organization for other processes", async () => {
		const first = await addOrganization(sp1, [BILLING]);
		const second = await add(sp2, {
			icd: "0192",
			organizationIdentifier: first.organizationIdentifier,
			processes: refs(ORDERING),
			contact,
		});
		expect(second.provider?.identifier).toBe(SP2);
	});

	test.each([
		["an unknown process", [BILLING, "55555555-0000-4000-8000-0000000000ff"], "processes[1].identifier", "Exists"],
		["a restricted process", [DEPRECATED_EHF], "processes[0].identifier", "Restricted"],
		["a process without its dependency", [INVOICE_RESPONSE], "processes[0].identifier", "Dependency"],
		["the same process twice", [BILLING, BILLING], "processes[1].identifier", "Unique"],
	])("%s is a 400 validation error on the field", async (_name, processes, field, code) => {
		const error = await failure(addOrganization(sp1, processes as string[]));
		expect(error).toMatchObject({ code: 400, type: "MethodArgumentNotValidException" });
		expect(error.data?.violations).toEqual([expect.objectContaining({ field, code })]);
	});

	test("a participant whose ICD is not in a process's requiredICDs gets a RequiredICD error", async () => {
		const error = await failure(
			add(sp1, { icd: "0007", organizationIdentifier: "5560360793", processes: refs(EHF_ORDERING), contact }),
		);
		expect(error.data?.violations).toEqual([
			expect.objectContaining({ field: "processes[0].identifier", code: "RequiredICD" }),
		]);
	});

	test("ICD 0192 needs a valid MOD11 organization number", async () => {
		const error = await failure(
			add(sp1, { icd: "0192", organizationIdentifier: "991825828", processes: [], contact }),
		);
		expect(error.data?.violations).toEqual([
			expect.objectContaining({ field: "organizationIdentifier", code: "OrganizationNumber" }),
		]);
	});

	test("a dependency held by another participant of the same organization satisfies the rule", async () => {
		const first = await addOrganization(sp1, [BILLING]);
		const second = await add(sp2, {
			icd: "0192",
			organizationIdentifier: first.organizationIdentifier,
			processes: refs(INVOICE_RESPONSE),
			contact,
		});
		expect(second.processes?.map((process) => process.identifier)).toEqual([INVOICE_RESPONSE]);
	});

	test("a missing contact fails the form validation on the contact field", async () => {
		const error = await failure(
			add(sp1, { icd: "0192", organizationIdentifier: organizationNumber(), processes: [] }),
		);
		expect(error).toMatchObject({ type: "VALIDATION_ERROR" });
		expect(JSON.stringify(error.data)).toContain("body.contact");
	});

	test("only a service provider may add", async () => {
		expect(await failure(addOrganization(admin, [BILLING]))).toMatchObject({ code: 403 });
	});
});

describe("get and processes", () => {
	test("a qualified identifier means the caller's own participant for that organization", async () => {
		const participant = await call<Participant>(
			"participants.get",
			{ qualifiedIdentifier: qid("0192", "991825827") },
			sp1,
		);
		expect(participant).toMatchObject({ identifier: NORDLYS, provider: { identifier: SP1 } });
		expect(participant.processes?.map((process) => process.identifier)).toEqual([BILLING, INVOICE_RESPONSE]);
	});

	test("the scheme and organization identifier of the path are compared case-insensitively", async () => {
		const created = await add(sp1, { icd: "0088", organizationIdentifier: "MixedCase-7", processes: [], contact });
		const found = await call<Participant>(
			"participants.get",
			{ qualifiedIdentifier: "ISO6523-ACTORID-UPIS::0088:mixedcase-7" },
			sp1,
		);
		expect(found.identifier).toBe(created.identifier);
	});

	test("another provider's organization by qualified identifier is 404 with the organization message", async () => {
		const error = await failure(call("participants.get", { qualifiedIdentifier: qid("0192", "991825827") }, sp2));
		expect(error).toMatchObject({ code: 404, type: "NotFoundException" });
		expect(error.message).toBe(`organization for qualified identifier ${qid("0192", "991825827")} cannot be found`);
	});

	test("another provider's participant by UUID is 404, as if absent", async () => {
		const error = await failure(call("participants.get", { identifier: NORDLYS }, sp2));
		expect(error).toMatchObject({ code: 404, type: "NotFoundException" });
		const absent = await failure(
			call("participants.get", { identifier: "77777777-0000-4000-8000-0000000000ff" }, sp2),
		);
		expect(absent.message.replace("77777777-0000-4000-8000-0000000000ff", NORDLYS)).toBe(error.message);
	});

	test("ADMIN and NETWORK_AUTHORITY read any participant by UUID", async () => {
		for (const user of [admin, authority]) {
			expect(await call<Participant>("participants.get", { identifier: NORDLYS }, user)).toMatchObject({
				identifier: NORDLYS,
				provider: { identifier: SP1 },
			});
		}
	});

	test("the processes sub-path answers the participant's full processes in its order", async () => {
		const processes = await call<Process[]>("participants.processes", { identifier: NORDLYS }, authority);
		expect(processes.map((process) => process.identifier)).toEqual([BILLING, INVOICE_RESPONSE]);
		expect(processes[1].dependencies).toEqual([expect.objectContaining({ identifier: BILLING })]);
		expect(await failure(call("participants.processes", { identifier: NORDLYS }, sp2))).toMatchObject({
			code: 404,
		});
	});

	test("an access point provider gets 403", async () => {
		const app: Caller = { username: "app1", role: "ACCESS_POINT_PROVIDER", accessPointProvider: "x" };
		expect(await failure(call("participants.get", { identifier: NORDLYS }, app))).toMatchObject({ code: 403 });
	});
});

describe("the read cache", () => {
	/** How often the participants' store was asked for one participant (the read's miss path). */
	function storeReads(): { count(): number; restore(): void } {
		const participants = (
			broker.getLocalService("participants") as unknown as {
				collections: {
					participants: { findOne: (...args: unknown[]) => unknown; get: (...args: unknown[]) => unknown };
				};
			}
		).collections.participants;
		const findOne = jest.spyOn(participants, "findOne");
		const get = jest.spyOn(participants, "get");
		return {
			count: () => findOne.mock.calls.length + get.mock.calls.length,
			restore: () => {
				findOne.mockRestore();
				get.mockRestore();
			},
		};
	}

	test("a repeated read, in any spelling of the organization, is answered from the cache; a change drops it at once", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		const spelled = [created.qualifiedIdentifier, created.qualifiedIdentifier.toUpperCase()];
		await call("participants.get", { qualifiedIdentifier: spelled[0] }, sp1);
		const reads = storeReads();
		try {
			for (let i = 0; i < 5; i++)
				for (const qualifiedIdentifier of spelled)
					expect(await call<Participant>("participants.get", { qualifiedIdentifier }, sp1)).toMatchObject({
						identifier: created.identifier,
					});
			expect(reads.count()).toBe(0);
		} finally {
			reads.restore();
		}
		await call(
			"participants.update",
			{ qualifiedIdentifier: spelled[0], body: { processes: refs(ORDERING), contact } },
			sp1,
		);
		const updated = await call<Participant>("participants.get", { qualifiedIdentifier: spelled[1] }, sp1);
		expect(updated.processes?.map((process) => process.identifier)).toEqual([ORDERING]);
	});

	test("a cached read is one caller's: another provider, a transfer, ADMIN by UUID each see their own", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		await call("participants.get", { qualifiedIdentifier: created.qualifiedIdentifier }, sp1);
		await call("participants.get", { identifier: created.identifier }, admin);
		expect(
			await failure(call("participants.get", { qualifiedIdentifier: created.qualifiedIdentifier }, sp2)),
		).toMatchObject({ code: 404 });
		await call(
			"participants.transfer",
			{ qualifiedIdentifier: created.qualifiedIdentifier, serviceProviderIdentifier: SP2 },
			sp1,
		);
		expect(
			await failure(call("participants.get", { qualifiedIdentifier: created.qualifiedIdentifier }, sp1)),
		).toMatchObject({ code: 404 });
		expect(
			await call<Participant>("participants.get", { qualifiedIdentifier: created.qualifiedIdentifier }, sp2),
		).toMatchObject({ provider: { identifier: SP2 } });
		expect(await call<Participant>("participants.get", { identifier: created.identifier }, admin)).toMatchObject({
			provider: { identifier: SP2 },
		});
	});
});

describe("update", () => {
	test("update replaces contact and processes and moves lastModificationDate", async () => {
		const created = await addOrganization(sp1, [BILLING, ORDERING]);
		const newContact = { name: "Ola", email: "ola@example.no", phoneNumber: "+4791234567" };
		const updated = await call<Participant>(
			"participants.update",
			{ qualifiedIdentifier: created.qualifiedIdentifier, body: { processes: refs(MLR), contact: newContact } },
			sp1,
		);
		expect(updated.contact).toEqual(newContact);
		expect(updated.processes?.map((process) => process.identifier)).toEqual([MLR]);
		expect(updated.registrationDate).toBe(created.registrationDate);
		expect(updated.lastModificationDate).toBe(calendarDate(new Date()));
	});

	test("a process released by an update can be registered by another provider", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		await call(
			"participants.update",
			{ qualifiedIdentifier: created.qualifiedIdentifier, body: { processes: [], contact } },
			sp1,
		);
		const other = await add(sp2, {
			icd: "0192",
			organizationIdentifier: created.organizationIdentifier,
			processes: refs(BILLING),
			contact,
		});
		expect(other.processes?.map((process) => process.identifier)).toEqual([BILLING]);
	});

	test("an update cannot take a process another provider holds for the organization", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		const other = await add(sp2, {
			icd: "0192",
			organizationIdentifier: created.organizationIdentifier,
			processes: refs(ORDERING),
			contact,
		});
		const error = await failure(
			call(
				"participants.update",
				{
					qualifiedIdentifier: other.qualifiedIdentifier,
					body: { processes: refs(ORDERING, BILLING), contact },
				},
				sp2,
			),
		);
		expect(error).toMatchObject({ code: 409 });
		const unchanged = await call<Participant>(
			"participants.get",
			{ qualifiedIdentifier: other.qualifiedIdentifier },
			sp2,
		);
		expect(unchanged.processes?.map((process) => process.identifier)).toEqual([ORDERING]);
	});

	test("a restricted process the participant already holds may stay", async () => {
		const catalog = broker.getLocalService("catalog");
		expect(catalog).toBeDefined();
		const created = await addOrganization(sp1, [DESPATCH]);
		// Deprecate DESPATCH after the participant took it.
		const process = await call<Process>("catalog.getProcess", { identifier: DESPATCH }, admin);
		await call(
			"catalog.updateProcess",
			{ identifier: DESPATCH, body: { ...processForm(process), restricted: true } },
			admin,
		);
		try {
			const kept = await call<Participant>(
				"participants.update",
				{ qualifiedIdentifier: created.qualifiedIdentifier, body: { processes: refs(DESPATCH), contact } },
				sp1,
			);
			expect(kept.processes?.[0]).toMatchObject({ identifier: DESPATCH, restricted: true });
			const other = await failure(addOrganization(sp1, [DESPATCH]));
			expect(other.data?.violations).toEqual([expect.objectContaining({ code: "Restricted" })]);
		} finally {
			await call("catalog.updateProcess", { identifier: DESPATCH, body: processForm(process) }, admin);
		}
	});

	test("another provider's organization cannot be updated: 404", async () => {
		const error = await failure(
			call(
				"participants.update",
				{ qualifiedIdentifier: qid("0192", "991825827"), body: { processes: [], contact } },
				sp2,
			),
		);
		expect(error).toMatchObject({ code: 404 });
	});

	test("a deleteDate in the past or today is a validation error; a future one is answered", async () => {
		const created = await addOrganization(sp1, []);
		const today = calendarDate(new Date());
		const refused = await failure(
			call(
				"participants.update",
				{
					qualifiedIdentifier: created.qualifiedIdentifier,
					body: { processes: [], contact, deleteDate: today },
				},
				sp1,
			),
		);
		expect(refused.data?.violations).toEqual([expect.objectContaining({ field: "deleteDate", code: "Future" })]);
		const tomorrow = calendarDate(new Date(Date.now() + 86400000));
		const scheduled = await call<Participant>(
			"participants.update",
			{
				qualifiedIdentifier: created.qualifiedIdentifier,
				body: { processes: [], contact, deleteDate: tomorrow },
			},
			sp1,
		);
		expect(scheduled.deleteDate).toBe(tomorrow);
		const kept = await call<Participant>(
			"participants.update",
			{ qualifiedIdentifier: created.qualifiedIdentifier, body: { processes: [], contact } },
			sp1,
		);
		expect(kept.deleteDate).toBe(tomorrow);
		const cleared = await call<Participant>(
			"participants.update",
			{ qualifiedIdentifier: created.qualifiedIdentifier, body: { processes: [], contact, deleteDate: null } },
			sp1,
		);
		expect(cleared).not.toHaveProperty("deleteDate");
	});

	test("concurrent updates of one participant all apply, one after the other", async () => {
		const created = await addOrganization(sp1, []);
		const names = Array.from({ length: 20 }, (_, index) => `Contact ${index}`);
		const results = await Promise.all(
			names.map((name) =>
				call<Participant>(
					"participants.update",
					{
						qualifiedIdentifier: created.qualifiedIdentifier,
						body: { processes: [], contact: { ...contact, name } },
					},
					sp1,
				),
			),
		);
		expect(results).toHaveLength(20);
		const [doc] = await internals().collections.participants.find({ filter: { identifier: created.identifier } });
		expect(doc.version).toBe(21);
		expect(names).toContain((doc.contact as { name: string }).name);
	});
});

describe("scheduled deletion", () => {
	test("the sweeper removes a participant once its deleteDate has arrived, and releases its processes", async () => {
		const created = await addOrganization(sp1, [SELF_BILLING]);
		const tomorrow = calendarDate(new Date(Date.now() + 86400000));
		await call(
			"participants.update",
			{
				qualifiedIdentifier: created.qualifiedIdentifier,
				body: { processes: refs(SELF_BILLING), contact, deleteDate: tomorrow },
			},
			sp1,
		);
		expect(await call("participants.sweep", {})).toEqual({ removed: 0 });
		expect(await call("participants.sweep", { today: tomorrow })).toEqual({ removed: 1 });
		expect(await failure(call("participants.get", { identifier: created.identifier }, admin))).toMatchObject({
			code: 404,
		});
		await expect(
			add(sp2, {
				icd: "0192",
				organizationIdentifier: created.organizationIdentifier,
				processes: refs(SELF_BILLING),
				contact,
			}),
		).resolves.toBeDefined();
	});
});

describe("delete", () => {
	test("delete by qualified identifier removes the participant: then 404", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		await call("participants.delete", { qualifiedIdentifier: created.qualifiedIdentifier }, sp1);
		expect(
			await failure(call("participants.get", { qualifiedIdentifier: created.qualifiedIdentifier }, sp1)),
		).toMatchObject({ code: 404 });
		expect(
			await failure(call("participants.delete", { qualifiedIdentifier: created.qualifiedIdentifier }, sp1)),
		).toMatchObject({ code: 404 });
	});

	test("ADMIN deletes any participant by UUID; NETWORK_AUTHORITY may not", async () => {
		const created = await addOrganization(sp2, []);
		expect(await failure(call("participants.delete", { identifier: created.identifier }, authority))).toMatchObject(
			{ code: 403 },
		);
		await call("participants.delete", { identifier: created.identifier }, admin);
		expect(await failure(call("participants.get", { identifier: created.identifier }, admin))).toMatchObject({
			code: 404,
		});
	});

	test("a service provider deleting another's participant by UUID gets 404 and nothing changes", async () => {
		expect(await failure(call("participants.delete", { identifier: HAVBLIKK }, sp1))).toMatchObject({ code: 404 });
		expect(await call<Participant>("participants.get", { identifier: HAVBLIKK }, admin)).toMatchObject({
			identifier: HAVBLIKK,
		});
	});

	test("two racing deletes of one participant: one succeeds, the other is 404", async () => {
		const created = await addOrganization(sp1, []);
		const results = await Promise.allSettled([
			call("participants.delete", { identifier: created.identifier }, sp1),
			call("participants.delete", { qualifiedIdentifier: created.qualifiedIdentifier }, sp1),
		]);
		expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
		expect(
			(
				(results.find((result) => result.status === "rejected") as PromiseRejectedResult).reason as {
					code: number;
				}
			).code,
		).toBe(404);
	});
});

describe("transfer", () => {
	test("a transfer moves the participant to the named provider and moves lastModificationDate", async () => {
		const created = await addOrganization(sp1, [BILLING]);
		const answer = await call(
			"participants.transfer",
			{ qualifiedIdentifier: created.qualifiedIdentifier, serviceProviderIdentifier: SP3 },
			sp1,
		);
		expect(answer).toBeUndefined();
		expect(
			await failure(call("participants.get", { qualifiedIdentifier: created.qualifiedIdentifier }, sp1)),
		).toMatchObject({ code: 404 });
		const moved = await call<Participant>(
			"participants.get",
			{ qualifiedIdentifier: created.qualifiedIdentifier },
			sp3,
		);
		expect(moved).toMatchObject({
			identifier: created.identifier,
			provider: { identifier: SP3, title: "Vidda Regnskapssystemer AS" },
		});
		expect(moved.lastModificationDate).toBe(calendarDate(new Date()));
		expect(moved.processes?.map((process) => process.identifier)).toEqual([BILLING]);
	});

	test("a transfer to the caller's own provider is 400", async () => {
		const error = await failure(
			call(
				"participants.transfer",
				{ qualifiedIdentifier: qid("0192", "991825827"), serviceProviderIdentifier: SP1 },
				sp1,
			),
		);
		expect(error).toMatchObject({ code: 400 });
	});

	test("a transfer to an unknown provider is 404", async () => {
		const error = await failure(
			call(
				"participants.transfer",
				{
					qualifiedIdentifier: qid("0192", "991825827"),
					serviceProviderIdentifier: "11111111-0000-4000-8000-0000000000ff",
				},
				sp1,
			),
		);
		expect(error).toMatchObject({ code: 404, type: "NotFoundException" });
	});

	test("a transfer to a provider that already has the organization is 409", async () => {
		const first = await addOrganization(sp1, [BILLING]);
		await add(sp2, {
			icd: "0192",
			organizationIdentifier: first.organizationIdentifier,
			processes: refs(ORDERING),
			contact,
		});
		const error = await failure(
			call(
				"participants.transfer",
				{ qualifiedIdentifier: first.qualifiedIdentifier, serviceProviderIdentifier: SP2 },
				sp1,
			),
		);
		expect(error).toMatchObject({ code: 409, type: "ConflictException" });
	});

	test("the transfer's audit record names both providers", async () => {
		const created = await addOrganization(sp1, []);
		await call(
			"participants.transfer",
			{ qualifiedIdentifier: created.qualifiedIdentifier, serviceProviderIdentifier: SP2 },
			sp1,
		);
		const records = await internals().collections.auditOutbox.find({});
		const record = records.find(
			(candidate) => candidate.resourceId === created.identifier && candidate.operation === "transferParticipant",
		);
		expect(record).toMatchObject({
			resource: "participant",
			actor: { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: SP1 },
		});
		expect((record?.serviceProviders as string[]).sort()).toEqual([SP1, SP2].sort());
		expect(record?.before).toMatchObject({ serviceProvider: SP1 });
		expect(record?.after).toMatchObject({ serviceProvider: SP2 });
	});
});

describe("find and stream", () => {
	test("a service provider finds only its own participants; ADMIN and NETWORK_AUTHORITY find all", async () => {
		const own = await streamed({}, sp2);
		expect(own.length).toBeGreaterThan(0);
		expect(own.every((participant) => participant.provider?.identifier === SP2)).toBe(true);
		const all = await streamed({}, authority);
		expect(new Set(all.map((participant) => participant.provider?.identifier)).size).toBeGreaterThan(1);
		expect(all.length).toBe(await internals().collections.participants.count());
	});

	test("list items carry the provider, and processes only when asked", async () => {
		const [item] = await streamed({ query: "991825827" }, sp1);
		expect(item.provider).toEqual({ identifier: SP1, title: "Nordlys E-faktura AS" });
		expect(item).not.toHaveProperty("processes");
		const [withProcesses] = await streamed({ query: "991825827", processes: true }, sp1);
		expect(withProcesses.processes?.map((process) => process.identifier)).toEqual([BILLING, INVOICE_RESPONSE]);
	});

	test("a query equal to an organization identifier, or icd:identifier, matches that participant", async () => {
		for (const query of ["991825827", "0192:991825827"]) {
			const page = await call<Page<Participant>>("participants.find", { query }, admin);
			expect(page.content.map((participant) => participant.identifier)).toEqual([NORDLYS]);
		}
	});

	test("name words must each start a word of the name, case-insensitively", async () => {
		const name = "Blåbær Vekst Konsult AS";
		const created = await addOrganization(sp3, [], { name });
		for (const query of ["blåbær", "BLÅ+vek", "Kons AS", "vekst"]) {
			const hits = await streamed({ query }, sp3);
			expect(hits.map((participant) => participant.identifier)).toContain(created.identifier);
		}
		for (const query of ["låbær", "Blåbær+Nord", "ekst"]) {
			const hits = await streamed({ query }, sp3);
			expect(hits.map((participant) => participant.identifier)).not.toContain(created.identifier);
		}
	});

	test("query characters are data: patterns and operators match literally", async () => {
		const created = await addOrganization(sp3, [], { name: "Percent 100% (Pilot) A*S" });
		expect((await streamed({ query: ".*" }, sp3)).length).toBe(0);
		expect((await streamed({ query: "' OR 1=1 --" }, sp3)).length).toBe(0);
		const hits = await streamed({ query: "(pilot" }, sp3);
		expect(hits.map((participant) => participant.identifier)).toEqual([created.identifier]);
	});

	test("paged find: sort, page and size, with the envelope", async () => {
		const pageRequest = { page: 1, size: 2, sort: [{ field: "name", direction: "desc" }] };
		const page = await call<Page<Participant>>("participants.find", { pageRequest }, admin);
		const all = await streamed({}, admin);
		expect(page).toMatchObject({
			number: 1,
			size: 2,
			numberOfElements: 2,
			totalElements: all.length,
			first: false,
			sort: { sorted: true, unsorted: false, empty: false },
		});
		expect(page.pageable).toMatchObject({ pageNumber: 1, pageSize: 2, offset: 2 });
		const first = await call<Page<Participant>>(
			"participants.find",
			{ pageRequest: { ...pageRequest, page: 0 } },
			admin,
		);
		const names = [...first.content, ...page.content].map((participant) => (participant.name ?? "").toLowerCase());
		expect(names).toEqual([...names].sort().reverse());
	});
});

describe("internal actions", () => {
	test("countUsingProcess counts the participants holding a process", async () => {
		const before = await call<number>("participants.countUsingProcess", { identifier: EHF_ORDERING });
		await addOrganization(sp1, [EHF_ORDERING]);
		expect(await call<number>("participants.countUsingProcess", { identifier: EHF_ORDERING })).toBe(before + 1);
	});

	test("organizationProcessSets pages by key without skipping anyone", async () => {
		const all = await call<{ participant: string }[]>("participants.organizationProcessSets", {});
		const paged: string[] = [];
		let after: string | undefined;
		for (;;) {
			const page = await call<{ participant: string }[]>("participants.organizationProcessSets", {
				...(after ? { after } : {}),
				limit: 3,
			});
			paged.push(...page.map((set) => set.participant));
			if (page.length < 3) break;
			after = page[page.length - 1].participant;
		}
		expect(paged).toEqual(all.map((set) => set.participant));
	});

	test("a seed section with a refused row is refused whole, with reasons, and writes nothing", async () => {
		const before = await internals().collections.participants.count();
		const fresh = organizationNumber();
		const error = await failure(
			call("participants.importSeed", {
				participants: [
					{
						serviceProvider: SP3,
						icd: "0192",
						organizationIdentifier: fresh,
						processes: refs(CATALOGUE),
						contact,
					},
					{
						serviceProvider: SP3,
						icd: "0192",
						organizationIdentifier: "991825827",
						processes: refs(BILLING),
						contact,
					},
					{
						serviceProvider: "11111111-0000-4000-8000-0000000000ff",
						icd: "0192",
						organizationIdentifier: fresh,
						processes: [],
						contact,
					},
				],
			}),
		);
		expect(error).toMatchObject({ code: 400 });
		const reasons = (error.data as unknown as { reasons: { path: string; message: string }[] }).reasons;
		expect(reasons.map((reason) => reason.path)).toEqual([
			"participants[1].processes[0].identifier",
			"participants[2].serviceProvider",
		]);
		expect(await internals().collections.participants.count()).toBe(before);
	});

	test("a seed row or an imported record with a look-alike organization identifier is refused, and nothing is written", async () => {
		const before = await internals().collections.participants.count();
		const rows = LOOK_ALIKES.map(([, organizationIdentifier]) => ({
			serviceProvider: SP3,
			icd: "0088",
			organizationIdentifier,
			processes: refs(CATALOGUE),
			contact,
		}));
		const seeded = await failure(call("participants.importSeed", { participants: rows }));
		const expected = rows.map((_row, index) => `participants[${index}].organizationIdentifier`);
		const reasonsOf = (error: unknown) =>
			(error as { data: { reasons: { path: string; message: string }[] } }).data.reasons;
		expect(reasonsOf(seeded).map((reason) => reason.path)).toEqual(expected);
		expect(reasonsOf(seeded)[0].message).toBe("must match the required pattern");

		const records = rows.map((row, index) => ({
			...row,
			identifier: `88888888-0000-4000-8000-00000000000${index}`,
			registrationDate: "2026-01-01",
			lastModificationDate: "2026-01-01",
		}));
		const imported = await failure(call("participants.importRecords", { participants: records }));
		expect(reasonsOf(imported).map((reason) => reason.path)).toEqual(expected);
		const dryRun = await call<{ reasons: { field: string }[] }>("participants.importRecords", {
			participants: records,
			dryRun: true,
		});
		expect(dryRun.reasons.map((reason) => reason.field)).toEqual(rows.map(() => "organizationIdentifier"));
		expect(await internals().collections.participants.count()).toBe(before);

		// The plain GLN itself imports.
		const plain = await call<{ participants: { created: number } }>("participants.importRecords", {
			participants: [{ ...records[0], organizationIdentifier: PLAIN_GLN }],
		});
		expect(plain.participants.created).toBe(1);
	});

	test("importing the demo seed again changes nothing", async () => {
		const result = await call<{ participants: { created: number; updated: number; unchanged: number } }>(
			"participants.importSeed",
			{ participants: demoSeed().participants },
		);
		expect(result.participants).toEqual({ created: 0, updated: 0, unchanged: 4 });
	});
});

describe("change outbox", () => {
	test("a change the channel refused stays in the outbox, and the relay publishes it later", async () => {
		const channels = broker as unknown as { sendToChannel: (name: string, payload: unknown) => Promise<void> };
		const original = channels.sendToChannel;
		const outbox = internals().collections.changeOutbox;
		channels.sendToChannel = async () => {
			throw new Error("the channel is down");
		};
		let created: Participant;
		try {
			created = await addOrganization(sp1, [MLR]);
		} finally {
			channels.sendToChannel = original;
		}
		const waiting = await outbox.find({});
		expect(waiting.map((entry) => (entry.change as { participant: string }).participant)).toEqual([
			created.identifier,
		]);

		const published: unknown[] = [];
		channels.sendToChannel = async (name, payload) => {
			published.push(payload);
			return original.call(broker, name, payload);
		};
		try {
			expect(await call("participants.relayChanges", {})).toEqual({ published: 1 });
		} finally {
			channels.sendToChannel = original;
		}
		expect(published).toEqual([
			expect.objectContaining({ participant: created.identifier, version: 1, deleted: false }),
		]);
		expect(await outbox.count()).toBe(0);
	});

	test("a published change leaves nothing in the outbox", async () => {
		await addOrganization(sp1, []);
		expect(await internals().collections.changeOutbox.count()).toBe(0);
	});
});

describe("catalog changes", () => {
	test("a renamed process shows in participant answers at once", async () => {
		const process = await call<Process>("catalog.getProcess", { identifier: BILLING }, admin);
		await call<Participant>("participants.get", { identifier: NORDLYS }, admin); // warm the resolution cache
		await call(
			"catalog.updateProcess",
			{ identifier: BILLING, body: { ...processForm(process), title: "Billing renamed" } },
			admin,
		);
		try {
			const participant = await call<Participant>("participants.get", { identifier: NORDLYS }, admin);
			expect(participant.processes?.[0].title).toBe("Billing renamed");
		} finally {
			await call("catalog.updateProcess", { identifier: BILLING, body: processForm(process) }, admin);
		}
	});
});

/** A Process answer → the request body that writes it back. */
function processForm(process: Process) {
	return {
		domain: process.domain,
		title: process.title,
		alias: process.alias,
		qualifiedIdentifier: process.qualifiedIdentifier,
		restricted: process.restricted,
		visible: process.visible,
		capabilities: process.capabilities.map(({ identifier }) => ({ identifier })),
		documentTypes: process.documentTypes.map(({ identifier }) => ({ identifier })),
		dependencies: process.dependencies.map(({ identifier }) => ({ identifier })),
		requiredICDs: process.requiredICDs,
	};
}
