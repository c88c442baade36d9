/**
 * The organization process lookup on an in-memory broker with the real catalog, accounts
 * and participants services, seeded from seed/demo.json (spec "Organizations",
 * decisions §4, architecture "Lookup").
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ActionHandler, ActionSchema, Context, Middleware, ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import { channelPrefix, channelsAdapter, channelsMiddleware, PARTICIPANTS_CHANGED } from "../../src/platform/channels";
import type { Caller, Participant, Process } from "../../src/contract/model";
import { importSeed } from "../../src/exchange/seed";
import { callerMeta } from "../../src/platform/caller-signature";
import { demoSeed } from "../support/registry";

const SP1 = "11111111-0000-4000-8000-000000000001";
const SP2 = "11111111-0000-4000-8000-000000000002";
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006";
const CATALOGUE = "55555555-0000-4000-8000-000000000007";
const PUNCH_OUT = "55555555-0000-4000-8000-000000000010"; // visible: false
const NORDLYS = qid("991825827"); // SP1: BILLING + INVOICE_RESPONSE

const sp1: Caller = { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: SP1 };
const sp2: Caller = { username: "sp2", role: "SERVICE_PROVIDER", serviceProvider: SP2 };
const admin: Caller = { username: "admin", role: "ADMIN" };
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const SERVICES = ["catalog", "accounts", "accessPoints", "participants", "lookup"];

function qid(organization: string, icd = "0192"): string {
	return `iso6523-actorid-upis::${icd}:${organization}`;
}

let nextOrganization = 1;
/** Organizations under ICD 0088 (no check digit rule) so each test has its own. */
function newOrganization(): string {
	return `lookup-test-${nextOrganization++}`;
}

/** Local action calls, by name: the hot path must make none but its own. */
const calls: string[] = [];
const recordCalls: Middleware = {
	localAction(next: ActionHandler, action: ActionSchema) {
		return (ctx: Context) => {
			calls.push(String(action.name));
			return next(ctx);
		};
	},
};

/** The registry's own broker configuration (validator, memory cacher, in-process channels), plus the call recorder. */
function newBroker(services: string[]): ServiceBroker {
	return createRegistryBroker({
		env: { DATA_DIR: process.env.DATA_DIR },
		services,
		overrides: { logger: false, middlewares: [channelsMiddleware({}), recordCalls] },
	});
}

let broker: ServiceBroker;

function call<T>(target: ServiceBroker, action: string, params: object, user?: Caller): Promise<T> {
	return target.call<T, object>(action, params, { meta: user ? callerMeta(target, user) : {} });
}

function lookup(qualifiedIdentifier: string, user?: Caller, target = broker): Promise<Process[]> {
	return call<Process[]>(target, "lookup.organizationProcesses", { qualifiedIdentifier }, user);
}

async function lookupStatus(qualifiedIdentifier: string, user?: Caller): Promise<number> {
	try {
		await lookup(qualifiedIdentifier, user);
		return 200;
	} catch (error) {
		return (error as { code: number }).code;
	}
}

async function eventually<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (accept(value) || Date.now() > deadline) return value;
		await new Promise((resolve) => setImmediate(resolve));
	}
}

function add(user: Caller, organization: string, processes: string[]): Promise<Participant> {
	return call<Participant>(
		broker,
		"participants.add",
		{
			body: {
				icd: "0088",
				organizationIdentifier: organization,
				processes: processes.map((identifier) => ({ identifier })),
				contact,
			},
		},
		user,
	);
}

const ids = (processes: Process[]) => processes.map((process) => process.identifier).sort();

/** Publishes a message on the participant changes' channel, as participants does (the lookup handles it meanwhile). */
async function publish(payload: unknown): Promise<void> {
	const send = (broker as unknown as { sendToChannel(name: string, payload: unknown): Promise<void> }).sendToChannel;
	await send.call(broker, PARTICIPANTS_CHANGED, payload);
}

beforeAll(async () => {
	process.env.DATA_DIR = ":memory:";
	broker = newBroker(SERVICES);
	await broker.start();
	await importSeed(broker, demoSeed());
});
afterAll(() => broker.stop());

