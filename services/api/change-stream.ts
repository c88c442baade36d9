/** GET /rest/api/changes as Server-Sent Events, resumable by event id (docs/decisions.md "Change feed"). */
import { PassThrough, type Readable } from "node:stream";
import type { ChangePage } from "../../src/contract/changes";
import type { Caller } from "../../src/contract/model";

export interface ChangeStreamOptions {
	/** Reads one page of the caller's changes after a cursor. */
	read(caller: Caller, after: number, limit: number): Promise<ChangePage>;
	onReadError(error: unknown): void;
}

const PAGE = 500;
/** A stream reads again after this long without a `changes.recorded` wake-up (a missed notice, no notices). */
const POLL_MS = 5000;
/** A comment line this often keeps proxies, which commonly close a connection quiet for 30-60 s, from closing it. */
const KEEP_ALIVE_MS = 15_000;
/** What a reconnecting EventSource waits before it tries again (ms). */
const RETRY_MS = 2000;

export class ChangeStreams {
	private readonly streams = new Set<ChangeStream>();

	constructor(private readonly options: ChangeStreamOptions) {}

	open(caller: Caller, after: number): Readable {
		const stream = new ChangeStream(caller, after, this.options, () => this.streams.delete(stream));
		this.streams.add(stream);
		stream.run();
		return stream.output;
	}

	/** The feed grew: every stream reads now. */
	wake(): void {
		for (const stream of this.streams) stream.wake();
	}

	/** Ends every stream (drain, an account changed). */
	endAll(): void {
		for (const stream of [...this.streams]) stream.end();
	}
}

class ChangeStream {
	readonly output = new PassThrough();
	private ended = false;
	private woken: (() => void) | null = null;
	private pending = false;
	private lastWrite = Date.now();

	constructor(
		private readonly caller: Caller,
		private cursor: number,
		private readonly options: ChangeStreamOptions,
		private readonly onEnd: () => void,
	) {
		// The client went away (the gateway pipes this into its response and destroys it then).
		this.output.once("close", () => this.end());
	}

	wake(): void {
		this.pending = true;
		this.woken?.();
	}

	end(): void {
		if (this.ended) return;
		this.ended = true;
		this.woken?.();
		this.onEnd();
		if (!this.output.destroyed) this.output.end();
	}

	async run(): Promise<void> {
		this.write(`retry: ${RETRY_MS}\n\n`);
		while (!this.ended) {
			this.pending = false;
			let more = false;
			try {
				const page = await this.options.read(this.caller, this.cursor, PAGE);
				for (const change of page.changes) {
					if (this.ended) return;
					if (!this.write(`id: ${change.sequence}\nevent: change\ndata: ${JSON.stringify(change)}\n\n`))
						await this.drained();
				}
				this.cursor = Number(page.cursor);
				more = page.more;
			} catch (error) {
				this.options.onReadError(error);
			}
			if (!more && !this.pending) await this.quiet();
		}
	}

	/** The client read what was written, or went away. */
	private drained(): Promise<void> {
		return new Promise((resolve) => {
			this.output.once("drain", resolve);
			this.output.once("close", resolve);
		});
	}

	private write(text: string): boolean {
		this.lastWrite = Date.now();
		return this.output.write(text);
	}

	/** Waits for a wake-up or the poll interval; a keep-alive comment when nothing was written for a while. */
	private async quiet(): Promise<void> {
		await new Promise<void>((resolve) => {
			const timer = setTimeout(resolve, Math.min(POLL_MS, KEEP_ALIVE_MS));
			this.woken = () => {
				clearTimeout(timer);
				resolve();
			};
		});
		this.woken = null;
		if (!this.ended && Date.now() - this.lastWrite >= KEEP_ALIVE_MS) this.write(": keep-alive\n\n");
	}
}
