/**
 * The relay of every transactional outbox (docs/internals.md "Audit trail"): it delivers the oldest messages
 * and deletes exactly those once delivered; at least once, so receivers are idempotent.
 */
import type { Collection, StoredDoc } from "../store/types";
import { PeriodicTask } from "./periodic-task";

export interface OutboxMessage extends StoredDoc {
	/** ISO instant of the commit: the oldest go first. */
	at: string;
}

interface RelayLogger {
	info(...args: unknown[]): void;
	warn(...args: unknown[]): void;
}

export interface OutboxRelayOptions<T extends OutboxMessage> {
	/** For logs, e.g. "catalog audit". */
	name: string;
	/** The outbox: a relay is made once its store is open and stopped before the store closes. */
	outbox: Collection<T>;
	/** Resolves once the receiver acknowledged every message; throws to keep them all. */
	deliver: (messages: T[]) => Promise<void>;
	/** Messages per delivery (default 100). */
	batchSize?: number;
	/** Kicks and the timer take only messages at least this old (those younger are delivered by whoever wrote them). */
	minAgeMs?: number;
	logger?: RelayLogger;
	/** Told what waits after each run (at most once a second) and of each failed delivery: the outbox metrics. */
	report?: OutboxReport;
}

export interface OutboxReport {
	backlog(waiting: number, oldestAgeSeconds: number): void;
	failed(): void;
}

export class OutboxRelay<T extends OutboxMessage> {
	private readonly batchSize: number;
	private running: Promise<number> | null = null;
	private again = false;
	private stopped = false;
	private readonly timer: PeriodicTask;
	/** A failure streak is logged once, and its end once. */
	private failing = false;
	private lastMeasured = 0;

	constructor(private readonly options: OutboxRelayOptions<T>) {
		this.batchSize = options.batchSize ?? 100;
		this.timer = new PeriodicTask(
			async () => this.kick(),
			() => undefined,
		);
	}

	/** Delivers the messages at least `olderThanMs` old, oldest first, until none is left; a failed delivery throws. */
	async drain(olderThanMs = 0): Promise<number> {
		const { outbox } = this.options;
		let delivered = 0;
		for (;;) {
			const filter =
				olderThanMs > 0 ? { at: { lte: new Date(Date.now() - olderThanMs).toISOString() } } : undefined;
			const batch = await outbox.find({
				filter,
				sort: [{ field: "at", direction: "asc" }],
				limit: this.batchSize,
			});
			if (batch.length === 0) return delivered;
			await this.options.deliver(batch);
			const identifiers: string[] = [];
			for (const message of batch) identifiers.push(message.identifier);
			await outbox.deleteWhere({ identifier: { in: identifiers } });
			delivered += batch.length;
			if (batch.length < this.batchSize) return delivered;
		}
	}

	/**
	 * Starts a run in the background; a kick during a run makes it go round once more, so bursts coalesce.
	 * Settles (never rejects) when a run that saw everything committed before the kick is over.
	 */
	kick(): Promise<unknown> {
		if (this.stopped) return Promise.resolve();
		if (this.running) {
			this.again = true;
			return this.running;
		}
		this.running = this.runUntilQuiet();
		return this.running;
	}

	/** The current background run, if any (tests and shutdown wait for it). */
	settled(): Promise<unknown> {
		return this.running ?? Promise.resolve();
	}

	/** Kicks every `intervalMs` (0: never). */
	start(intervalMs: number): void {
		this.stopped = false;
		this.timer.start(intervalMs);
	}

	/** No new runs; waits for the current one so it never meets a closed store. */
	async stop(): Promise<void> {
		this.stopped = true;
		this.again = false;
		await this.timer.stop();
		await this.settled();
	}

	private async runUntilQuiet(): Promise<number> {
		let delivered = 0;
		try {
			do {
				this.again = false;
				delivered += await this.drain(this.options.minAgeMs ?? 0);
			} while (this.again && !this.stopped);
			if (this.failing)
				this.options.logger?.info(
					`${this.options.name} relay: delivering again (${delivered} message(s) this run)`,
				);
			this.failing = false;
		} catch (error) {
			this.options.report?.failed();
			// Not delivered: the messages stay in the outbox; the next kick or tick retries.
			if (!this.failing)
				this.options.logger?.warn(
					`${this.options.name} relay: messages wait in the outbox (retried later):`,
					String(error),
				);
			this.failing = true;
		}
		// Nothing awaited since the last look at `again`: a later kick starts a new run.
		this.running = null;
		// Not awaited: a write waiting for this run must not wait for the measuring too.
		void this.measure();
		return delivered;
	}

	/** What waits now and how old the oldest is, for `report` (two small reads; at most once a second). */
	private async measure(): Promise<void> {
		const { outbox, report } = this.options;
		const now = Date.now();
		if (!report || now - this.lastMeasured < 1000) return;
		this.lastMeasured = now;
		try {
			const [waiting, oldest] = await Promise.all([
				outbox.count(),
				outbox.find({ sort: [{ field: "at", direction: "asc" }], limit: 1 }),
			]);
			report.backlog(waiting, oldest[0] ? Math.max(0, (now - Date.parse(oldest[0].at)) / 1000) : 0);
		} catch {
			// The store is closing or away: the next run measures again.
		}
	}
}
