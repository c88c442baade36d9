/**
 * The lookup's copy of the catalog (every process, visible or not), which answers are built
 * from without a call. Reloaded on every catalog notice and after missed notices; the latest
 * reload wins. A failed reload is tried again every second, and until one succeeds the copy is
 * not `current`: answers are still given from the previous copy, but not kept anywhere.
 */
import { createHash } from "node:crypto";
import type { Process } from "../../src/contract/model";

export class CatalogCopy {
	processes = new Map<string, Process>();
	/** A digest of the copy: shared answers built from another copy are not taken. */
	digest = "";
	current = false;
	/** The reload in progress: answers wait for it. */
	loading: Promise<void> | null = null;
	private generation = 0;

	constructor(
		private readonly load: () => Promise<Process[]>,
		private readonly onFailure: (error: unknown) => void,
	) {}

	/** Starts a reload; resolves once it is done (or failed, to be tried again). */
	reload(): Promise<void> {
		const generation = ++this.generation;
		this.current = false;
		const loading = this.load()
			.then((processes) => {
				if (generation !== this.generation) return;
				this.processes = new Map(processes.map((process) => [process.identifier, process]));
				this.digest = createHash("sha256").update(JSON.stringify(processes)).digest("base64");
				this.current = true;
			})
			.catch((error) => {
				this.onFailure(error);
				setTimeout(() => {
					if (generation === this.generation) void this.reload();
				}, 1000).unref();
			})
			.finally(() => {
				if (this.loading === loading) this.loading = null;
			});
		this.loading = loading;
		return loading;
	}
}
