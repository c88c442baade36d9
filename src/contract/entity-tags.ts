/**
 * Entity tags (docs/decisions.md "Safe writes"): a single record's answer carries `ETag`, a
 * hash of the answer's bytes, so it changes whenever anything the answer shows changes. The
 * gateway tags what it sends; a service checks an `If-Match` against the answer it would send
 * now, with the same function, inside the change's optimistic retry.
 */
import { createHash } from "node:crypto";

/** The strong tag of an answer body (its JSON text). */
export function entityTagOf(body: string): string {
	return `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
}

/** The tag of an answer object: JSON.stringify gives the bytes the gateway sends (services/api/answer-body.ts). */
export function entityTagOfAnswer(answer: unknown): string {
	return entityTagOf(JSON.stringify(answer));
}

/** The tags of an `If-Match` / `If-None-Match` value: `*`, or a comma-separated list of (possibly weak) quoted tags. */
function listedTags(header: string): string[] {
	return header.match(/(?:W\/)?"[^"]*"|\*/g) ?? [];
}

/** RFC 9110 §13.1.1: strong comparison; `*` matches any current representation. */
export function ifMatchHolds(header: string, current: string): boolean {
	return listedTags(header).some((tag) => tag === "*" || tag === current);
}

/** RFC 9110 §13.1.2: a GET whose `If-None-Match` names the current tag (weak comparison, `*` any) answers 304. */
export function isNotModified(header: string, current: string): boolean {
	return listedTags(header).some((tag) => tag === "*" || tag.replace(/^W\//, "") === current);
}

/** An `If-Match` a client sent: at least one tag or `*`; anything else is a malformed header. */
export function isEntityTagList(header: string): boolean {
	return listedTags(header).length > 0 && header.replace(/(?:W\/)?"[^"]*"|\*|,|\s/g, "") === "";
}

/** The `ifMatch` parameter of an action whose operation has `ifMatch` (the gateway checked its form). */
export const IF_MATCH_PARAM = { type: "string", optional: true, max: 2000 } as const;
