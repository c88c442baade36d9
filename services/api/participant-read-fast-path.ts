/**
 * The authenticated read's short path through the gateway (issue 7, docs/performance.md
 * "Fourth round"): a service provider's `GET /rest/api/participants/{qualifiedIdentifier}`.
 *
 * When the caller's credential is already verified and cached by the gateway, the login
 * throttle lets it through, and the participants service of this same process holds the
 * answer (services/participants/read-answers.ts), the gateway writes that answer's bytes
 * without moleculer-web's routing and without a broker call. moleculer-web, the broker call,
 * the store read and the JSON of a ~2 KB answer were two thirds of this read's CPU beside the
 * kernel's.
 *
 * It answers exactly what the full path answers (status, headers, bytes;
 * test/integration/participant-read-fast-path.http.spec.ts compares them) and only when
 * nothing could differ. Everything else takes the full path: no credentials or a credential
 * not cached (a first request verifies it), a throttled or malformed one (429, 401), a role
 * other than the operation's (403), a query string, an Accept that is not the operation's
 * (406), a UUID or a malformed path value, an answer not held (a miss fills it), a
 * participant of another provider or none (404), a rate limit, participants on another node.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { answerMediaType, pathAround, pathValueOf, writeHeldAnswer } from "./fast-path-answer";
import { parseParticipantIdentifier } from "../../src/contract/identifiers";
import type { Caller } from "../../src/contract/model";
import { OPERATIONS } from "../../src/contract/operations";

const OPERATION = OPERATIONS.find((operation) => operation.action === "participants.get" && operation.pathForm === "qualifiedIdentifier")!;
const AROUND = pathAround(OPERATION, "participant");

/** What the short path needs of the participants service in this process. */
export interface HeldParticipantReads {
	/** Whether it holds answers at all (not on MongoDB, where other nodes write): else the short path is not tried. */
	holdsReadAnswers(): boolean;
	/** The caller's read of its participant for this organization, as JSON bytes, when held in memory. */
	heldReadAnswer(caller: Caller, organizationKey: string): Buffer | undefined;
}

/** A request the short path may answer once it knows the caller. */
export interface ParticipantRead {
	authorization: string;
	organizationKey: string;
	mediaType: string;
}

/** The read a request asks for, or null when it is not one the short path answers. */
export function participantReadOf(req: IncomingMessage): ParticipantRead | null {
	const authorization = req.headers.authorization;
	if (authorization === undefined) return null;
	const value = pathValueOf(req, AROUND);
	const organization = value === null ? null : parseParticipantIdentifier(value);
	if (!organization) return null;
	const mediaType = answerMediaType(OPERATION, req.headers.accept);
	if (mediaType === null) return null;
	return { authorization, organizationKey: organization.organizationKey, mediaType };
}

/** Answers the read for an authenticated caller and returns true, or returns false and leaves it untouched. */
export function answerParticipantRead(req: IncomingMessage, res: ServerResponse, read: ParticipantRead, caller: Caller, participants: HeldParticipantReads): boolean {
	if (!OPERATION.roles.includes(caller.role)) return false; // 403 is the full path's to give
	const bytes = participants.heldReadAnswer(caller, read.organizationKey);
	if (!bytes) return false;
	writeHeldAnswer(req, res, OPERATION, read.mediaType, bytes);
	return true;
}
