/**
 * Typed errors of the registry. Domain services throw these; the gateway turns any of
 * them into the spec's error body (spec "Errors", decisions §8). They extend
 * MoleculerClientError so that `code` (HTTP status), `type` (exception name) and `data`
 * (violations) survive the trip over NATS.
 */
import { Errors } from "moleculer";

/** One constraint violation, before the gateway adds objectName, codes and arguments. */
export interface Violation {
	/** Field path as the client wrote it, e.g. `title` or `processes[0].identifier`. */
	field: string;
	/** Bean-validation style code: NotNull, NotEmpty, Size, Pattern, Email, Valid... */
	code: string;
	/** Human text, e.g. "must not be null". */
	defaultMessage: string;
	/** The value sent (null when missing). */
	rejectedValue: unknown;
	/** True only for a type mismatch. */
	bindingFailure?: boolean;
}

/** The exception names an error body may carry (the spec's, and the two the extensions add: 412, 422). */
export const EXCEPTION_NAMES = [
	"NotFoundException",
	"MethodArgumentNotValidException",
	"HttpMessageNotReadableException",
	"MethodArgumentTypeMismatchException",
	"ConflictException",
	"AuthenticationException",
	"AccessDeniedException",
	"HttpMediaTypeNotAcceptableException",
	"HttpMediaTypeNotSupportedException",
	"HttpRequestMethodNotSupportedException",
	"PayloadTooLargeException",
	"TooManyRequestsException",
	"ServiceUnavailableException",
	"PreconditionFailedException",
	"UnprocessableEntityException",
	"InternalServerError",
] as const;
export type ExceptionName = (typeof EXCEPTION_NAMES)[number];

export class RegistryError extends Errors.MoleculerClientError {
	constructor(status: number, exception: ExceptionName, message: string, data?: unknown) {
		super(message, status, exception, data);
		// MoleculerClientError marks < 500 as non-retryable already; keep name stable for logs.
		this.name = exception;
	}
}

/** 404: a path identifier matches no record (or a record the caller may not see). */
export class NotFound extends RegistryError {
	constructor(message: string) {
		super(404, "NotFoundException", message);
	}
	static instance(kind: string, identifier: string): NotFound {
		return new NotFound(`${kind} instance with identifier ${identifier} cannot be found`);
	}
	static organization(qualifiedIdentifier: string): NotFound {
		return new NotFound(`organization for qualified identifier ${qualifiedIdentifier} cannot be found`);
	}
}

/** 401: no caller where the operation needs one (the gateway adds WWW-Authenticate). */
export class Unauthenticated extends RegistryError {
	constructor(message = "Full authentication is required to access this resource") {
		super(401, "AuthenticationException", message);
	}
}

/** 403: the caller's role (or provider) may not do this. */
export class AccessDenied extends RegistryError {
	constructor(message = "Access is denied") {
		super(403, "AccessDeniedException", message);
	}
}

/** One field's failure in a validation error (`rejectedValue` absent: null). */
export function violation(field: string, code: string, defaultMessage: string, rejectedValue: unknown): Violation {
	return { field, code, defaultMessage, rejectedValue: rejectedValue ?? null, bindingFailure: false };
}

/** 409: a uniqueness rule or a still-linked record (decisions §6). */
export class Conflict extends RegistryError {
	constructor(message: string) {
		super(409, "ConflictException", message);
	}
}

/** 412: an `If-Match` that no longer names the record's current representation (docs/decisions.md "Safe writes"). */
export class PreconditionFailed extends RegistryError {
	constructor(kind: string, identifier: string) {
		super(
			412,
			"PreconditionFailedException",
			`${kind} ${identifier} changed since the ETag given in If-Match was read; read it again and retry`,
		);
	}
}

/** 400 with `errors[]`: the request body broke a rule. objectName comes from the operation. */
export class ValidationFailed extends RegistryError {
	constructor(public readonly violations: Violation[]) {
		super(400, "MethodArgumentNotValidException", `Validation failed. Error count: ${violations.length}`, {
			violations,
		});
	}
	static one(field: string, code: string, defaultMessage: string, rejectedValue: unknown): ValidationFailed {
		return new ValidationFailed([violation(field, code, defaultMessage, rejectedValue)]);
	}
}

/** 400 for a path or query value of the wrong shape (bad UUID, bad page, bad sort). */
export class TypeMismatch extends RegistryError {
	constructor(message: string) {
		super(400, "MethodArgumentTypeMismatchException", message);
	}
}

/** 400 for a rule that is not a field violation (e.g. transfer to one's own provider). */
export class BadRequest extends RegistryError {
	constructor(message: string) {
		super(400, "MethodArgumentNotValidException", message);
	}
}