describe("organization processes", () => {
	test("answers full Process objects, the same shape as the catalog's", async () => {
		const answer = await lookup(NORDLYS, admin);
		expect(ids(answer)).toEqual([BILLING, INVOICE_RESPONSE]);
		const fromCatalog = await call<Process>(broker, "catalog.getProcess", { identifier: BILLING }, admin);
		expect(answer.find((process) => process.identifier === BILLING)).toEqual(fromCatalog);
	});

	test("answers the union of the processes of every participant of the organization", async () => {
		const organization = newOrganization();
		await add(sp1, organization, [BILLING]);
		await add(sp2, organization, [ORDERING, CATALOGUE]);
		expect(ids(await lookup(qid(organization, "0088")))).toEqual([BILLING, ORDERING, CATALOGUE].sort());
	});

	test("an organization with no participant is 404 with the organization message", async () => {
		const error = await lookup(qid("000000000")).catch((caught) => caught);
		expect(error).toMatchObject({
			code: 404,
			type: "NotFoundException",
			message: `organization for qualified identifier ${qid("000000000")} cannot be found`,
		});
	});

	test("anonymous callers never see a hidden process; an organization holding only hidden ones answers []", async () => {
		const organization = newOrganization();
		await add(sp1, organization, [PUNCH_OUT]);
		expect(await lookup(qid(organization, "0088"))).toEqual([]);
		expect(ids(await lookup(qid(organization, "0088"), sp2))).toEqual([PUNCH_OUT]);
	});

	test("the organization identifier of the path is compared case-insensitively", async () => {
		await add(sp1, "CaseOrg-1", [BILLING]);
		expect(ids(await lookup("ISO6523-ACTORID-UPIS::0088:caseorg-1"))).toEqual([BILLING]);
	});
});

