/**
 * Finished lookup answers shared by every lookup node through the cacher (Redis in a cluster;
 * none in one process, where the gateway holds every answer),
 * each with the read-model version and the catalog copy it was built from. A node takes one
 * only when it was built from its own catalog copy and is not older than the newest version the
 * node has heard of (a notice) or read, for as long as a shared answer lives: a node that read
 * before a change and wrote after it cannot make the others answer the old state. A lost cacher
 * is a miss, never a failure.
 */
import type { Cacher } from "moleculer";
import type { Process } from "../../src/contract/model";

const PREFIX = "lookup.answers:";
/** Known versions beyond this many are swept of expired ones, at most once a second. */
const KNOWN_VERSIONS_SWEEP = 10_000;

export type Visibility = "all" | "visible";

interface SharedAnswer {
	answer: Process[];
	/** The organization's read-model version. */
	version: number;
	/** The catalog copy's digest. */
	catalog: string;
}

export class SharedAnswers {
	private readonly knownVersions = new Map<string, { version: number; until: number }>();
	private sweptAt = 0;
	/** Bumped by every invalidation: an answer computed before one is not shared. */
	epoch = 0;

	constructor(
		private readonly cacher: () => Cacher | null | undefined,
		private readonly ttlSeconds: number,
		private readonly onUnavailable: (error: unknown) => void,
	) {}

	static key(organizationKey: string, visibility: Visibility): string {
		return `${PREFIX}${organizationKey}|${visibility}`;
	}

	/** Remembers that the organization's read model reached `version`. */
	knowVersion(organizationKey: string, version: number): void {
		const now = Date.now();
		const until = now + this.ttlSeconds * 1000;
		const known = this.knownVersions.get(organizationKey);
		if (known && known.version > version) {
			known.until = until;
			return;
		}
		if (this.knownVersions.size >= KNOWN_VERSIONS_SWEEP && now - this.sweptAt >= 1000) {
			this.sweptAt = now;
			for (const [key, entry] of this.knownVersions) if (entry.until <= now) this.knownVersions.delete(key);
		}
		this.knownVersions.set(organizationKey, { version, until });
	}

	/** A rebuild: versions start again from 1. */
	forgetVersions(): void {
		this.knownVersions.clear();
	}

	async get(organizationKey: string, visibility: Visibility, catalogDigest: string): Promise<Process[] | undefined> {
		const cacher = this.cacher();
		if (!cacher) return undefined;
		try {
			const value = (await cacher.get(SharedAnswers.key(organizationKey, visibility))) as SharedAnswer | null;
			if (!value || !Array.isArray(value.answer) || value.catalog !== catalogDigest) return undefined;
			const known = this.knownVersions.get(organizationKey);
			if (known && known.until > Date.now() && value.version < known.version) return undefined;
			this.knowVersion(organizationKey, value.version);
			return value.answer;
		} catch {
			return undefined;
		}
	}

	/** Shares an answer computed at `epoch`, unless something was invalidated since. */
	async set(
		organizationKey: string,
		visibility: Visibility,
		answer: Process[],
		version: number,
		catalogDigest: string,
		epoch: number,
	): Promise<void> {
		const cacher = this.cacher();
		if (!cacher || epoch !== this.epoch) return;
		try {
			const shared: SharedAnswer = { answer, version, catalog: catalogDigest };
			await cacher.set(SharedAnswers.key(organizationKey, visibility), shared, this.ttlSeconds);
		} catch {
			// Best effort, as in get.
		}
	}

	/** Drops one organization's shared answers (both visibilities), or every one. */
	async invalidate(organizationKey?: string): Promise<void> {
		this.epoch++;
		const cacher = this.cacher();
		if (!cacher) return;
		try {
			if (organizationKey === undefined) await cacher.clean(`${PREFIX}*`);
			else
				await Promise.all(
					(["all", "visible"] as const).map((visibility) =>
						cacher.del(SharedAnswers.key(organizationKey, visibility)),
					),
				);
		} catch (error) {
			this.onUnavailable(error);
		}
	}
}
