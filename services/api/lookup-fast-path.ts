/**
 * The hot lookup's short path through the gateway (issue 7, docs/performance.md "Lookup").
 *
 * An anonymous `GET /rest/api/organizations/{qualifiedIdentifier}/processes` whose answer
 * the lookup service of this same process already holds in memory is answered here, with
 * that answer's stored bytes, before moleculer-web routes it and before a broker call: the
 * route, the hooks, the context and the middleware chain cost more than the answer itself
 * (about a third of the request's CPU).
 *
 * It answers exactly what the full path answers (the same status, headers and bytes;
 * test/integration/lookup-fast-path.http.spec.ts compares them) and only when nothing could
 * differ. Everything else takes the full path unchanged: credentials (visibility, 401, the
 * login throttle), a query string, an Accept that is not the operation's (406), a path
 * value that is not an organization (400), an answer not held in memory (a miss fills it),
 * an organization without participants (404), a rate limit, a lookup on another node.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { answerMediaType, pathAround, pathValueOf, writeHeldAnswer } from "./fast-path-answer";
import { parseParticipantIdentifier } from "../../src/contract/identifiers";
import { OPERATIONS } from "../../src/contract/operations";

const OPERATION = OPERATIONS.find((operation) => operation.action === "lookup.organizationProcesses")!;
const AROUND = pathAround(OPERATION, "qualifiedIdentifier");
/** Where a finished lookup answer carries its JSON bytes (services/lookup/lookup.service.ts). */
const SERIALIZED = Symbol.for("registry.serialized");

/** What the fast path needs of the lookup service in this process. */
export interface MemoryLookup {
	/** The answer held in memory for anonymous callers, or undefined / null when there is none to give. */
	memoryAnswer(organizationKey: string, visibility: "visible"): unknown;
}

/** Answers the request and returns true, or returns false and leaves it untouched. */
export function answerFromMemory(req: IncomingMessage, res: ServerResponse, lookup: MemoryLookup): boolean {
	if (req.headers.authorization !== undefined) return false;
	const value = pathValueOf(req, AROUND);
	const organization = value === null ? null : parseParticipantIdentifier(value);
	if (!organization) return false;
	const mediaType = answerMediaType(OPERATION, req.headers.accept);
	if (mediaType === null) return false; // 406 is the full path's to give
	const answer = lookup.memoryAnswer(organization.organizationKey, "visible") as { [SERIALIZED]?: unknown } | null | undefined;
	const bytes = answer?.[SERIALIZED];
	if (!Buffer.isBuffer(bytes)) return false;
	writeHeldAnswer(req, res, OPERATION, mediaType, bytes);
	return true;
}
