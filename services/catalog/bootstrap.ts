/**
 * The registry's one-time initialization (issue 17): demo data or a seed is loaded once for
 * the registry, however many processes start together. The claim is one record in the
 * catalog's store (every process of a registry shares that store), taken by the first
 * process that asks; the others wait until it is done, then skip the demo data or import
 * their seed again (idempotent). A claim whose process went away while loading is taken over.
 */
import { DuplicateKey, StaleVersion } from "../../src/store/errors";
import type { Collection, ModelSpec } from "../../src/store/types";

export const BOOTSTRAP_MODEL: ModelSpec = { collection: "bootstrap", fields: {}, indexes: [] };

/** What a process wants to load at start. */
export interface BootstrapRequest {
	source: "demo" | "seed";
	/** The seed file's name and content digest (a seed only). */
	file?: string;
	digest?: string;
	node: string;
}

export interface BootstrapClaim extends BootstrapRequest {
	identifier: "registry";
	state: "loading" | "done";
	/** What the holder actually loaded: the demo data is loaded only into an empty registry. */
	loaded?: "demo" | "seed" | "nothing";
	at: string;
	version?: number;
}

/** A loading claim older than this is its process's that went away; another may take it over. */
export const BOOTSTRAP_TAKEOVER_MS = 120_000;

export async function claimBootstrap(
	claims: Collection<BootstrapClaim>,
	request: BootstrapRequest,
	now = new Date(),
): Promise<{ granted: boolean; claim: BootstrapClaim }> {
	const fresh: BootstrapClaim = { ...request, identifier: "registry", state: "loading", at: now.toISOString() };
	for (;;) {
		const current = await claims.get("registry");
		try {
			if (!current) return { granted: true, claim: await claims.insert(fresh) };
			const abandoned =
				current.state === "loading" && now.getTime() - Date.parse(current.at) > BOOTSTRAP_TAKEOVER_MS;
			if (!abandoned) return { granted: false, claim: current };
			return { granted: true, claim: await claims.replace(fresh, current.version) };
		} catch (error) {
			// Another process claimed it between the read and the write: read again.
			if (!(error instanceof DuplicateKey || error instanceof StaleVersion)) throw error;
		}
	}
}

export async function finishBootstrap(
	claims: Collection<BootstrapClaim>,
	node: string,
	loaded: BootstrapClaim["loaded"],
): Promise<BootstrapClaim | null> {
	const current = await claims.get("registry");
	if (!current || current.node !== node) return current;
	return claims.replace({ ...current, state: "done", loaded, at: new Date().toISOString() }, current.version);
}
