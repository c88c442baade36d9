/**
 * Who may see and change which participants (decisions §4). A service provider works on
 * its own participants only; ADMIN and NETWORK_AUTHORITY read all; ADMIN deletes any.
 * The gateway already refused roles the endpoint table does not allow; these checks keep
 * the service safe when it is called some other way.
 */
import { AccessDenied } from "../../src/contract/errors";
import { seesEverything, type Caller } from "../../src/contract/model";
import type { Filter } from "../../src/store/types";
import type { ParticipantDoc } from "./model";

/** The caller, who must be a service provider linked to its provider: it owns what it adds. */
export function requireServiceProvider(caller: Caller | null | undefined): Caller & { serviceProvider: string } {
	if (caller?.role !== "SERVICE_PROVIDER" || !caller.serviceProvider) throw new AccessDenied();
	return caller as Caller & { serviceProvider: string };
}

/** The store filter that limits what a caller reads: its provider's participants, or all. */
export function readScope(caller: Caller | null | undefined): Filter {
	if (seesEverything(caller)) return {};
	return { serviceProvider: requireServiceProvider(caller).serviceProvider };
}

/** May the caller see this participant? A foreign one is answered as absent (404), never 403. */
export function canRead(caller: Caller, doc: ParticipantDoc): boolean {
	const scope = readScope(caller);
	return scope.serviceProvider === undefined || scope.serviceProvider === doc.serviceProvider;
}

/** May the caller delete this participant? Its owner, or ADMIN. */
export function canDelete(caller: Caller | null | undefined, doc: ParticipantDoc): boolean {
	if (!caller) throw new AccessDenied();
	if (caller.role === "ADMIN") return true;
	return requireServiceProvider(caller).serviceProvider === doc.serviceProvider;
}
