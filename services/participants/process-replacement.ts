/**
 * Process replacement jobs (docs/decisions.md "Bulk jobs"): for every participant holding process
 * `from`, replace it with `to`, as a dry run or for real. One job of the kind at a time (a lock
 * document inserted in the job's own batch); the job runs in the background on the node that took
 * the request, in batches of process claims, with a heartbeat on its document; a RUNNING job whose
 * heartbeat is old lost its runner and is marked INTERRUPTED. Each participant's change is decided
 * by services/participants/process-swap.ts with the rules an update uses.
 */
import {
	AccessDenied,
	Conflict,
	NotFound,
	TypeMismatch,
	ValidationFailed,
	violation,
	type Violation,
} from "../../src/contract/errors";
import { seesEverything, type Caller, type Process } from "../../src/contract/model";
import { pageOf, type Page, type PageRequest } from "../../src/contract/paging";
import type { ProcessReplacementForm } from "../../src/contract/schemas";
import { newRecordIdentifier } from "../../src/platform/record-identifier";
import type { Collection, Store, WriteOp } from "../../src/store/types";
import type { ProcessClaimDoc } from "./model";
import type { Participants } from "./participants";
import {
	JOB_LOCKS_MODEL,
	PROCESS_REPLACEMENT_JOBS_MODEL,
	PROCESS_REPLACEMENT_LOCK,
	PROCESS_REPLACEMENT_RESULTS_MODEL,
	REPLACEMENT_OUTCOMES,
	type JobLockDoc,
	type JobProcess,
	type JobState,
	type ProcessReplacementJobDoc,
	type ProcessReplacementResultDoc,
	type ReplacementCounts,
	type ReplacementOutcome,
} from "./process-replacement-model";
import { swapProcess } from "./process-swap";
import { isDuplicateKey, isStaleVersion } from "../../src/store/errors";

export interface JobSettings {
	/** Process claims (participants) per batch. */
	batchSize: number;
	/** Pause before each batch is worked on (spares a busy registry; tests use it to watch a job run). */
	batchDelayMs: number;
	/** How often a running job writes its heartbeat. */
	heartbeatMs: number;
	/** A RUNNING job whose heartbeat is older than this has lost its runner. */
	staleAfterMs: number;
}

export interface ProcessReplacementParts {
	store: Store;
	participants: Participants;
	jobs: Collection<ProcessReplacementJobDoc>;
	results: Collection<ProcessReplacementResultDoc>;
	locks: Collection<JobLockDoc>;
	settings(): JobSettings;
	node: string;
	logger: { info(...args: unknown[]): void; warn(...args: unknown[]): void; error(...args: unknown[]): void };
	/** A job ended in `state` (counted in registry_process_replacement_jobs_total). */
	ended?(state: JobState): void;
}

/** The job as answered (src/contract/resource-schemas.ts ProcessReplacementJob). */
export interface ProcessReplacementJob {
	identifier: string;
	from: JobProcess;
	to: JobProcess;
	dryRun: boolean;
	state: JobState;
	startedBy: string;
	startedDate: string;
	finishedDate?: string;
	progress: { total: number; done: number };
	counts: ReplacementCounts;
	failure?: { message: string };
}

export type ProcessReplacementResult = Pick<ProcessReplacementResultDoc, "participant" | "outcome" | "reason">;

const JOBS = PROCESS_REPLACEMENT_JOBS_MODEL.collection;
const LOCKS = JOB_LOCKS_MODEL.collection;
const RESULTS = PROCESS_REPLACEMENT_RESULTS_MODEL.collection;
const COUNTER: Record<ReplacementOutcome, keyof ReplacementCounts> = {
	REPLACED: "replaced",
	WOULD_REPLACE: "wouldReplace",
	REFUSED: "refused",
	UNCHANGED: "unchanged",
};

export function jobAnswer(doc: ProcessReplacementJobDoc): ProcessReplacementJob {
	return {
		identifier: doc.identifier,
		from: doc.from,
		to: doc.to,
		dryRun: doc.dryRun,
		state: doc.state,
		startedBy: doc.actor.username,
		startedDate: doc.startedDate,
		...(doc.finishedDate ? { finishedDate: doc.finishedDate } : {}),
		progress: doc.progress,
		counts: doc.counts,
		...(doc.failure ? { failure: doc.failure } : {}),
	};
}

