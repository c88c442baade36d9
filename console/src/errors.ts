/**
 * What the console shows for a refused request: a plain sentence for the status, the wait a 429
 * asks for (Retry-After), and each field error of the API's `errors[]` keyed by the form field it
 * belongs to (`contact.phoneNumber`; `processes[1].identifier` → `processes`). Pure functions, so
 * that test/unit/console-errors.spec.ts checks them without a browser.
 */

/** One entry of the error body's `errors[]` (spec "Errors"). */
export interface ApiFieldError {
	field: string;
	code: string;
	defaultMessage?: string;
	rejectedValue?: unknown;
}

/** The spec's error body, as far as the console reads it. */
export interface ApiErrorBody {
	status?: number;
	error?: string;
	message?: string;
	errors?: ApiFieldError[];
}

export interface Failure {
	status: number;
	/** One sentence for the page (an Alert). */
	message: string;
	/** Seconds to wait, from a 429's Retry-After. */
	retryAfterSeconds?: number;
	/** Form field → what is wrong with it. */
	fields: Record<string, string>;
	/** The API's field path (`endpoints[1].certificate`) → what is wrong, for forms with lists of records. */
	paths?: Record<string, string>;
}

/** What each validation code means, in the words of someone filling in the form. */
const CODE_MESSAGES: Record<string, string> = {
	NotNull: "Required",
	NotEmpty: "Required",
	NotBlank: "Required",
	Size: "Too short or too long",
	Pattern: "Not in the expected format",
	Email: "Not a valid e-mail address",
	Phone: "Not a valid phone number (e.g. +47 22 33 44 55)",
	OrganizationNumber: "Not a valid organization number for this ICD (the check digit does not match)",
	TypeMismatch: "Has the wrong type",
	Exists: "Does not exist in the registry",
	RequiredICD: "This process does not accept the participant's ICD",
	Restricted: "This process is restricted (deprecated) and cannot be added",
	Dependency: "A process this one depends on is missing: add it too",
	Unique: "Listed twice",
	Future: "Must be a date in the future",
	FutureOrPresent: "Must be today or later",
	Range: "Out of the allowed range",
	OtherProvider: "Must be another service provider than the participant's own",
	TransferKey: "Does not match the transfer's key",
	Certificate: "Not an X.509 certificate: paste the PEM (-----BEGIN CERTIFICATE----- …) or its base64",
	CertificateExpired: "This certificate has expired",
	ExpirationBeforeActivation: "Must not be before the activation date",
	Null: "Must be empty for this role",
	Unknown: "Not a field of this form",
};

/** `processes[1].identifier` → `processes`; `contact.phoneNumber` stays. */
export function formFieldOf(field: string): string {
	const bracket = field.indexOf("[");
	return bracket === -1 ? field : field.slice(0, bracket);
}

export function fieldMessage(error: ApiFieldError): string {
	return CODE_MESSAGES[error.code] ?? error.defaultMessage ?? error.code;
}

/** Every field error at its form field; several on one field are joined. */
export function fieldErrors(errors: ApiFieldError[] | undefined): Record<string, string> {
	const out: Record<string, string> = {};
	for (const error of errors ?? []) {
		const key = formFieldOf(error.field);
		const message = fieldMessage(error);
		if (!out[key]) out[key] = message;
		else if (!out[key].includes(message)) out[key] = `${out[key]}; ${message}`;
	}
	return out;
}

/** Every field error at its exact path (`endpoints[1].certificate`); several on one path are joined. */
export function pathErrors(errors: ApiFieldError[] | undefined): Record<string, string> {
	const out: Record<string, string> = {};
	for (const error of errors ?? []) {
		const message = fieldMessage(error);
		out[error.field] = out[error.field] ? `${out[error.field]}; ${message}` : message;
	}
	return out;
}

/** Retry-After in seconds (delta-seconds, or an HTTP date relative to `now`). */
export function retryAfterSeconds(value: string | null | undefined, now = Date.now()): number | undefined {
	if (!value) return undefined;
	if (/^\d+$/.test(value.trim())) return Number(value.trim());
	const at = Date.parse(value);
	return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export function statusMessage(status: number, body: ApiErrorBody | undefined, retryAfter: number | undefined): string {
	switch (status) {
		case 400:
			return body?.errors?.length
				? "Some fields need attention."
				: (body?.message ?? "The registry refused the request.");
		case 401:
			return "Wrong username or password, or the account is disabled. Sign in again.";
		case 403:
			return "Your role may not do this.";
		case 404:
			return body?.message ?? "Not found.";
		case 409:
			return body?.message ?? "This conflicts with the registry's current state.";
		case 412:
			return "Someone else changed this record since you opened it. Your changes were not saved: reload to see the current version.";
		case 429:
			return retryAfter !== undefined
				? `Too many attempts. Try again in ${retryAfter} second${retryAfter === 1 ? "" : "s"}.`
				: "Too many attempts. Try again later.";
		case 503:
			return "The registry is not available right now. Try again in a moment.";
		default:
			return body?.message ?? `The registry answered ${status}.`;
	}
}

/** A refused answer → what the page shows. */
export function describeFailure(status: number, body: unknown, retryAfterHeader?: string | null): Failure {
	const errorBody = body && typeof body === "object" ? (body as ApiErrorBody) : undefined;
	const retryAfter = status === 429 ? retryAfterSeconds(retryAfterHeader) : undefined;
	return {
		status,
		message: statusMessage(status, errorBody, retryAfter),
		...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
		fields: status === 400 ? fieldErrors(errorBody?.errors) : {},
		...(status === 400 && errorBody?.errors?.length ? { paths: pathErrors(errorBody.errors) } : {}),
	};
}