describe("participant changes reach the lookup", () => {
	test("an add, an update and a delete are visible by the time the request answers", async () => {
		const organization = newOrganization();
		const participant = await add(sp1, organization, [BILLING]);
		expect(ids(await lookup(participant.qualifiedIdentifier))).toEqual([BILLING]);
		await call(
			broker,
			"participants.update",
			{
				qualifiedIdentifier: participant.qualifiedIdentifier,
				body: { processes: [{ identifier: ORDERING }], contact },
			},
			sp1,
		);
		expect(ids(await lookup(participant.qualifiedIdentifier))).toEqual([ORDERING]);
		await call(broker, "participants.delete", { qualifiedIdentifier: participant.qualifiedIdentifier }, sp1);
		expect(await lookupStatus(participant.qualifiedIdentifier)).toBe(404);
	});

	test("a transfer keeps the organization's processes", async () => {
		const organization = newOrganization();
		const participant = await add(sp1, organization, [BILLING]);
		await call(
			broker,
			"participants.transfer",
			{ qualifiedIdentifier: participant.qualifiedIdentifier, serviceProviderIdentifier: SP2 },
			sp1,
		);
		expect(ids(await lookup(participant.qualifiedIdentifier))).toEqual([BILLING]);
	});

	test("applying is idempotent: a redelivered or older change changes nothing and tells no one", async () => {
		const organization = newOrganization();
		const path = qid(organization, "0088");
		const change = {
			participant: "p-apply",
			organizationKey: `0088:${organization}`,
			processes: [BILLING],
			version: 2,
			deleted: false,
		};
		const heard: unknown[] = [];
		const listener = broker.createService({
			name: "lookup-invalidated-probe",
			events: { "lookup.invalidated": (ctx: Context) => void heard.push(ctx.params) },
		});
		await broker.waitForServices("lookup-invalidated-probe");
		try {
			await publish(change);
			expect(
				ids(
					await eventually(
						() => lookup(path).catch(() => []),
						(answer) => answer.length > 0,
					),
				),
			).toEqual([BILLING]);
			expect(heard).toHaveLength(1);
			await publish(change);
			await publish({ ...change, version: 1, processes: [ORDERING] });
			await publish({ ...change, version: 3, processes: [], deleted: true });
			expect(
				await eventually(
					() => lookupStatus(path),
					(status) => status === 404,
				),
			).toBe(404);
			await publish({ ...change, version: 2 });
			expect(await lookupStatus(path)).toBe(404);
			// The add and the delete; the redelivery and the two late changes told no one.
			expect(heard).toHaveLength(2);
		} finally {
			await broker.destroyService(listener);
		}
	});

	test("a node that wrote the read model and stopped before announcing it: the redelivered change announces it (every node forgets), and a further redelivery tells no one", async () => {
		const organization = newOrganization();
		const path = qid(organization, "0088");
		const organizationKey = `0088:${organization}`;
		const change = { participant: "p-announce", organizationKey, processes: [BILLING], version: 1, deleted: false };
		const service = broker.getLocalService("lookup") as unknown as {
			applyChange(change: unknown): Promise<boolean>;
			answers: { changed(organizationKey: string, version: number): Promise<unknown> };
		};
		const heard: { organizationKey?: string }[] = [];
		const listener = broker.createService({
			name: "lookup-announced-probe",
			events: {
				"lookup.invalidated": (ctx: Context<{ organizationKey?: string }>) => void heard.push(ctx.params),
			},
		});
		await broker.waitForServices("lookup-announced-probe");
		const told = () => heard.filter((event) => event.organizationKey === organizationKey).length;
		try {
			expect(await lookupStatus(path)).toBe(404);
			// The node stops right after writing the read model (a fault injected for this test).
			const stopped = jest
				.spyOn(service.answers, "changed")
				.mockRejectedValueOnce(new Error("node stopped before marking Redis"));
			await expect(service.applyChange(change)).rejects.toThrow("node stopped");
			stopped.mockRestore();
			expect(told()).toBe(0);
			expect(await lookupStatus(path)).toBe(404);

			await service.applyChange(change);
			expect(told()).toBe(1);
			expect(ids(await lookup(path))).toEqual([BILLING]);

			await service.applyChange(change);
			expect(told()).toBe(1);
		} finally {
			await broker.destroyService(listener);
		}
	});

	test("a participant deleted and imported again with the same identifier shows in the lookup (a new incarnation, versions again from 1)", async () => {
		const organization = newOrganization();
		const created = await add(sp1, organization, [BILLING]);
		await call(broker, "participants.delete", { qualifiedIdentifier: created.qualifiedIdentifier }, sp1);
		expect(await lookupStatus(created.qualifiedIdentifier)).toBe(404);
		const imported = await call<{ participants: { created: number } }>(
			broker,
			"participants.importRecords",
			{
				participants: [
					{
						identifier: created.identifier,
						serviceProvider: SP1,
						icd: "0088",
						organizationIdentifier: organization,
						registrationDate: created.registrationDate,
						lastModificationDate: created.lastModificationDate,
						contact,
						processes: [{ identifier: ORDERING }],
					},
				],
			},
			admin,
		);
		expect(imported.participants.created).toBe(1);
		expect(
			ids(
				await eventually(
					() => lookup(created.qualifiedIdentifier).catch(() => []),
					(answer) => answer.length > 0,
				),
			),
		).toEqual([ORDERING]);
	});

	test("a change published on the durable channel is applied by the lookup", async () => {
		const organization = newOrganization();
		await publish({
			participant: "p-channel",
			organizationKey: `0088:${organization}`,
			processes: [ORDERING],
			version: 1,
			deleted: false,
		});
		const status = await eventually(
			() => lookupStatus(qid(organization, "0088")),
			(value) => value === 200,
		);
		expect(status).toBe(200);
		expect(ids(await lookup(qid(organization, "0088")))).toEqual([ORDERING]);
	});
});

describe("catalog changes reach the lookup at once", () => {
	test("a renamed process, then a hidden one", async () => {
		const original = await call<Process>(broker, "catalog.getProcess", { identifier: INVOICE_RESPONSE }, admin);
		await lookup(NORDLYS);
		const form = processForm(original);
		try {
			await call(
				broker,
				"catalog.updateProcess",
				{ identifier: INVOICE_RESPONSE, body: { ...form, title: "Invoice response, renamed" } },
				admin,
			);
			const renamed = (await lookup(NORDLYS)).find((process) => process.identifier === INVOICE_RESPONSE);
			expect(renamed?.title).toBe("Invoice response, renamed");
			await call(
				broker,
				"catalog.updateProcess",
				{ identifier: INVOICE_RESPONSE, body: { ...form, visible: false } },
				admin,
			);
			expect(ids(await lookup(NORDLYS))).toEqual([BILLING]);
			expect(ids(await lookup(NORDLYS, sp2))).toEqual([BILLING, INVOICE_RESPONSE]);
		} finally {
			await call(broker, "catalog.updateProcess", { identifier: INVOICE_RESPONSE, body: form }, admin);
		}
		expect(ids(await lookup(NORDLYS))).toEqual([BILLING, INVOICE_RESPONSE]);
	});
});