function resultAnswer(doc: ProcessReplacementResultDoc): ProcessReplacementResult {
	return { participant: doc.participant, outcome: doc.outcome, ...(doc.reason ? { reason: doc.reason } : {}) };
}

function jobProcess(process: Process): JobProcess {
	return {
		identifier: process.identifier,
		...(process.qualifiedIdentifier ? { qualifiedIdentifier: process.qualifiedIdentifier } : {}),
		...(process.title ? { title: process.title } : {}),
	};
}

/** Jobs change every participant of every provider: ADMIN and NETWORK_AUTHORITY only (the gateway checks it too). */
function requireOperator(caller: Caller | null | undefined): Caller {
	if (!caller || !seesEverything(caller)) throw new AccessDenied();
	return { username: caller.username, role: caller.role };
}

/** One running job on this node: its document as last written, written through one queue (heartbeats and batches never race). */
class JobRun {
	stopping = false;
	/** Another node marked it INTERRUPTED (its heartbeat looked old): this run stops without another write. */
	lost = false;
	done: Promise<void> = Promise.resolve();
	private queue: Promise<unknown> = Promise.resolve();
	private wake: (() => void) | null = null;

	constructor(
		public job: ProcessReplacementJobDoc,
		private readonly store: Store,
	) {}

	/** Writes the job with `changes` and a fresh heartbeat, at its version, in one batch with `more`. */
	save(changes: Partial<ProcessReplacementJobDoc>, more: WriteOp[] = []): Promise<void> {
		const write = this.queue.then(async () => {
			if (this.lost) throw new Error(`job ${this.job.identifier} was taken over`);
			const doc = { ...this.job, ...changes, heartbeat: new Date().toISOString() };
			try {
				await this.store.batch([
					...more,
					{ kind: "replace", collection: JOBS, doc, expectedVersion: this.job.version },
				]);
			} catch (error) {
				if (isStaleVersion(error)) this.lost = true;
				throw error;
			}
			this.job = { ...doc, version: (this.job.version ?? 1) + 1 };
		});
		this.queue = write.catch(() => undefined);
		return write;
	}

	pause(ms: number): Promise<void> {
		if (this.stopping || ms <= 0) return Promise.resolve();
		return new Promise((resolve) => {
			const timer = setTimeout(done, ms);
			function done() {
				clearTimeout(timer);
				resolve();
			}
			this.wake = done;
		});
	}

	stop(): Promise<void> {
		this.stopping = true;
		this.wake?.();
		return this.done;
	}
}

export class ProcessReplacements {
	private readonly running = new Map<string, JobRun>();

	constructor(private readonly parts: ProcessReplacementParts) {}

	// ---- requests -----------------------------------------------------------------------

	async start(caller: Caller | null | undefined, form: ProcessReplacementForm): Promise<ProcessReplacementJob> {
		const actor = requireOperator(caller);
		const from = form.from.toLowerCase();
		const to = form.to.toLowerCase();
		const known = await this.parts.participants.processes.resolve([from, to]);
		const violations: Violation[] = [];
		if (!known.has(from))
			violations.push(violation("from", "Exists", "must reference an existing record", form.from));
		if (!known.has(to)) violations.push(violation("to", "Exists", "must reference an existing record", form.to));
		if (from === to) violations.push(violation("to", "NotSelf", "must not be the process it replaces", form.to));
		if (violations.length > 0) throw new ValidationFailed(violations);

		await this.interruptStale();
		const total = await this.parts.participants.claims.count({ filter: { processId: from } });
		const now = new Date().toISOString();
		const job: ProcessReplacementJobDoc = {
			identifier: newRecordIdentifier(),
			from: jobProcess(known.get(from) as Process),
			to: jobProcess(known.get(to) as Process),
			dryRun: form.dryRun === true,
			state: "RUNNING",
			actor,
			startedDate: now,
			finishedDate: null,
			heartbeat: now,
			node: this.parts.node,
			progress: { total, done: 0 },
			counts: { replaced: 0, wouldReplace: 0, refused: 0, unchanged: 0 },
			failure: null,
			cursor: null,
		};
		const lock: JobLockDoc = { identifier: PROCESS_REPLACEMENT_LOCK, job: job.identifier, at: now };
		try {
			// The lock is the store's primary key, taken in the job's own batch: two starts cannot both win.
			await this.parts.store.batch([
				{ kind: "insert", collection: JOBS, doc: job },
				{ kind: "insert", collection: LOCKS, doc: lock },
			]);
		} catch (error) {
			if (!isDuplicateKey(error)) throw error;
			const held = await this.parts.locks.get(PROCESS_REPLACEMENT_LOCK);
			throw new Conflict(
				`A process replacement job${held ? ` (${held.job})` : ""} is running; only one runs at a time`,
			);
		}
		this.launch({ ...job, version: 1 });
		this.parts.logger.info(
			`process replacement job ${job.identifier} started by ${actor.username}: ${from} → ${to}${job.dryRun ? " (dry run)" : ""}, ${total} participant(s)`,
		);
		return jobAnswer(job);
	}

