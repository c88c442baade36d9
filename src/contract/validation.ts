/**
 * Validation vocabulary: fastest-validator rules that carry the spec's codes
 * (NotNull, NotEmpty, Size, Email, ...), and the translation of a failed check into
 * Violations. Form schemas (src/contract/schemas.ts) are built from these rules; the same
 * schemas feed the actions' `params` and the OpenAPI document.
 *
 * How a code travels: a rule's `messages` map a fastest-validator error type to the
 * code (e.g. `required → "NotEmpty"`), so the failed check's `message` is the code.
 * Types without an override fall back to CODE_BY_TYPE.
 */
import type { Violation } from "./errors";

export const DEFAULT_MESSAGES: Record<string, string> = {
	NotNull: "must not be null",
	NotEmpty: "must not be empty",
	NotBlank: "must not be blank",
	Size: "size must be within the allowed range",
	Pattern: "must match the required pattern",
	Email: "must be a well-formed email address",
	Phone: "must be a valid phone number",
	OrganizationNumber: "must be a valid organization number for this ICD",
	TypeMismatch: "has the wrong type",
	Exists: "must reference an existing record",
	RequiredICD: "the participant's ICD is not allowed for this process",
	Restricted: "the process is restricted (deprecated) and cannot be added",
	Dependency: "a required dependency process is missing",
	Unique: "must not be repeated",
	Future: "must be a date in the future",
	FutureOrPresent: "must be today or a date in the future",
	Range: "must be a whole number within the allowed range",
	OtherProvider: "must be a service provider other than the participant's own",
	TransferKey: "does not match the transfer's key",
	Certificate: "must be one X.509 certificate, as base64 DER or PEM",
	CertificateExpired: "the certificate has expired",
	ExpirationBeforeActivation: "must not be before activationDate",
};

const CODE_BY_TYPE: Record<string, string> = {
	required: "NotNull",
	stringEmpty: "NotEmpty",
	stringMin: "Size",
	stringMax: "Size",
	stringLength: "Size",
	stringPattern: "Pattern",
	stringEnum: "Pattern",
	email: "Email",
	emailEmpty: "NotEmpty",
	emailMin: "Size",
	emailMax: "Size",
	uuid: "Pattern",
	uuidVersion: "Pattern",
	arrayMax: "Size",
	arrayMin: "Size",
	arrayUnique: "Unique",
	arrayEmpty: "NotEmpty",
	objectStrict: "Unknown",
	date: "Pattern",
};

/** fastest-validator types that mean "the JSON value has the wrong type": bindingFailure. */
const TYPE_ERRORS = new Set([
	"string",
	"number",
	"boolean",
	"array",
	"object",
	"date",
	"numberNotNaN",
	"numberInfinite",
]);

/** A check that failed, as fastest-validator (and Moleculer's ValidationError.data) reports it. */
export interface FailedCheck {
	type: string;
	field?: string;
	message?: string;
	actual?: unknown;
	expected?: unknown;
}

function codeOf(check: FailedCheck): string {
	if (check.message && Object.prototype.hasOwnProperty.call(DEFAULT_MESSAGES, check.message)) return check.message;
	if (TYPE_ERRORS.has(check.type)) return "TypeMismatch";
	return CODE_BY_TYPE[check.type] ?? "Invalid";
}

/** Reads `a.b[0].c` from a value, for rejectedValue. */
function valueAt(root: unknown, path: string): unknown {
	let current: unknown = root;
	for (const part of path.split(/\.|\[(\d+)\]/).filter((piece) => piece !== undefined && piece !== "")) {
		if (current === null || typeof current !== "object") return undefined;
		if (!Object.prototype.hasOwnProperty.call(current, part)) return undefined;
		current = (current as Record<string, unknown>)[part];
	}
	return current;
}

/**
 * Failed checks → Violations. `prefix` is stripped from field names (actions validate
 * `{ body: {...} }`; clients see `title`, not `body.title`). `root` is what was validated,
 * for rejectedValue.
 */
export function toViolations(checks: FailedCheck[], root: unknown, prefix = "body."): Violation[] {
	return checks.map((check) => {
		const rawField = check.field ?? "";
		const field = rawField.startsWith(prefix) ? rawField.slice(prefix.length) : rawField;
		const code = codeOf(check);
		const rejected = valueAt(root, rawField);
		return {
			field,
			code,
			defaultMessage: DEFAULT_MESSAGES[code] ?? `failed check '${check.type}'`,
			rejectedValue: rejected === undefined ? null : rejected,
			bindingFailure: code === "TypeMismatch",
		};
	});
}

type Rule = Record<string, unknown>;

/** Rule builders that attach the spec's codes. */
export const rules = {
	/** NotEmpty string: missing, null or "" fail with NotEmpty (spec: document type title). */
	notEmptyString(extra: Rule = {}): Rule {
		return {
			type: "string",
			empty: false,
			...extra,
			messages: { required: "NotEmpty", stringEmpty: "NotEmpty", ...(extra.messages as object) },
		};
	},
	/** NotNull string: missing or null fail with NotNull (spec: process domain). */
	notNullString(extra: Rule = {}): Rule {
		return { type: "string", ...extra, messages: { required: "NotNull", ...(extra.messages as object) } };
	},
	optionalString(extra: Rule = {}): Rule {
		return { type: "string", optional: true, nullable: true, ...extra };
	},
	optionalBoolean(): Rule {
		return { type: "boolean", optional: true, nullable: true };
	},
	/** `[{ identifier: <uuid> }]`, optional. */
	optionalReferences(): Rule {
		return { type: "array", optional: true, nullable: true, items: reference() };
	},
	/** `[{ identifier: <uuid> }]`, must not be null (spec: participant processes). */
	requiredReferences(): Rule {
		return { type: "array", items: reference(), messages: { required: "NotNull" } };
	},
};

function reference(): Rule {
	return {
		type: "object",
		strict: "remove",
		props: { identifier: { type: "uuid", messages: { required: "NotNull", uuid: "Pattern" } } },
	};
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
