/**
 * The spec's error body (spec "Errors", decisions §8), built from any error a request can
 * meet: the registry's typed errors (also after a trip over NATS), Moleculer's validation
 * and availability errors, and body-parser failures.
 */
import { STATUS_CODES } from "node:http";
import { EXCEPTION_NAMES, RegistryError, type ExceptionName, type Violation } from "./errors";
import { toViolations, type FailedCheck } from "./validation";

export interface FieldErrorBody {
	codes: string[];
	defaultMessage: string;
	objectName: string;
	field: string;
	rejectedValue: string | null;
	bindingFailure: boolean;
	code: string;
	arguments: { codes: string[]; defaultMessage: string; code: string }[];
}

export interface ErrorBody {
	timestamp: string;
	status: number;
	error: string;
	exception: string;
	message: string;
	path: string;
	description?: string;
	errors?: FieldErrorBody[];
}

/** ISO 8601 date-time without zone, e.g. 2026-11-22T10:15:30.123 (UTC). */
export function timestamp(now = new Date()): string {
	return now.toISOString().slice(0, -1);
}

/**
 * `rejectedValue` as the contract types it (decisions §8): the value when it is a string, null
 * when missing, any other value as its JSON text (`42`, `[]`, `{"a":1}`).
 */
export function rejectedValueText(value: unknown): string | null {
	if (typeof value === "string") return value;
	if (value === undefined || value === null) return null;
	return JSON.stringify(value) ?? null;
}

export function fieldError(objectName: string, violation: Violation): FieldErrorBody {
	const { field, code } = violation;
	return {
		codes: [`${code}.${objectName}.${field}`, `${code}.${field}`, code],
		defaultMessage: violation.defaultMessage,
		objectName,
		field,
		rejectedValue: rejectedValueText(violation.rejectedValue),
		bindingFailure: violation.bindingFailure === true,
		code,
		arguments: [{ codes: [`${objectName}.${field}`, field], defaultMessage: field, code: field }],
	};
}

interface Classified {
	status: number;
	exception: ExceptionName;
	message: string;
	/** The first MAX_LISTED_VIOLATIONS violations. */
	violations?: Violation[];
	/** How many there were in all (when more than listed). */
	violationCount?: number;
}

/**
 * At most this many violations are listed in `errors[]`; the message still counts them all.
 * Without a cap, a body of many wrong array items answers megabytes of errors and blocks the
 * event loop for seconds (docs/reliability.md "Bad input").
 */
export const MAX_LISTED_VIOLATIONS = 100;

interface ErrorLike {
	name?: string;
	message?: string;
	code?: unknown;
	type?: unknown;
	status?: unknown;
	data?: unknown;
}

const REGISTRY_EXCEPTIONS = new Set<string>(EXCEPTION_NAMES.filter((name) => name !== "InternalServerError"));

/**
 * V8 quotes a piece of the body in some parse errors (`Unexpected token 'S', ..."assword":
 * Secret-123"... is not valid JSON`): an answer (or a log of it) must never carry what may be
 * a password, so that piece is dropped; the other messages only name a position (issue 8).
 */
function parseErrorMessage(message: string): string {
	if (!/is not valid JSON$/.test(message)) return message;
	const token = /^(Unexpected token '.+?'),/su.exec(message)?.[1];
	return token ? `${token} (not valid JSON)` : "not valid JSON";
}

/** Which errors mean "a service the request needs is not there or did not answer in time". */
const UNAVAILABLE_TYPES = new Set([
	"SERVICE_NOT_FOUND",
	"SERVICE_NOT_AVAILABLE",
	"REQUEST_TIMEOUT",
	"REQUEST_REJECTED",
	"REQUEST_SKIPPED",
	"NO_ALIAS_HANDLER_UNAVAILABLE",
]);

/**
 * Maps an error to status, exception name and message. `validated` is what the action was
 * called with (for rejectedValue of fastest-validator failures).
 */
export function classify(error: unknown, validated: unknown): Classified {
	const err = (error ?? {}) as ErrorLike;
	const type = typeof err.type === "string" ? err.type : "";
	const code = typeof err.code === "number" ? err.code : typeof err.status === "number" ? err.status : 500;

	if (REGISTRY_EXCEPTIONS.has(type)) {
		const data = err.data as { violations?: Violation[] } | undefined;
		const violations = data?.violations;
		return {
			status: code,
			exception: type as ExceptionName,
			message: err.message ?? "",
			violations: violations?.slice(0, MAX_LISTED_VIOLATIONS),
			violationCount: violations?.length,
		};
	}
	if (type === "VALIDATION_ERROR" && Array.isArray(err.data)) {
		const checks = err.data as FailedCheck[];
		const violations = toViolations(checks.slice(0, MAX_LISTED_VIOLATIONS), validated);
		return {
			status: 400,
			exception: "MethodArgumentNotValidException",
			message: "",
			violations,
			violationCount: checks.length,
		};
	}
	// body-parser failures (they carry `type` like "entity.parse.failed" and a `status`).
	if (type === "entity.parse.failed")
		return {
			status: 400,
			exception: "HttpMessageNotReadableException",
			message: `JSON parse error: ${parseErrorMessage(err.message ?? "")}`,
		};
	if (type === "entity.too.large")
		return { status: 413, exception: "PayloadTooLargeException", message: "Request body is larger than 1 MiB" };
	if (type === "encoding.unsupported" || type === "charset.unsupported")
		return { status: 415, exception: "HttpMediaTypeNotSupportedException", message: err.message ?? "" };
	if (type === "request.aborted" || type === "request.size.invalid")
		return { status: 400, exception: "HttpMessageNotReadableException", message: err.message ?? "" };
	if (UNAVAILABLE_TYPES.has(type) || err.name === "ServiceUnavailableError" || code === 503) {
		return {
			status: 503,
			exception: "ServiceUnavailableException",
			message: "A service needed for this request is not available; try again shortly",
		};
	}
	return { status: 500, exception: "InternalServerError", message: "Internal server error" };
}

export function errorBody(classified: Classified, path: string, objectName: string | undefined): ErrorBody {
	const body: ErrorBody = {
		timestamp: timestamp(),
		status: classified.status,
		error: STATUS_CODES[classified.status] ?? "Error",
		exception: classified.exception,
		message: classified.message,
		path,
	};
	if (classified.violations) {
		const name = objectName ?? "request";
		body.errors = classified.violations
			.slice(0, MAX_LISTED_VIOLATIONS)
			.map((violation) => fieldError(name, violation));
		body.message = `Validation failed for object='${name}'. Error count: ${Math.max(classified.violationCount ?? 0, classified.violations.length)}`;
	}
	return body;
}

/**
 * A request body that could not be read, as the gateway throws it: the failures a client
 * caused become RegistryErrors (4xx, never logged: a malformed JSON's message may quote a piece
 * of the body, a password perhaps); anything else stays as it is.
 */
export function bodyError(error: unknown): unknown {
	const classified = classify(error, undefined);
	return classified.status < 500
		? new RegistryError(classified.status, classified.exception, classified.message)
		: error;
}
