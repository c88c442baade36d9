/**
 * Process replacement jobs whose runner is gone (docs/decisions.md "Bulk jobs"), on Moleculer's
 * in-memory broker with the real services: a RUNNING job with an old heartbeat, written through
 * the store as a dead process leaves it, is reported INTERRUPTED (at the next start, and by the
 * periodic check) and its lock released; a live one keeps its lock; a graceful shutdown stops a
 * running job between batches and marks it INTERRUPTED, as a restarted registry reads it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import type { Caller } from "../../src/contract/model";
import { importSeed } from "../../src/exchange/seed";
import { callerMeta } from "../../src/platform/caller-signature";
import type { Store } from "../../src/store/types";
import type { JobLockDoc, ProcessReplacementJobDoc } from "../../services/participants/process-replacement-model";
import { replacedProcesses } from "../../services/participants/process-swap";
import { demoSeed } from "../support/registry";

const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const CATALOGUE = "55555555-0000-4000-8000-000000000007";
const admin: Caller = { username: "admin", role: "ADMIN" };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

interface ParticipantsInternals {
	store: Store;
	settings: Json;
	collections: Record<
		string,
		{
			get(identifier: string): Promise<Json | null>;
			replace(doc: Json, expectedVersion?: number): Promise<Json>;
			count(query?: object): Promise<number>;
		}
	>;
	jobCheck: { start(intervalMs: number): void };
}

async function startBroker(dataDir: string, seed: boolean): Promise<ServiceBroker> {
	process.env.DATA_DIR = dataDir;
	const broker = createRegistryBroker({
		env: { DATA_DIR: dataDir },
		services: ["catalog", "accounts", "accessPoints", "participants", "lookup"],
		overrides: { logger: false },
	});
	await broker.start();
	if (seed) await importSeed(broker, demoSeed());
	return broker;
}

function internals(broker: ServiceBroker): ParticipantsInternals {
	return broker.getLocalService("participants") as unknown as ParticipantsInternals;
}

function call<T>(broker: ServiceBroker, action: string, params: object): Promise<T> {
	return broker.call<T, object>(`participants.${action}`, params, { meta: callerMeta(broker, admin) });
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; type: string; message: string }> {
	try {
		await promise;
	} catch (error) {
		return error as never;
	}
	throw new Error("expected the call to fail");
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (done(value)) return value;
		if (Date.now() > deadline) throw new Error(`not yet: ${JSON.stringify(value)}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

const job = (broker: ServiceBroker, identifier: string) => call<Json>(broker, "getProcessReplacement", { identifier });
const ended = (broker: ServiceBroker, identifier: string) =>
	until(
		() => job(broker, identifier),
		(answer) => answer.state !== "RUNNING",
	);

/** A RUNNING job and its lock, as a process that died mid-job leaves them in the store. */
async function orphan(broker: ServiceBroker, identifier: string, heartbeat: Date): Promise<void> {
	const at = heartbeat.toISOString();
	const job: ProcessReplacementJobDoc = {
		identifier,
		from: { identifier: CATALOGUE },
		to: { identifier: ORDERING },
		dryRun: false,
		state: "RUNNING",
		actor: admin,
		startedDate: at,
		finishedDate: null,
		heartbeat: at,
		node: "node-that-died",
		progress: { total: 10, done: 4 },
		counts: { replaced: 4, wouldReplace: 0, refused: 0, unchanged: 0 },
		failure: null,
		cursor: null,
	};
	const lock: JobLockDoc = { identifier: "process-replacement", job: identifier, at };
	await internals(broker).store.batch([
		{ kind: "insert", collection: "processReplacementJobs", doc: job },
		{ kind: "insert", collection: "jobLocks", doc: lock },
	]);
}

test("the new process list: `from` replaced in place, or only removed when `to` is held already", () => {
	expect(replacedProcesses(["a", "old", "b"], "old", "new")).toEqual(["a", "new", "b"]);
	expect(replacedProcesses(["new", "old"], "old", "new")).toEqual(["new"]);
	expect(replacedProcesses(["a"], "old", "new")).toEqual(["a"]);
});

