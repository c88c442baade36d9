/**
 * A lookup node's copy of reference data it answers from without a call: the catalog (every
 * process, visible or not) and the access point directory (services/lookup/smp/publication.ts).
 * Reloaded on the event of a change and, for an event this node missed, every `refreshMs`
 * (services/lookup/answer-cache.ts: the freshness it must keep). The latest reload wins; a failed
 * one keeps the previous copy until the next.
 */
import { createHash } from "node:crypto";
import { PeriodicTask } from "../../src/platform/periodic-task";

export class ReferenceCopy<Loaded, Copy> {
	value: Copy;
	/** A digest of what was loaded: answers built from another copy are not taken. */
	digest = "";
	/** The first load: no answer is built before it. */
	readonly loaded: Promise<void>;
	private generation = 0;
	private markLoaded!: () => void;
	private readonly refresh: PeriodicTask;

	/** `shape` turns what `load` answers into the copy answers are built from; `empty` is the copy before the first load. */
	constructor(
		private readonly load: () => Promise<Loaded>,
		private readonly shape: (loaded: Loaded) => Copy,
		empty: Copy,
		onFailure: (error: unknown) => void,
	) {
		this.value = empty;
		this.loaded = new Promise((resolve) => (this.markLoaded = resolve));
		this.refresh = new PeriodicTask(() => this.reload(), onFailure);
	}

	async reload(): Promise<void> {
		const generation = ++this.generation;
		const loaded = await this.load();
		if (generation !== this.generation) return;
		const digest = createHash("sha256").update(JSON.stringify(loaded)).digest("base64url");
		if (digest !== this.digest) {
			this.value = this.shape(loaded);
			this.digest = digest;
		}
		this.markLoaded();
	}

	start(refreshMs: number): void {
		this.refresh.start(refreshMs);
	}

	stop(): Promise<void> {
		return this.refresh.stop();
	}
}