describe("hot path", () => {
	test("a repeated answer makes no call to another service and reads the lookup's own model at most once a cache lifetime", async () => {
		await lookup(NORDLYS);
		const service = broker.getLocalService("lookup") as unknown as {
			collections: { organizationProcesses: { get: (...args: unknown[]) => unknown } };
			settings: { localTtlMs: number };
		};
		const reads = jest.spyOn(service.collections.organizationProcesses, "get");
		calls.length = 0;
		const started = Date.now();
		for (let i = 0; i < 200; i++) await lookup(NORDLYS);
		const lifetimes = Math.ceil((Date.now() - started) / service.settings.localTtlMs);
		expect(reads.mock.calls.length).toBeLessThanOrEqual(lifetimes);
		expect(new Set(calls)).toEqual(new Set(["lookup.organizationProcesses"]));
		reads.mockRestore();
	});

	test("the gateway's call gets the answer as the JSON text it is kept as; any other call the object", async () => {
		const answer = await lookup(NORDLYS);
		// The gateway names the action it calls (src/platform/context.ts); the action says it answered text.
		const meta: Record<string, unknown> = { $textAnswer: "lookup.organizationProcesses" };
		const text = await broker.call("lookup.organizationProcesses", { qualifiedIdentifier: NORDLYS }, { meta });
		expect(typeof text).toBe("string");
		expect(JSON.parse(text as string)).toEqual(answer);
		expect(meta.$responseType).toBe("application/json");
		// Inherited from a gateway call of another action: the object.
		const inherited = { $textAnswer: "participants.get" };
		expect(
			await broker.call("lookup.organizationProcesses", { qualifiedIdentifier: NORDLYS }, { meta: inherited }),
		).toEqual(answer);
		await expect(
			broker.call(
				"lookup.organizationProcesses",
				{ qualifiedIdentifier: qid(newOrganization(), "0088") },
				{ meta },
			),
		).rejects.toMatchObject({ code: 404 });
	});

	test("even a miss never calls participants", async () => {
		const organization = newOrganization();
		await add(sp1, organization, [BILLING]);
		calls.length = 0;
		await lookup(qid(organization, "0088"), admin);
		expect(calls.filter((name) => name.startsWith("participants."))).toEqual([]);
	});
});

describe("a change that keeps failing", () => {
	interface LookupInternals {
		settings: { applyAttempts: number; applyFirstDelayMs: number };
		collections: { organizationProcesses: { replace: (...args: unknown[]) => Promise<unknown> } };
	}
	const parked = () => call<{ identifier: string; change: unknown }[]>(broker, "lookup.parkedChanges", {});
	const parkedMetric = async () => {
		const { prometheusFormatter } = await import("../../src/platform/metrics");
		const line = (await (prometheusFormatter(broker) as () => Promise<string>)())
			.split("\n")
			.find((entry) => entry.startsWith("registry_lookup_parked_changes"));
		return Number(line?.split(" ").pop());
	};

	test("is tried again with back-off, then parked where the metric counts it, and a replay applies it", async () => {
		const service = broker.getLocalService("lookup") as unknown as LookupInternals;
		const organization = newOrganization();
		const path = qid(organization, "0088");
		await add(sp1, organization, [BILLING]);
		const saved = { ...service.settings };
		Object.assign(service.settings, { applyAttempts: 3, applyFirstDelayMs: 10 });
		// The store refuses every write of the read model (a fault injected for this test).
		const refused = jest
			.spyOn(service.collections.organizationProcesses, "replace")
			.mockRejectedValue(new Error("store unavailable"));
		try {
			const participant = await call<Participant>(broker, "participants.get", { qualifiedIdentifier: path }, sp1);
			await call(
				broker,
				"participants.update",
				{ qualifiedIdentifier: path, body: { processes: [{ identifier: ORDERING }], contact } },
				sp1,
			);
			const found = await eventually(parked, (list) =>
				list.some((entry) => JSON.stringify(entry.change).includes(participant.identifier)),
			);
			expect(found.length).toBeGreaterThan(0);
			expect(refused).toHaveBeenCalledTimes(3);
			expect(await parkedMetric()).toBe(found.length);
			expect(ids(await lookup(path))).toEqual([BILLING]);
		} finally {
			refused.mockRestore();
			Object.assign(service.settings, saved);
		}
		const replay = await call<{ replayed: number; failed: number }>(broker, "lookup.replayParked", {});
		expect(replay.replayed).toBeGreaterThan(0);
		expect(
			ids(
				await eventually(
					() => lookup(path),
					(answer) => answer[0]?.identifier === ORDERING,
				),
			),
		).toEqual([ORDERING]);
		expect(await parkedMetric()).toBe(replay.failed);
	});

	test("a malformed message is parked, not lost, and can be dropped", async () => {
		await publish({ participant: 42, organizationKey: null });
		const found = await eventually(parked, (list) =>
			list.some((entry) => JSON.stringify(entry.change).includes("42")),
		);
		const malformed = found.find((entry) => JSON.stringify(entry.change).includes("42"))!;
		expect((await call<{ failed: number }>(broker, "lookup.replayParked", {})).failed).toBeGreaterThan(0);
		await call(broker, "lookup.dropParked", { identifier: malformed.identifier });
		expect((await parked()).some((entry) => entry.identifier === malformed.identifier)).toBe(false);
	});
});