	async find(caller: Caller | null | undefined, page: PageRequest): Promise<Page<ProcessReplacementJob>> {
		requireOperator(caller);
		const sort = [...page.sort, { field: "startedDate", direction: "desc" as const }];
		const [docs, total] = await Promise.all([
			this.parts.jobs.find({ sort, offset: page.page * page.size, limit: page.size }),
			this.parts.jobs.count(),
		]);
		return pageOf(docs.map(jobAnswer), total, page);
	}

	async get(caller: Caller | null | undefined, identifier: string): Promise<ProcessReplacementJob> {
		requireOperator(caller);
		return jobAnswer(await this.job(identifier));
	}

	async results(
		caller: Caller | null | undefined,
		identifier: string,
		page: PageRequest,
		outcome?: string,
	): Promise<Page<ProcessReplacementResult>> {
		requireOperator(caller);
		if (outcome !== undefined && !REPLACEMENT_OUTCOMES.includes(outcome as ReplacementOutcome)) {
			throw new TypeMismatch(
				`Query parameter 'outcome' must be one of ${REPLACEMENT_OUTCOMES.join(", ")}; value: '${outcome}'`,
			);
		}
		const job = await this.job(identifier);
		const filter = { job: job.identifier, ...(outcome === undefined ? {} : { outcome }) };
		const sort = [...page.sort, { field: "participant.qualifiedIdentifier", direction: "asc" as const }];
		const [docs, total] = await Promise.all([
			this.parts.results.find({ filter, sort, offset: page.page * page.size, limit: page.size }),
			this.parts.results.count({ filter }),
		]);
		return pageOf(docs.map(resultAnswer), total, page);
	}

	// ---- runners ------------------------------------------------------------------------

	/**
	 * Marks INTERRUPTED every RUNNING job whose heartbeat is older than `staleAfterMs` (its process
	 * died) and releases its lock, in one batch at the version read: a runner that was only slow
	 * finds its next write refused and stops. Runs before every start and periodically.
	 */
	async interruptStale(now = Date.now()): Promise<number> {
		const before = new Date(now - this.parts.settings().staleAfterMs).toISOString();
		const stale = await this.parts.jobs.find({ filter: { state: "RUNNING", heartbeat: { lt: before } } });
		let interrupted = 0;
		for (const job of stale) {
			if (this.running.has(job.identifier)) continue; // alive here: its event loop was only busy
			const message = `Its runner (node ${job.node}) stopped sending heartbeats; last one at ${job.heartbeat}. Start the job again`;
			const doc: ProcessReplacementJobDoc = {
				...job,
				state: "INTERRUPTED",
				finishedDate: new Date(now).toISOString(),
				failure: { message },
			};
			try {
				await this.parts.store.batch([
					{ kind: "replace", collection: JOBS, doc, expectedVersion: job.version },
					{ kind: "deleteWhere", collection: LOCKS, filter: { job: job.identifier } },
				]);
				interrupted++;
				this.parts.ended?.("INTERRUPTED");
				this.parts.logger.warn(`process replacement job ${job.identifier} marked INTERRUPTED: ${message}`);
			} catch (error) {
				if (!isStaleVersion(error)) throw error; // it moved on meanwhile: alive after all
			}
		}
		return interrupted;
	}

	/** Graceful shutdown: every job running here stops between batches and is marked INTERRUPTED. */
	async stopAll(): Promise<void> {
		await Promise.all([...this.running.values()].map((run) => run.stop()));
	}

