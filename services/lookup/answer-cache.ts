/**
 * The lookup's cached answers, and the one guarantee they keep (decisions §11): every node
 * answers a committed change within 1 s, and never answers an older state of an organization
 * than one it has answered before. Across nodes no order is promised.
 *
 * - In memory, each node keeps an organization's answers. The node that applies a change tells
 *   every node (the `lookup.invalidated` event) and each forgets that organization at once; in a
 *   cluster a copy lives at most `localTtlMs` (500 ms), so a node that missed the event answers
 *   the change when its copy expires (in one process every event is heard: no expiry). A build
 *   (or Redis read) that began before the organization was forgotten answers its caller but is
 *   not kept: it may hold the state from before the change.
 * - Behind that, Redis (the cacher's server, in a cluster) keeps each organization's answers in
 *   one hash with the read-model version they were built from. Writes go through a Lua script
 *   that refuses an answer older than the hash, and the node that applies a change first marks
 *   the hash with the new version, dropping the older answers: a node that read the store before
 *   a change and writes after it cannot put the old state back for the others.
 * - A change is announced (Redis marked, the event sent) only after its read model is written,
 *   and the read model records the version it announced before the event goes: a node that
 *   stopped before that leaves the announcement lagging, and the change's redelivery announces it
 *   (services/lookup); one that stopped after it leaves Redis marked and the copies to expire.
 * - A mark Redis refused: the hashes' names carry a cache generation kept in the read-model store;
 *   the node moves it on and sends it with the event, so every node leaves all older hashes at
 *   once. A node that missed the event reads the generation again every `localTtlMs`, and each
 *   node reads it when it starts: nothing depends on one node's memory, and a hit costs no store read.
 * - Answers are built from the read model and a copy of the catalog; the copy's digest is part of
 *   each answer's name, so an answer built from another copy is not taken.
 * Redis away or slow is a miss. Left open: Redis losing its data while a node that read before a
 * change is still writing its answer; that answer lives until `sharedTtlMs` or the next change.
 */
import { LRUCache } from "lru-cache";
import type Redis from "ioredis";