describe("rebuild", () => {
	test("rebuild restores the read model from the participants", async () => {
		const organization = newOrganization();
		await add(sp1, organization, [CATALOGUE]);
		const service = broker.getLocalService("lookup") as unknown as {
			collections: { organizationProcesses: { deleteWhere(filter: object): Promise<number> } };
			answers: { forget(organizationKey?: string): void };
		};
		await service.collections.organizationProcesses.deleteWhere({});
		service.answers.forget();
		expect(await lookupStatus(NORDLYS)).toBe(404);
		const result = await call<{ organizations: number; participants: number }>(broker, "lookup.rebuild", {});
		const sets = await call<unknown[]>(broker, "participants.organizationProcessSets", {});
		expect(result.participants).toBe(sets.length);
		expect(ids(await lookup(NORDLYS))).toEqual([BILLING, INVOICE_RESPONSE]);
		expect(ids(await lookup(qid(organization, "0088")))).toEqual([CATALOGUE]);
	});
});

describe("persistence", () => {
	test("after a restart the lookup answers from its stored read model, without participants", async () => {
		const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lookup-spec-"));
		const previous = process.env.DATA_DIR;
		process.env.DATA_DIR = dataDir;
		try {
			const first = newBroker(SERVICES);
			await first.start();
			await importSeed(first, demoSeed());
			await first.stop();

			const second = newBroker(["catalog", "lookup"]);
			await second.start();
			try {
				expect(ids(await lookup(NORDLYS, undefined, second))).toEqual([BILLING, INVOICE_RESPONSE]);
			} finally {
				await second.stop();
			}
		} finally {
			process.env.DATA_DIR = previous;
			fs.rmSync(dataDir, { recursive: true, force: true });
		}
	});
});

describe("channel adapter (src/platform/channels.ts)", () => {
	test("without a NATS transporter the in-process Fake adapter carries the changes", () => {
		expect(channelsAdapter({})).toEqual({ type: "Fake", options: { prefix: "registry-default" } });
		expect(channelsAdapter({ TRANSPORTER: "TCP", NAMESPACE: "dev" }).type).toBe("Fake");
	});

	test("with nats:// it is JetStream: the namespace in the stream names, a durable consumer from the first kept change", () => {
		const adapter = channelsAdapter({
			TRANSPORTER: "nats://user:s%40cret@nats-1:4222,nats://nats-2:4222",
			NAMESPACE: "prod.eu",
		});
		expect(adapter.type).toBe("NATS");
		expect(adapter.options).toMatchObject({
			prefix: "registry-prod_eu",
			nats: {
				connectionOptions: { servers: ["nats-1:4222", "nats-2:4222"], user: "user", pass: "s@cret" },
				consumerOptions: { config: { deliver_policy: "all" } },
			},
			deadLettering: { enabled: true },
		});
		expect(channelPrefix("")).toBe("registry-default");
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
