/**
 * The caller a Bearer token acts as (decisions §15): the token verified (access-tokens.ts), then
 * the enabled account whose `oauthClientId` is its client, asked of accounts with the gateway's
 * signature and remembered like a verified Basic credential (dropped on `accounts.changed`).
 */
import { LRUCache } from "lru-cache";
import type { ServiceBroker } from "moleculer";
import { RegistryError } from "../contract/errors";
import type { Caller } from "../contract/model";
import { markAuthenticated, signClientResolution } from "../platform/caller-signature";
import { AccessTokens, invalidToken } from "./access-tokens";
import { IssuerKeys } from "./issuer-keys";
import type { OAuthSettings } from "./settings";

/** Clients remembered at most; the least recently used goes first (one accounts call to resolve again). */
const MAX_CLIENTS = 10_000;

export interface TokenCallerOptions {
	/** How long a client's account is remembered (AUTH_CACHE_SECONDS, as for Basic credentials). */
	ttlMs: number;
	/** A refused token is limited per address like an anonymous request: seconds to wait, 0 to answer its refusal. */
	refusedWait: (address: string, now: number) => number;
	/** The issuer's keys could not be fetched (logged; readiness details say so). */
	onUnreachable: (problem: string) => void;
}

export class TokenCallers {
	private readonly keys: IssuerKeys;
	private readonly tokens: AccessTokens;
	private readonly remembered: LRUCache<string, Caller>;
	/** Bumped by clear(): a resolution still in flight answers its request but is not remembered. */
	private generation = 0;

	constructor(
		private readonly broker: ServiceBroker,
		settings: OAuthSettings,
		private readonly options: TokenCallerOptions,
	) {
		this.keys = new IssuerKeys(settings, options.onUnreachable);
		this.tokens = new AccessTokens(settings, this.keys, options.ttlMs);
		this.remembered = new LRUCache<string, Caller>({ max: MAX_CLIENTS, ttl: options.ttlMs });
	}

	start(): void {
		this.keys.start();
	}

	stop(): void {
		this.keys.stop();
	}

	/** For readiness details: whether tokens can be verified. */
	status(): string {
		return this.keys.status();
	}

	/** Forget every client's account (an account changed: a mapping or the account itself). */
	clear(): void {
		this.generation++;
		this.remembered.clear();
		this.tokens.forget();
	}

	/** The caller of a `Bearer` header; a refused token locks nothing (it names no account) but spends its address's rate. */
	async callerOf(header: string, address: string, now: number): Promise<Caller> {
		try {
			const client = await this.tokens.clientOf(header, now);
			const caller = this.remembered.get(client) ?? (await this.resolve(client));
			if (!caller) throw invalidToken("The access token's client acts as no enabled account");
			return caller;
		} catch (error) {
			const status = error instanceof RegistryError ? error.code : 0;
			const wait = status === 401 || status === 403 ? this.options.refusedWait(address, now) : 0;
			if (wait > 0)
				throw new RegistryError(429, "TooManyRequestsException", "Too many requests from this address", {
					retryAfter: wait,
				});
			throw error;
		}
	}

	private async resolve(clientId: string): Promise<Caller | null> {
		const generation = this.generation;
		const account = await this.broker.call<Caller | null, { clientId: string }>(
			"accounts.oauthClient",
			{ clientId },
			// Only a gateway asks which account a client acts as (src/platform/caller-signature.ts).
			{ caller: "api", meta: { authenticationSignature: signClientResolution(this.broker, clientId) } } as never,
		);
		if (!account) return null;
		const caller = markAuthenticated({ ...account, viaToken: true });
		if (generation === this.generation) this.remembered.set(clientId, caller);
		return caller;
	}
}
