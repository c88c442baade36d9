/**
 * The lookup's copy of the catalog (every process, visible or not), which answers are built from
 * without a call. Reloaded on every `catalog.changed` event and, for an event this node missed,
 * every `refreshMs` (services/lookup/answer-cache.ts: the freshness it must keep). The latest
 * reload wins; a failed one keeps the previous copy until the next.
 */
import { createHash } from "node:crypto";
import type { Process } from "../../src/contract/model";
import { PeriodicTask } from "../../src/platform/periodic-task";

export class CatalogCopy {
	processes = new Map<string, Process>();
	/** A digest of the copy: answers built from another copy are not taken. */
	digest = "";
	/** The first load: no answer is built before it. */
	readonly loaded: Promise<void>;
	private generation = 0;
	private markLoaded!: () => void;
	private readonly refresh: PeriodicTask;

	constructor(
		private readonly load: () => Promise<Process[]>,
		onFailure: (error: unknown) => void,
	) {
		this.loaded = new Promise((resolve) => (this.markLoaded = resolve));
		this.refresh = new PeriodicTask(() => this.reload(), onFailure);
	}

	async reload(): Promise<void> {
		const generation = ++this.generation;
		const processes = await this.load();
		if (generation !== this.generation) return;
		const digest = createHash("sha256").update(JSON.stringify(processes)).digest("base64url");
		if (digest !== this.digest) {
			this.processes = new Map(processes.map((process) => [process.identifier, process]));
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
