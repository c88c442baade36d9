/** A background task every `intervalMs`: runs never overlap, and `stop()` waits for one in progress. */
export class PeriodicTask {
	private timer?: NodeJS.Timeout;
	private running: Promise<unknown> | null = null;

	constructor(
		private readonly task: () => Promise<unknown>,
		private readonly onError: (error: unknown) => void,
	) {}

	/** (Re)starts the timer; 0 or less: never. */
	start(intervalMs: number): void {
		this.clear();
		if (intervalMs <= 0) return;
		this.timer = setInterval(() => this.runOnce(), intervalMs);
		this.timer.unref();
	}

	async stop(): Promise<void> {
		this.clear();
		await this.running;
	}

	private runOnce(): void {
		if (this.running) return;
		const run = this.task()
			.catch(this.onError)
			.finally(() => {
				this.running = null;
			});
		this.running = run;
	}

	private clear(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}
}
