/**
 * The call meta of the registry, typed once: every action handler's context is a
 * RegistryContext. (moleculer 0.14 types `ctx.meta` by Context's second type parameter, which a
 * module augmentation cannot change: redeclaring `meta` is TS2717.)
 */
import type { Context } from "moleculer";
import type { Caller } from "../contract/model";

export interface RegistryMeta {
	/** The caller, as the gateway authenticated it; absent or null for anonymous calls (src/platform/permissions.ts). */
	user?: Caller | null;
	/** `user`'s signature and expiry (src/platform/caller-signature.ts): without a valid one, a user is refused. */
	userSignature?: string;
	/** The gateway's signature of an `accounts.authenticate` call (src/platform/caller-signature.ts). */
	authenticationSignature?: string;
}

export type RegistryContext<P = unknown> = Context<P, RegistryMeta>;
