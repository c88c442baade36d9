/**
 * The audit trail (decisions §6 last bullet; docs/operations.md "Audit trail"): every writing
 * service's change arrives in `audit` through its outbox relay, at least once and stored once,
 * and a record whose change committed is never lost: not while `audit` is stopped, not when
 * the process ends between the commit and the relay.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Service, ServiceBroker } from "moleculer";
import type { AuditRecord } from "../../src/platform/audit";
import { eventsFilter } from "../../services/audit/audit-query";
import { instantBound } from "../../src/contract/dates";
import { createRegistryBroker, loadServiceSchema } from "../../services";
import { accountIdentifier } from "../../services/accounts/accounts.service";
import type { Caller, Participant } from "../../src/contract/model";
import { OutboxRelay, type OutboxMessage } from "../../src/platform/outbox-relay";
import type { Page } from "../../src/contract/paging";
import { importSeed } from "../../src/exchange/seed";
import { callerMeta } from "../../src/platform/caller-signature";
import { SqliteStore } from "../../src/store";
import type { Collection, StoredDoc } from "../../src/store/types";
import { demoSeed } from "../support/registry";
import { organizationNumberSource } from "../support/bulk";

const SP1 = "11111111-0000-4000-8000-000000000001";
const SP2 = "11111111-0000-4000-8000-000000000002";
const BILLING = "55555555-0000-4000-8000-000000000001";
const CATALOGUE = "55555555-0000-4000-8000-000000000007";

const sp1: Caller = { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: SP1 };
const sp2: Caller = { username: "sp2", role: "SERVICE_PROVIDER", serviceProvider: SP2 };
const admin: Caller = { username: "admin", role: "ADMIN" };
const authority: Caller = { username: "authority", role: "NETWORK_AUTHORITY" };
const apProvider: Caller = {
	username: "app1",
	role: "ACCESS_POINT_PROVIDER",
	accessPointProvider: "22222222-0000-4000-8000-000000000001",
};
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const WRITERS = ["catalog", "participants", "accounts", "accessPoints"];

type Relayed = Service & {
	collections: { auditOutbox: Collection<StoredDoc> };
	auditRelay: OutboxRelay<AuditRecord & StoredDoc>;
};

/** Polls until `check` returns a value (not undefined/false) or the deadline passes: the relay is asynchronous. */
async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 10000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value !== undefined && value !== false) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

/** A fresh valid Norwegian organization number (MOD11) per call. */
const organizationNumber = organizationNumberSource(30_000_000);

function caller(broker: ServiceBroker) {
	return <T>(action: string, params: object, user?: Caller) =>
		broker.call<T, object>(action, params, { meta: user ? callerMeta(broker, user) : {} });
}

function events(
	broker: ServiceBroker,
	user: Caller | undefined,
	query: Record<string, unknown> = {},
): Promise<Page<AuditRecord>> {
	return caller(broker)<Page<AuditRecord>>(
		"audit.find",
		{ pageRequest: { page: 0, size: 1000, sort: [] }, ...query },
		user,
	);
}

async function eventsOf(broker: ServiceBroker, resourceId: string, user: Caller = admin): Promise<AuditRecord[]> {
	return (await events(broker, user)).content.filter((record) => record.resourceId === resourceId);
}

function outbox(broker: ServiceBroker, service: string): Relayed["collections"]["auditOutbox"] {
	return (broker.getLocalService(service) as Relayed).collections.auditOutbox;
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; type: string; message: string }> {
	try {
		await promise;
	} catch (error) {
		return error as never;
	}
	throw new Error("expected the call to fail");
}

// The stores read DATA_DIR when they open: nothing of these tests is kept, unless a test says so.
process.env.DATA_DIR = ":memory:";

// ---- the relay itself (src/platform/outbox-relay.ts) --------------------------------------------------