/** Fill, or mark (no field): KEYS[1] the hash; ARGV version, field, value, ttl in ms. */
const CONDITIONAL_WRITE = `
local current = tonumber(redis.call('HGET', KEYS[1], 'v'))
local version = tonumber(ARGV[1])
if current and current > version then return 0 end
if current ~= version then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'v', ARGV[1])
end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

interface AnswerRedis extends Redis {
	lookupWrite(key: string, version: number, field: string, value: string, ttlMs: number): Promise<number>;
}

/** An answer, with the read-model version of its organization it was built from (0: no model yet). */
export interface Built<T> {
	version: number;
	answer: T;
}

/** An organization's answers as JSON text, as Redis keeps them: each hit parses its own copy, so no caller can change a cached answer. */
interface LocalEntry {
	version: number;
	answers: Map<string, string>;
}

export interface AnswerCacheOptions {
	/** The cacher's Redis client in a cluster; null in one process. */
	redis: Redis | null;
	/** Key prefix of this registry's namespace. */
	prefix: string;
	localTtlMs: number;
	sharedTtlMs: number;
	maxLocalOrganizations: number;
	onRedisError(error: unknown): void;
}

export class AnswerCache {
	private readonly local: LRUCache<string, LocalEntry>;
	private readonly redis: AnswerRedis | null;
	/** Builds in flight, so concurrent misses of one answer read the store once; a forget drops its organization's. */
	private readonly building = new Map<string, { organizationKey: string; text: Promise<string> }>();
	/** Part of every Redis key: moved on when a mark was refused (services/lookup keeps it in the read-model store). */
	private generation = 0;
	/** In a cluster expired copies go every localTtlMs, not when the LRU's bound pushes them out: memory holds about a second of misses. */
	private readonly purge?: NodeJS.Timeout;

	constructor(private readonly options: AnswerCacheOptions) {
		this.local = new LRUCache({ max: options.maxLocalOrganizations, ttl: options.localTtlMs || undefined });
		if (options.localTtlMs > 0) this.purge = setInterval(() => this.local.purgeStale(), options.localTtlMs).unref();
		this.redis = options.redis as AnswerRedis | null;
		if (this.redis && !this.redis.lookupWrite)
			this.redis.defineCommand("lookupWrite", { numberOfKeys: 1, lua: CONDITIONAL_WRITE });
	}

	/** The answer `name` (built from the catalog copy `digest`) of an organization, from the cache or `build`. */
	async get<T>(organizationKey: string, name: string, digest: string, build: () => Promise<Built<T>>): Promise<T> {
		return JSON.parse(await this.text(organizationKey, name, digest, build)) as T;
	}

	/** The same answer as the JSON text it is kept as: a gateway writes it as is, with no parse and no stringify. */
	async text<T>(
		organizationKey: string,
		name: string,
		digest: string,
		build: () => Promise<Built<T>>,
	): Promise<string> {
		const field = `${digest}|${name}`;
		return (
			this.local.get(organizationKey)?.answers.get(field) ?? (await this.textOf(organizationKey, field, build))
		);
	}

	/** After a change of the organization's read model (version `version`): this node's copy goes, and the mark in Redis; false when Redis refused it. */
	async changed(organizationKey: string, version: number): Promise<boolean> {
		this.forget(organizationKey);
		return !this.redis || (await this.write(this.keyOf(organizationKey), version, "", ""));
	}

	/** The cache generation in the read-model store (only ever moves on): older Redis hashes are left. */
	useGeneration(generation: number): void {
		if (generation > this.generation) this.generation = generation;
	}

	stop(): void {
		clearInterval(this.purge);
	}

	/** Another node changed the organization (every organization when none is named). */
	forget(organizationKey?: string): void {
		if (organizationKey === undefined) this.local.clear();
		else this.local.delete(organizationKey);
		for (const [key, build] of this.building)
			if (organizationKey === undefined || build.organizationKey === organizationKey) this.building.delete(key);
	}

	/** The answer's JSON text from Redis or `build`; concurrent misses of one answer read the store once. */
	private textOf<T>(organizationKey: string, field: string, build: () => Promise<Built<T>>): Promise<string> {
		const key = `${organizationKey}\u0000${field}`;
		let pending = this.building.get(key);
		if (!pending) {
			const started = { organizationKey } as { organizationKey: string; text: Promise<string> };
			const current = () => this.building.get(key) === started;
			started.text = this.fetch(organizationKey, field, build, current).finally(() => {
				if (current()) this.building.delete(key);
			});
			this.building.set(key, (pending = started));
		}
		return pending.text;
	}

	/** `current`: not forgotten since it began (else the answer may be from before the change, and is not kept). */
	private async fetch<T>(
		organizationKey: string,
		field: string,
		build: () => Promise<Built<T>>,
		current: () => boolean,
	): Promise<string> {
		// The generation when it began: an answer read before a refused mark goes where no node looks any more.
		// In one process there is no Redis, and no key to name.
		const hash = this.redis ? this.keyOf(organizationKey) : null;
		const shared = hash ? await this.read(hash, field) : null;
		// Older than what this node answered for another name of the organization: the store, not Redis.
		if (shared && shared.version >= (this.local.get(organizationKey)?.version ?? 0)) {
			if (current()) this.remember(organizationKey, field, shared.version, shared.text);
			return shared.text;
		}
		const built = await build();
		const text = JSON.stringify(built.answer);
		if (hash) await this.write(hash, built.version, field, text);
		if (current()) this.remember(organizationKey, field, built.version, text);
		return text;
	}

	private remember(organizationKey: string, field: string, version: number, text: string): void {
		const entry = this.local.get(organizationKey);
		if (entry && entry.version > version) return;
		if (entry && entry.version === version) entry.answers.set(field, text);
		else this.local.set(organizationKey, { version, answers: new Map([[field, text]]) });
	}

	private async read(hash: string, field: string): Promise<{ version: number; text: string } | null> {
		try {
			const [version, text] = await (this.redis as AnswerRedis).hmget(hash, "v", field);
			if (version === null || text === null) return null;
			return { version: Number(version), text };
		} catch (error) {
			this.options.onRedisError(error);
			return null;
		}
	}

	private async write(hash: string, version: number, field: string, value: string): Promise<boolean> {
		try {
			await (this.redis as AnswerRedis).lookupWrite(hash, version, field, value, this.options.sharedTtlMs);
			return true;
		} catch (error) {
			this.options.onRedisError(error);
			return false;
		}
	}

	private keyOf(organizationKey: string): string {
		// Generation 0 keeps the names nodes used before generations: a rolling upgrade reads what the others mark.
		const generation = this.generation ? `${this.generation}:` : "";
		return `${this.options.prefix}lookup:${generation}${organizationKey}`;
	}
}
