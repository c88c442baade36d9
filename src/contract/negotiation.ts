/**
 * Content negotiation and operation selection (spec "Endpoint table" rules 1–2,
 * decisions §2 and §5). Pure functions over the operations table.
 */
import { RegistryError, TypeMismatch } from "./errors";
import { isUuid, parseParticipantIdentifier, type OrganizationRef } from "./identifiers";
import { USERNAME_PATTERN } from "./model";
import type { HttpMethod, Operation } from "./operations";

/** Operations that share a method and a path; the gateway registers one alias per group. */
export interface OperationGroup {
	method: HttpMethod;
	path: string;
	operations: Operation[];
	/** Whether some operation of the group is open to anonymous callers (else one is refused before negotiation). */
	anonymous: boolean;
}

export function groupOperations(operations: Operation[]): OperationGroup[] {
	const groups = new Map<string, OperationGroup>();
	for (const operation of operations) {
		const key = `${operation.method} ${operation.path}`;
		const group: OperationGroup = groups.get(key) ?? {
			method: operation.method,
			path: operation.path,
			operations: [],
			anonymous: false,
		};
		group.operations.push(operation);
		if (operation.roles.includes("ANONYMOUS")) group.anonymous = true;
		groups.set(key, group);
	}
	return [...groups.values()];
}

/** `type/subtype` of a media range or Content-Type, lower-cased, without parameters. */
export function essence(mediaType: string): string {
	return mediaType.split(";")[0].trim().toLowerCase();
}

const GENERIC_ACCEPT = new Set(["*/*", "application/*", "application/json"]);

interface MediaRange {
	essence: string;
	quality: number;
}

/** The media ranges of an Accept header, the most wanted first; ranges of quality 0 left out. */
function parseAccept(accept: string): MediaRange[] {
	const ranges: MediaRange[] = [];
	for (const part of accept.split(",")) {
		if (part.trim() === "") continue;
		const quality = /;\s*q\s*=\s*([0-9.]+)/i.exec(part);
		const range = { essence: essence(part), quality: quality ? Number(quality[1]) : 1 };
		if (range.quality > 0) ranges.push(range);
	}
	// Stable: equal qualities keep the client's order.
	return ranges.sort(byQuality);
}

function byQuality(a: MediaRange, b: MediaRange): number {
	return b.quality - a.quality;
}

function notAcceptable(accept: string, candidates: Operation[]): RegistryError {
	const offered = [...new Set(candidates.flatMap((operation) => operation.mediaTypes))].join(", ");
	return new RegistryError(
		406,
		"HttpMediaTypeNotAcceptableException",
		`Could not find acceptable representation for Accept '${accept}'; this operation produces: ${offered}`,
	);
}

/**
 * Picks the operation of a group by Accept: a media range whose type/subtype equals an
 * operation's media type selects it (any parameters); a missing Accept, `*​/*`,
 * `application/*` or `application/json` selects the default (paged) form; else 406. Also the
 * media type to answer with: the spelling the Accept named (the organization lookup has two),
 * else the operation's first.
 */
export function selectByAccept(candidates: Operation[], accept: string | undefined): Choice {
	let fallback = candidates[0];
	for (const operation of candidates) if (operation.isDefault) fallback = operation;
	if (!accept || accept.trim() === "") return choiceOf(fallback, fallback.mediaTypes[0]);
	for (const range of parseAccept(accept)) {
		for (const operation of candidates)
			if (operation.mediaTypes.includes(range.essence)) return choiceOf(operation, range.essence);
		if (GENERIC_ACCEPT.has(range.essence)) return choiceOf(fallback, fallback.mediaTypes[0]);
	}
	throw notAcceptable(accept, candidates);
}

function choiceOf(operation: Operation, mediaType: string): Choice {
	return { operation, mediaType, contentType: `${mediaType};charset=UTF-8` };
}

/**
 * Content-Type of a request with a body: the operation's media type or application/json,
 * any charset; anything else (or none) is 415.
 */
