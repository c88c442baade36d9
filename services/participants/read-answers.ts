/**
 * Finished answers of a service provider's read of its own participant by qualified
 * identifier (`GET /rest/api/participants/{qualifiedIdentifier}`), as JSON bytes, for the
 * gateway's short path (services/api/participant-read-fast-path.ts; docs/performance.md "Fourth round").
 *
 * Why: that read is the registry's hot authenticated request. Its answer costs a store read,
 * the answer's assembly and a JSON.stringify of ~2 KB on every request, about a third of the
 * request's CPU. Held here, the gateway writes it without a broker call.
 *
 * Memory: an answer is its participant's own fields (~300–400 bytes of JSON, kept per
 * participant) and its provider and processes (the larger part, shared: kept once per distinct
 * content, like the lookup's finished answers). ~0.8 KB of RSS per participant held (33,000 held: +26 MB); at most
 * `maxEntries` participants, the oldest filled dropped first.
 *
 * Never stale: the participants service forgets a participant around every write of it
 * (`forgetAround`), and everything when the processes or providers it names may have changed
 * (`clear`). A fill whose read overlapped any write or clear is not kept (`generation`, as in
 * CachedResolver). Only a store that this process alone writes may be cached: the embedded one
 * (see `ParticipantsService.created`). Offline commands on its files run while the registry is
 * stopped (docs/operations.md), as for the lookup's answers.
 */
import type { Participant } from "../../src/contract/model";

interface HeldAnswer {
	/** The participant's own fields: the answer's JSON up to, not including, its closing brace or its provider. */
	own: string;
	/** The rest of the answer's JSON (`,"provider":…,"processes":[…]}` or `}`), shared by content. */
	rest: string;
}

export class ReadAnswers {
	private readonly answers = new Map<string, HeldAnswer>();
	private readonly rests = new Map<string, string>();
	private generationCounter = 0;

	constructor(private readonly maxEntries: number) {}

	/** Taken before a read that may fill: `remember` keeps the answer only if nothing changed since. */
	get generation(): number {
		return this.generationCounter;
	}

	/** False when it holds nothing ever (maxEntries 0). */
	get holding(): boolean {
		return this.maxEntries > 0;
	}

	get size(): number {
		return this.answers.size;
	}

	/** The answer's JSON bytes, or undefined when it is not held. */
	bytes(serviceProvider: string, organizationKey: string): Buffer | undefined {
		const held = this.answers.get(key(serviceProvider, organizationKey));
		return held && Buffer.from(held.own + held.rest, "utf8");
	}

	/** Keeps `answer` (exactly what JSON.stringify gives for it) unless anything was forgotten since `generation`. */
	remember(generation: number, serviceProvider: string, organizationKey: string, answer: Participant): void {
		if (generation !== this.generationCounter || this.maxEntries <= 0) return;
		// participantAnswer puts `provider` and `processes` last, so the answer's JSON is its own
		// fields' JSON with theirs appended (test/unit/participant-read-answers.spec.ts checks it).
		const { provider, processes, ...own } = answer;
		const ownJson = JSON.stringify(own);
		const shared = provider || processes ? JSON.stringify({ ...(provider ? { provider } : {}), ...(processes ? { processes } : {}) }) : null;
		const restJson = shared ? `,${shared.slice(1)}` : "}";
		let rest = this.rests.get(restJson);
		if (!rest) {
			// Distinct provider and process sets are few; the cap only guards against a pathological mix.
			if (this.rests.size >= this.maxEntries) this.rests.clear();
			rest = restJson;
			this.rests.set(restJson, rest);
		}
		const entryKey = key(serviceProvider, organizationKey);
		if (!this.answers.has(entryKey) && this.answers.size >= this.maxEntries) {
			const oldest = this.answers.keys().next().value as string;
			this.answers.delete(oldest);
		}
		// A string, not a Buffer: Norwegian text is Latin-1, which V8 keeps one byte per character
		// with a 16-byte header. A small Buffer costs ~1 KB more (its ArrayBuffer, backing store
		// and view), and one from Buffer.from is a slice of a shared 8 KB pool that it keeps alive
		// whole (held answers made that way cost RSS +150 MB for 33,000). Encoding per request is ~1 µs.
		this.answers.set(entryKey, { own: ownJson.slice(0, -1), rest });
	}

	/** A participant is being written (call before and after the write): its answer goes, fills in flight are dropped. */
	forget(serviceProvider: string, organizationKey: string): void {
		this.generationCounter += 1;
		this.answers.delete(key(serviceProvider, organizationKey));
	}

	/** Processes or providers may have changed: every answer goes. */
	clear(): void {
		this.generationCounter += 1;
		this.answers.clear();
		this.rests.clear();
	}
}

function key(serviceProvider: string, organizationKey: string): string {
	return `${serviceProvider}\u0000${organizationKey}`;
}