describe("a job whose runner is gone", () => {
	let broker: ServiceBroker;
	beforeAll(async () => {
		broker = await startBroker(":memory:", true);
	});
	afterAll(() => broker.stop());

	test("is marked INTERRUPTED by the next start, which then runs", async () => {
		const dead = "0190d000-0000-7000-8000-000000000001";
		await orphan(broker, dead, new Date(Date.now() - 3_600_000));
		const started = await call<Json>(broker, "startProcessReplacement", {
			body: { from: BILLING, to: ORDERING, dryRun: true },
		});
		expect(started).toMatchObject({ state: "RUNNING", dryRun: true, startedBy: "admin" });

		const interrupted = await job(broker, dead);
		expect(interrupted).toMatchObject({
			state: "INTERRUPTED",
			progress: { total: 10, done: 4 },
			counts: { replaced: 4 },
		});
		expect(interrupted.failure.message).toMatch(
			/node node-that-died\) stopped sending heartbeats.*Start the job again/,
		);
		expect(interrupted.finishedDate).toEqual(expect.any(String));

		expect(await ended(broker, started.identifier)).toMatchObject({ state: "SUCCEEDED" });
		expect(await internals(broker).collections.jobLocks.count()).toBe(0);
	});

	test("a live job keeps its lock (409); the periodic check interrupts it once its heartbeat is old", async () => {
		const live = "0190d000-0000-7000-8000-000000000002";
		await orphan(broker, live, new Date());
		const refused = await failure(
			call(broker, "startProcessReplacement", { body: { from: BILLING, to: ORDERING, dryRun: true } }),
		);
		expect(refused).toMatchObject({ code: 409, type: "ConflictException" });
		expect(refused.message).toContain(live);
		expect(await call(broker, "interruptStaleJobs", {})).toEqual({ interrupted: 0 });
		expect((await job(broker, live)).state).toBe("RUNNING");

		// Its process dies: no more heartbeats. The periodic check (here every 20 ms) finds it.
		const jobs = internals(broker).collections.processReplacementJobs;
		const doc = (await jobs.get(live)) as Json;
		await jobs.replace(
			{
				...doc,
				heartbeat: new Date(Date.now() - internals(broker).settings.jobStaleAfterMs - 1000).toISOString(),
			},
			doc.version,
		);
		internals(broker).jobCheck.start(20);
		const interrupted = await until(
			() => job(broker, live),
			(answer) => answer.state !== "RUNNING",
		);
		expect(interrupted.state).toBe("INTERRUPTED");
		expect(await internals(broker).collections.jobLocks.count()).toBe(0);

		const again = await call<Json>(broker, "startProcessReplacement", {
			body: { from: BILLING, to: ORDERING, dryRun: true },
		});
		expect((await ended(broker, again.identifier)).state).toBe("SUCCEEDED");
	});
});

describe("a graceful shutdown", () => {
	const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-jobs-"));
	afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

	test("stops a running job between batches and marks it INTERRUPTED; after a restart a new job may start", async () => {
		const first = await startBroker(dataDir, true);
		Object.assign(internals(first).settings, { jobBatchSize: 1, jobBatchDelayMs: 60_000 });
		const started = await call<Json>(first, "startProcessReplacement", { body: { from: BILLING, to: ORDERING } });
		expect(started.progress.total).toBeGreaterThan(1);
		const stopping = Date.now();
		await first.stop();
		expect(Date.now() - stopping).toBeLessThan(10_000); // the pause before the first batch was cut short

		const second = await startBroker(dataDir, false);
		try {
			const interrupted = await job(second, started.identifier);
			expect(interrupted).toMatchObject({ state: "INTERRUPTED", progress: { done: 0 }, counts: { replaced: 0 } });
			expect(interrupted.failure.message).toMatch(/graceful shutdown/);
			expect(await internals(second).collections.jobLocks.count()).toBe(0);
			const again = await call<Json>(second, "startProcessReplacement", {
				body: { from: BILLING, to: ORDERING, dryRun: true },
			});
			expect((await ended(second, again.identifier)).state).toBe("SUCCEEDED");
		} finally {
			await second.stop();
		}
	}, 60_000);
});
