/** The call meta, typed once: moleculer 0.14 types `ctx.meta` by Context's second parameter, not augmentation. */
import type { Context } from "moleculer";
import type { Caller } from "../contract/model";

export interface RegistryMeta {
	/** The caller, as the gateway authenticated it; absent or null for anonymous calls (src/platform/permissions.ts). */
	user?: Caller | null;
	/** `user`'s signature and expiry (src/platform/caller-signature.ts): without a valid one, a user is refused. */
	userSignature?: string;
	/** The gateway's signature of an `accounts.authenticate` call (src/platform/caller-signature.ts). */
	authenticationSignature?: string;
	/**
	 * Set by the gateway to the action it calls: that action may answer with its answer's JSON text
	 * (a string) and say so in `$responseType`; any other call, or a call it makes, gets the object.
	 */
	$textAnswer?: string;
	/** The media type of a string answer (moleculer-web's convention): `JSON_TEXT` when it is the answer's JSON text. */
	$responseType?: string;
}

/** `$responseType` of an answer sent as its JSON text (`$textAnswer`). */
export const JSON_TEXT = "application/json";

export type RegistryContext<P = unknown> = Context<P, RegistryMeta>;