	private async job(identifier: string): Promise<ProcessReplacementJobDoc> {
		const doc = await this.parts.jobs.get(identifier.toLowerCase());
		if (!doc) throw NotFound.instance("ProcessReplacementJob", identifier);
		return doc;
	}

	private launch(job: ProcessReplacementJobDoc): void {
		const run = new JobRun(job, this.parts.store);
		this.running.set(job.identifier, run);
		run.done = this.run(run)
			.catch((error) =>
				this.parts.logger.error(
					`process replacement job ${job.identifier} could not record its end:`,
					String(error),
				),
			)
			.finally(() => this.running.delete(job.identifier));
	}

	private async run(run: JobRun): Promise<void> {
		const settings = this.parts.settings();
		const heartbeat = setInterval(() => {
			run.save({}).catch((error) => {
				if (!run.lost)
					this.parts.logger.warn(
						`process replacement job ${run.job.identifier}: heartbeat not written:`,
						String(error),
					);
			});
		}, settings.heartbeatMs);
		heartbeat.unref();
		try {
			for (;;) {
				if (run.stopping)
					return await this.finish(
						run,
						"INTERRUPTED",
						"The participants service stopped (graceful shutdown) before the job finished. Start the job again",
					);
				const claims = await this.nextClaims(run.job, settings.batchSize);
				if (claims.length === 0) return await this.finish(run, "SUCCEEDED");
				await run.pause(settings.batchDelayMs);
				if (run.stopping) continue;
				await this.batch(run, claims);
			}
		} catch (error) {
			if (run.lost) {
				this.parts.logger.warn(
					`process replacement job ${run.job.identifier} was marked INTERRUPTED elsewhere; this runner stops`,
				);
				return;
			}
			const message = run.stopping
				? "The participants service stopped (graceful shutdown) before the job finished. Start the job again"
				: String((error as Error)?.message ?? error);
			this.parts.logger.error(
				`process replacement job ${run.job.identifier} ${run.stopping ? "interrupted" : "failed"}:`,
				String(error),
			);
			await this.finish(run, run.stopping ? "INTERRUPTED" : "FAILED", message);
		} finally {
			clearInterval(heartbeat);
		}
	}

	/** The next claims of `from` after the cursor, in identifier order (claims the job removed lie behind it). */
	private async nextClaims(job: ProcessReplacementJobDoc, batchSize: number): Promise<ProcessClaimDoc[]> {
		const filter = {
			processId: job.from.identifier,
			...(job.cursor === null ? {} : { identifier: { gte: job.cursor } }),
		};
		const claims = await this.parts.participants.claims.find({ filter, limit: batchSize + 1 });
		return claims.filter((claim) => claim.identifier !== job.cursor).slice(0, batchSize);
	}

	/** One batch: each participant's outcome, then the results, the counts, the progress and the cursor in one write. */
	private async batch(run: JobRun, claims: ProcessClaimDoc[]): Promise<void> {
		const job = run.job;
		const at = new Date().toISOString();
		const results: ProcessReplacementResultDoc[] = [];
		for (const claim of claims) {
			const swap = await swapProcess(this.parts.participants, job, claim.participant);
			if (swap)
				results.push({
					identifier: `${job.identifier}|${swap.participant.identifier}`,
					job: job.identifier,
					...swap,
					at,
				});
		}
		const counts = { ...job.counts };
		for (const result of results) counts[COUNTER[result.outcome]] += 1;
		const done = job.progress.done + claims.length;
		await run.save(
			{
				counts,
				progress: { total: Math.max(job.progress.total, done), done },
				cursor: claims[claims.length - 1].identifier,
			},
			results.map((doc) => ({ kind: "upsert", collection: RESULTS, doc })),
		);
	}

	private async finish(run: JobRun, state: JobState, message?: string): Promise<void> {
		await run.save({ state, finishedDate: new Date().toISOString(), failure: message ? { message } : null }, [
			{ kind: "deleteWhere", collection: LOCKS, filter: { job: run.job.identifier } },
		]);
		const { counts, progress } = run.job;
		this.parts.ended?.(state);
		this.parts.logger.info(
			`process replacement job ${run.job.identifier} ${state}: ${progress.done}/${progress.total} done, ${JSON.stringify(counts)}`,
		);
	}
}