export function checkContentType(operation: Operation, contentType: string | undefined): void {
	const given = contentType ? essence(contentType) : "";
	if (given === "application/json" || operation.mediaTypes.includes(given)) return;
	throw new RegistryError(
		415,
		"HttpMediaTypeNotSupportedException",
		`Content type '${contentType ?? ""}' not supported; use ${operation.mediaTypes[0]} or application/json`,
	);
}

/** The operation a request addresses, the media type it is answered with and that type's Content-Type. */
export interface Choice {
	operation: Operation;
	mediaType: string;
	contentType: string;
}

/** A path value, parsed once when the route matches (spec rule 2, decisions §5): its form and, for a qualified identifier, its parts. */
export interface PathValue {
	/** The percent-decoded segment as sent. */
	text: string;
	form: "qualifiedIdentifier" | "uuid" | null;
	/** The organization of a qualified identifier. */
	organization: OrganizationRef | null;
}

/** The path values of a matched route, each parsed once. */
export function parsePathValues(raw: Record<string, string>): Record<string, PathValue> {
	const values: Record<string, PathValue> = {};
	for (const name in raw) {
		const text = raw[name];
		if (isUuid(text)) values[name] = { text, form: "uuid", organization: null };
		else {
			const organization = parseParticipantIdentifier(text);
			values[name] = { text, form: organization ? "qualifiedIdentifier" : null, organization };
		}
	}
	return values;
}

/**
 * Narrows a group to the rows the participant path value can address. A value that is
 * neither a qualified identifier nor a UUID is 400 (decisions §5).
 */
export function selectByPathForm(candidates: Operation[], participant: PathValue | undefined): Operation[] {
	if (candidates.length === 1 && !candidates[0].pathForm) return candidates;
	const form = participant?.form ?? null;
	const matching: Operation[] = [];
	const accepted = new Set<string>();
	for (const operation of candidates) {
		if (operation.pathForm) accepted.add(operation.pathForm);
		if (!operation.pathForm || operation.pathForm === form) matching.push(operation);
	}
	if (accepted.size === 0) return candidates;
	if (form && matching.length > 0) return matching;
	const expected =
		accepted.size > 1
			? "qualified identifier or a UUID"
			: accepted.has("uuid")
				? "UUID"
				: "qualified identifier (<scheme>::<icd>:<organizationIdentifier>)";
	throw new TypeMismatch(`Path value '${participant?.text ?? ""}' is not a ${expected}`);
}

/**
 * Checks every path parameter of the chosen operation and turns them into the action's
 * params (docs/internals.md): UUIDs lower-cased as `identifier`, participant and
 * organization values as `qualifiedIdentifier`, SMP identifiers as sent under their own names.
 */
export function pathParamsToActionParams(
	operation: Operation,
	params: Record<string, PathValue>,
): Record<string, string> {
	const out: Record<string, string> = {};
	for (const name in operation.pathParams) {
		const kind = operation.pathParams[name];
		const parsed = params[name];
		const value = parsed?.text ?? "";
		if (kind === "smpIdentifier") out[name] = value;
		else if (kind === "username") {
			if (!USERNAME_PATTERN.test(value))
				throw new TypeMismatch(`Path parameter '${name}' is not a username; value: '${value}'`);
			out.username = value;
		} else if (kind === "uuid") {
			if (parsed?.form !== "uuid")
				throw new TypeMismatch(
					`Failed to convert value '${value}' of path parameter '${name}' to required type 'UUID'`,
				);
			out[name === "serviceProviderIdentifier" ? name : "identifier"] = value.toLowerCase();
		} else {
			if (parsed?.form !== "qualifiedIdentifier") {
				throw new TypeMismatch(
					`Path parameter '${name}' must be a qualified identifier <scheme>::<icd>:<organizationIdentifier>; value: '${value}'`,
				);
			}
			out.qualifiedIdentifier = value;
		}
	}
	return out;
}