describe("OutboxRelay", () => {
	let store: SqliteStore;
	let messages: Collection<OutboxMessage & { n: number }>;
	let n = 0;
	const message = () => ({
		identifier: `m${String(++n).padStart(4, "0")}`,
		at: new Date(Date.now() + n).toISOString(),
		n,
	});

	beforeEach(async () => {
		store = new SqliteStore(":memory:");
		messages = await store.collection({
			collection: "outbox",
			fields: { at: { kind: "string" } },
			indexes: [{ name: "at", fields: ["at"] }],
		});
	});
	afterEach(() => store.close());

	test("delivers the oldest first in bounded batches and deletes exactly what was acknowledged", async () => {
		for (let i = 0; i < 5; i++) await messages.insert(message());
		const batches: number[][] = [];
		let late: OutboxMessage | undefined;
		const relay = new OutboxRelay({
			name: "test",
			outbox: messages,
			batchSize: 2,
			deliver: async (batch) => {
				batches.push(batch.map((entry) => entry.n));
				// A change committed while a delivery is under way is not deleted with that batch.
				if (!late) late = await messages.insert(message());
			},
		});
		expect(await relay.drain()).toBe(6);
		expect(batches).toEqual([
			[1, 2],
			[3, 4],
			[5, 6],
		]);
		expect(await messages.count()).toBe(0);
	});

	test("a failed delivery keeps every message of the batch; the next run delivers them", async () => {
		for (let i = 0; i < 3; i++) await messages.insert(message());
		let up = false;
		const delivered: number[] = [];
		const relay = new OutboxRelay({
			name: "test",
			outbox: messages,
			deliver: async (batch) => {
				if (!up) throw new Error("audit is not reachable");
				delivered.push(...batch.map((entry) => entry.n));
			},
		});
		await expect(relay.drain()).rejects.toThrow("not reachable");
		expect(await messages.count()).toBe(3);
		relay.kick(); // in the background: a failure is logged, not thrown
		await relay.settled();
		expect(await messages.count()).toBe(3);
		up = true;
		relay.kick();
		await relay.settled();
		expect(await messages.count()).toBe(0);
		expect(delivered).toHaveLength(3);
	});

	test("kicks during a run coalesce into one more round, and a stopped relay does nothing", async () => {
		let deliveries = 0;
		let release: () => void = () => undefined;
		const relay = new OutboxRelay({
			name: "test",
			outbox: messages,
			deliver: async () => {
				deliveries++;
				if (deliveries === 1) await new Promise<void>((resolve) => (release = resolve));
			},
		});
		await messages.insert(message());
		relay.kick();
		await eventually(async () => deliveries === 1, "the first delivery");
		await messages.insert(message());
		for (let i = 0; i < 20; i++) relay.kick();
		release();
		await relay.settled();
		expect(deliveries).toBe(2);
		expect(await messages.count()).toBe(0);
		await relay.stop();
		await messages.insert(message());
		relay.kick();
		await relay.settled();
		expect(await messages.count()).toBe(1);
	});
});

// ---- the query parameters (services/audit/audit-query.ts) -----------------------------------------------

describe("events query", () => {
	test("from/to: a date is the whole UTC day, a date-time is an instant (UTC without a zone)", () => {
		expect(instantBound("from", "2026-03-01", "from")).toBe("2026-03-01T00:00:00.000Z");
		expect(instantBound("to", "2026-03-01", "to")).toBe("2026-03-01T23:59:59.999Z");
		expect(instantBound("from", "2026-03-01T10:15", "from")).toBe("2026-03-01T10:15:00.000Z");
		expect(instantBound("from", "2026-03-01T10:15:30+01:00", "from")).toBe("2026-03-01T09:15:30.000Z");
		expect(instantBound("from", "2026-03-01T10:15:30 01:00", "from")).toBe("2026-03-01T09:15:30.000Z");
		expect(instantBound("to", "2026-03-01T10:15:30.5Z", "to")).toBe("2026-03-01T10:15:30.500Z");
	});

	test.each([
		"yesterday",
		"2026-02-30",
		"2026-13-01",
		"2026-3-1",
		"2026-03-01T25:00",
		"2026-03-01T10:15:30+25:00",
		"",
		"1700000000",
	])("from/to %p is 400 TypeMismatch", (value) => {
		expect(() => instantBound("from", value, "from")).toThrow(
			expect.objectContaining({ code: 400, type: "MethodArgumentTypeMismatchException" }),
		);
	});

	test("scope: a service provider reads its own provider's records, NETWORK_AUTHORITY participants' and the catalog's, ADMIN all, others nothing", () => {
		expect(eventsFilter(sp1, {})).toEqual({ serviceProviders: SP1 });
		expect(eventsFilter(admin, {})).toEqual({});
		expect(eventsFilter(authority, {})).toEqual({
			resource: { in: ["participant", "transfer", "process", "documentType", "capability"] },
		});
		expect(() => eventsFilter(apProvider, {})).toThrow(expect.objectContaining({ code: 403 }));
		expect(() => eventsFilter(undefined, {})).toThrow(expect.objectContaining({ code: 403 }));
	});

	test("participant: a UUID names one participant, a qualified identifier an organization; anything else is 400", () => {
		expect(eventsFilter(admin, { participant: "77777777-0000-4000-8000-00000000000A" })).toEqual({
			participant: "77777777-0000-4000-8000-00000000000a",
		});
		expect(eventsFilter(sp1, { participant: "ISO6523-ACTORID-UPIS::0192:991825827" })).toEqual({
			serviceProviders: SP1,
			organizationKey: "0192:991825827",
		});
		expect(() => eventsFilter(admin, { participant: "0192:991825827" })).toThrow(
			expect.objectContaining({ code: 400 }),
		);
	});
});

// ---- the audit service on the registry's broker ---------------------------------------------

describe("audit trail of the registry (in memory)", () => {
	let broker: ServiceBroker;
	let call: ReturnType<typeof caller>;

	beforeAll(async () => {
		broker = createRegistryBroker({
			env: { DATA_DIR: ":memory:" },
			services: ["catalog", "accounts", "accessPoints", "participants", "lookup", "audit"],
			overrides: { logger: false },
		});
		await broker.start();
		call = caller(broker);
		await importSeed(broker, demoSeed());
	});
	afterAll(() => broker.stop());

	test("the seed import's records arrive from every writing service, and the outboxes empty", async () => {
		const resources = await eventually(async () => {
			const seen = new Set(
				(await events(broker, admin, { operation: "seed" })).content.map((record) => record.resource),
			);
			return seen.size >= 8 ? seen : undefined;
		}, "the seed's records");
		expect([...resources].sort()).toEqual([
			"accessPoint",
			"accessPointProvider",
			"account",
			"capability",
			"documentType",
			"participant",
			"process",
			"serviceProvider",
		]);
		for (const service of WRITERS)
			await eventually(async () => (await outbox(broker, service).count()) === 0, `${service}'s outbox to empty`);
	});

	test("no record carries a password or its hash", async () => {
		await call(
			"accounts.resetPassword",
			{ identifier: accountIdentifier("sp2"), body: { password: "a-new-password-1234" } },
			admin,
		);
		const records = await eventually(async () => {
			const found = (await events(broker, admin, { operation: "resetPassword" })).content;
			return found.length ? found : undefined;
		}, "the resetPassword record");
		expect(records[0]).toMatchObject({ resource: "account", actor: { username: "admin", role: "ADMIN" } });
		const all = JSON.stringify((await events(broker, admin)).content);
		expect(all).not.toMatch(/passwordHash|scrypt|a-new-password|demo-password/);
	});

	test("a catalog change arrives with who, role, when, operation, before and after", async () => {
		const started = new Date().toISOString();
		const process = await call<{ identifier: string }>(
			"catalog.addProcess",
			{ body: { domain: "Audit", title: "Audited" } },
			admin,
		);
		await call(
			"catalog.updateProcess",
			{ identifier: process.identifier, body: { domain: "Audit", title: "Audited again" } },
			admin,
		);
		const records = await eventually(async () => {
			const found = await eventsOf(broker, process.identifier);
			return found.length === 2 ? found : undefined;
		}, "the process's two records");
		const byOperation = Object.fromEntries(records.map((record) => [record.operation, record]));
		expect(byOperation.addProcess).toMatchObject({
			resource: "process",
			actor: { username: "admin", role: "ADMIN" },
			before: null,
			after: { title: "Audited" },
			serviceProviders: [],
		});
		expect(byOperation.updateProcess).toMatchObject({
			before: { title: "Audited" },
			after: { title: "Audited again" },
		});
		expect(byOperation.addProcess.at >= started).toBe(true);
		expect(byOperation.addProcess).not.toHaveProperty("version");
		expect(byOperation.addProcess).not.toHaveProperty("participant");
	});

	test("a refused change leaves no record: the record is in the change's batch", async () => {
		const qualifiedIdentifier = "cenbii-procid-ubl::audit-unique";
		await call("catalog.addProcess", { body: { domain: "Audit", qualifiedIdentifier } }, admin);
		const before = await eventually(async () => {
			const found = (await events(broker, admin, { operation: "addProcess" })).content.filter(
				(record) =>
					(record.after as { qualifiedIdentifier?: string })?.qualifiedIdentifier === qualifiedIdentifier,
			);
			return found.length === 1 ? found : undefined;
		}, "the first add's record");
		await eventually(async () => (await outbox(broker, "catalog").count()) === 0, "the outbox to empty");
		expect(
			await failure(call("catalog.addProcess", { body: { domain: "Audit", qualifiedIdentifier } }, admin)),
		).toMatchObject({ code: 409 });
		expect(await outbox(broker, "catalog").count()).toBe(0);
		const after = (await events(broker, admin, { operation: "addProcess" })).content.filter(
			(record) => (record.after as { qualifiedIdentifier?: string })?.qualifiedIdentifier === qualifiedIdentifier,
		);
		expect(after).toEqual(before);
	});

	test("participant changes: add, update and transfer arrive; a transfer names both providers; each provider sees only its own", async () => {
		const organizationIdentifier = organizationNumber();
		const participant = await call<Participant>(
			"participants.add",
			{
				body: {
					icd: "0192",
					organizationIdentifier,
					name: "Revisjon AS",
					processes: [{ identifier: BILLING }],
					contact,
				},
			},
			sp1,
		);
		const qualifiedIdentifier = `iso6523-actorid-upis::0192:${organizationIdentifier}`;
		await call(
			"participants.update",
			{ qualifiedIdentifier, body: { processes: [{ identifier: BILLING }, { identifier: CATALOGUE }], contact } },
			sp1,
		);
		await call("participants.transfer", { qualifiedIdentifier, serviceProviderIdentifier: SP2 }, sp1);
		const records = await eventually(async () => {
			const found = await eventsOf(broker, participant.identifier);
			return found.length === 3 ? found : undefined;
		}, "the participant's three records");
		// Newest first by default (records of the same millisecond in either order).
		expect(records.map((record) => record.operation).sort()).toEqual([
			"addParticipant",
			"transferParticipant",
			"updateParticipant",
		]);
		expect(records.every((record, index) => index === 0 || records[index - 1].at >= record.at)).toBe(true);
		const transfer = records.find((record) => record.operation === "transferParticipant")!;
		expect(transfer).toMatchObject({
			resource: "participant",
			actor: { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: SP1 },
			before: { serviceProvider: SP1 },
			after: { serviceProvider: SP2 },
		});
		expect([...transfer.serviceProviders].sort()).toEqual([SP1, SP2]);

		const seenBy = async (user: Caller) =>
			(await eventsOf(broker, participant.identifier, user)).map((record) => record.operation).sort();
		expect(await seenBy(sp1)).toEqual(["addParticipant", "transferParticipant", "updateParticipant"]);
		expect(await seenBy(sp2)).toEqual(["transferParticipant"]);
		expect(await seenBy(authority)).toEqual(["addParticipant", "transferParticipant", "updateParticipant"]);
		// sp2 never sees sp1's records of other participants, nor catalog or account changes.
		const sp2Records = (await events(broker, sp2)).content;
		expect(sp2Records.length).toBeGreaterThan(0);
		for (const record of sp2Records) {
			expect(record.resource).toBe("participant");
			expect(record.serviceProviders).toContain(SP2);
		}

		// participant filter: the UUID, or the organization (for sp2: its participant of it).
		expect((await events(broker, admin, { participant: participant.identifier })).totalElements).toBe(3);
		expect(
			(await events(broker, sp2, { participant: qualifiedIdentifier })).content.map((record) => record.operation),
		).toEqual(["transferParticipant"]);
		expect(
			(
				await events(broker, sp1, {
					participant: qualifiedIdentifier.replace("iso6523-actorid-upis", "ISO6523-ACTORID-UPIS"),
				})
			).totalElements,
		).toBe(3);
	});

	test("an account change arrives; a SERVICE_PROVIDER does not see it", async () => {
		await call(
			"accounts.addAccount",
			{ body: { username: "auditor-test", password: "long-enough-password", role: "NETWORK_AUTHORITY" } },
			admin,
		);
		const [record] = await eventually(async () => {
			const found = (await events(broker, admin, { operation: "addAccount" })).content;
			return found.length ? found : undefined;
		}, "the addAccount record");
		expect(record).toMatchObject({
			resource: "account",
			after: { username: "auditor-test", role: "NETWORK_AUTHORITY" },
		});
		expect(record.after).not.toHaveProperty("passwordHash");
		expect((await events(broker, sp1, { operation: "addAccount" })).totalElements).toBe(0);
		expect((await events(broker, authority, { operation: "addAccount" })).totalElements).toBe(0);
	});

	test("filters: operation, from and to (inclusive), paging; bad values are 400; roles outside the table are 403, no caller 401", async () => {
		const all = (await events(broker, admin)).content;
		const newest = all[0];
		const oldest = all[all.length - 1];
		expect(newest.at >= oldest.at).toBe(true);
		const exactly = await events(broker, admin, { from: newest.at, to: newest.at });
		expect(exactly.content.map((record) => record.identifier)).toContain(newest.identifier);
		expect(exactly.content.every((record) => record.at === newest.at)).toBe(true);
		expect(
			(await events(broker, admin, { from: oldest.at.slice(0, 10), to: newest.at.slice(0, 10) })).totalElements,
		).toBe(all.length);
		expect((await events(broker, admin, { to: "2000-01-01" })).totalElements).toBe(0);

		const page = await call<Page<AuditRecord>>(
			"audit.find",
			{ pageRequest: { page: 1, size: 2, sort: [{ field: "operation", direction: "asc" }] } },
			admin,
		);
		expect(page).toMatchObject({
			number: 1,
			size: 2,
			numberOfElements: 2,
			totalElements: all.length,
			first: false,
		});
		expect(page.content[0].operation <= page.content[1].operation).toBe(true);

		expect(await failure(events(broker, admin, { from: "last week" }))).toMatchObject({
			code: 400,
			type: "MethodArgumentTypeMismatchException",
		});
		expect(await failure(events(broker, admin, { participant: "nobody" }))).toMatchObject({ code: 400 });
		expect(await failure(events(broker, apProvider))).toMatchObject({ code: 403, type: "AccessDeniedException" });
		expect(await failure(events(broker, undefined))).toMatchObject({ code: 401, type: "AuthenticationException" });
	});

	test("a redelivered record is stored once (the record identifier is the document identifier)", async () => {
		const [record] = (await events(broker, admin, { operation: "addProcess" })).content;
		const total = (await events(broker, admin)).totalElements;
		await call("audit.record", { records: [record, record] });
		await call("audit.record", { records: [record] });
		expect((await events(broker, admin)).totalElements).toBe(total);
		expect(
			(await eventsOf(broker, record.resourceId)).filter((found) => found.identifier === record.identifier),
		).toEqual([record]);
	});
});

// ---- nothing is lost -------------------------------------------------------------------------

describe("a committed change's record is never lost", () => {
	test("a record written while audit is stopped arrives after it starts", async () => {
		const broker = createRegistryBroker({
			env: { DATA_DIR: ":memory:" },
			services: ["catalog", "audit"],
			overrides: { logger: false },
		});
		await broker.start();
		try {
			await broker.destroyService(broker.getLocalService("audit")!);
			const process = await caller(broker)<{ identifier: string }>(
				"catalog.addProcess",
				{ body: { domain: "Audit", title: "While audit was away" } },
				admin,
			);
			const relay = (broker.getLocalService("catalog") as Relayed).auditRelay;
			await relay.settled();
			expect(await outbox(broker, "catalog").count()).toBe(1);

			broker.createService(loadServiceSchema("audit"));
			await broker.waitForServices(["audit"], 10000);
			const [record] = await eventually(async () => {
				const found = await eventsOf(broker, process.identifier);
				return found.length ? found : undefined;
			}, "the record to arrive once audit is back");
			expect(record).toMatchObject({ operation: "addProcess", actor: { username: "admin" } });
			await eventually(async () => (await outbox(broker, "catalog").count()) === 0, "the outbox to empty");
		} finally {
			await broker.stop();
		}
	});

	test("a process that ends between the commit and the relay: the next start on the same DATA_DIR delivers the record", async () => {
		const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-audit-"));
		const start = async () => {
			const broker = createRegistryBroker({
				env: { DATA_DIR: dataDir },
				services: ["catalog", "audit"],
				overrides: { logger: false },
			});
			process.env.DATA_DIR = dataDir; // the stores read DATA_DIR when they open
			try {
				await broker.start();
			} finally {
				process.env.DATA_DIR = ":memory:";
			}
			return broker;
		};
		try {
			const first = await start();
			// The relay never runs in this process: as if it died right after the commit.
			const relay = (first.getLocalService("catalog") as Relayed).auditRelay;
			await relay.stop();
			const added = await caller(first)<{ identifier: string }>(
				"catalog.addProcess",
				{ body: { domain: "Audit", title: "Committed, not relayed" } },
				admin,
			);
			expect(await outbox(first, "catalog").count()).toBe(1);
			expect(await eventsOf(first, added.identifier)).toEqual([]);
			await first.stop();

			const second = await start();
			try {
				const [record] = await eventually(async () => {
					const found = await eventsOf(second, added.identifier);
					return found.length ? found : undefined;
				}, "the record after the restart");
				expect(record).toMatchObject({
					operation: "addProcess",
					resource: "process",
					after: { title: "Committed, not relayed" },
				});
				await eventually(async () => (await outbox(second, "catalog").count()) === 0, "the outbox to empty");
			} finally {
				await second.stop();
			}
		} finally {
			fs.rmSync(dataDir, { recursive: true, force: true });
		}
	});
});
