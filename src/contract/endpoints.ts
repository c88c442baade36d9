/**
 * Access point endpoints (spec "Access point") with the fields SMP publishing needs
 * (decisions §13, the registry's extension): `certificate`, `activationDate`,
 * `expirationDate`, `description`, `technicalContactUrl`, each optional and answered only
 * when set. The same rule checks the API's request, the seed file and the NDJSON import.
 *
 * A certificate is stored and answered as the base64 of its DER, the form the SMP answers
 * carry; a PEM text is accepted on input, since that is what administrators have at hand.
 */
import { certificateProblem, parseCertificate } from "./certificates";
import { parseInstant } from "./dates";
import { violation, type Violation } from "./errors";
import { DEFAULT_MESSAGES, rules } from "./validation";

export interface TransportProfile {
	title: string;
	value: string;
	certificateTypes: string[];
}

/** An endpoint as stored and answered. */
export interface Endpoint {
	url: string;
	transportProfile: TransportProfile;
	/** Base64 of the X.509 certificate's DER, on one line. */
	certificate?: string;
	/** ISO 8601 date or date-time, as sent (a date is the start of that UTC day). */
	activationDate?: string;
	expirationDate?: string;
	description?: string;
	technicalContactUrl?: string;
}

/** An access point's endpoints for SMP answers (`accessPoints.endpointsOf`): the stored endpoints, certificates as base64 DER. */
export interface AccessPointEndpoints {
	identifier: string;
	title: string;
	/** The access point provider's identifier. */
	provider: string;
	endpoints: Endpoint[];
}

/** An endpoint as a request or a seed file gives it: optional fields may be null or "" (absent). */
export type EndpointInput = Omit<Endpoint, OptionalField> & Partial<Record<OptionalField, string | null>>;

const OPTIONAL_FIELDS = [
	"certificate",
	"activationDate",
	"expirationDate",
	"description",
	"technicalContactUrl",
] as const;
type OptionalField = (typeof OPTIONAL_FIELDS)[number];

/** Longest certificate text taken (a PEM of one certificate is a few KiB). */
export const MAX_CERTIFICATE_LENGTH = 20_000;
/** An endpoint certificate this close to its end is flagged: the console warns, the gauge counts it. */
export const CERTIFICATE_WARNING_DAYS = 30;

const DATE_OR_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i;
const NAME = { type: "string", empty: false, max: 1000, messages: { required: "NotEmpty", stringEmpty: "NotEmpty" } };

/** One endpoint (fastest-validator; unknown fields removed). The seed makes it strict. */
export const ENDPOINT_SCHEMA = {
	type: "object",
	strict: "remove",
	messages: { required: "NotNull", object: "TypeMismatch" },
	props: {
		url: { type: "url", messages: { required: "NotNull", url: "Pattern" } },
		transportProfile: {
			type: "object",
			strict: "remove",
			messages: { required: "NotNull", object: "TypeMismatch" },
			props: {
				title: NAME,
				value: NAME,
				certificateTypes: { type: "array", messages: { required: "NotNull" }, items: NAME },
			},
		},
		certificate: rules.optionalString({ max: MAX_CERTIFICATE_LENGTH, messages: { stringMax: "Size" } }),
		activationDate: rules.optionalString({ pattern: DATE_OR_DATE_TIME, messages: { stringPattern: "Pattern" } }),
		expirationDate: rules.optionalString({ pattern: DATE_OR_DATE_TIME, messages: { stringPattern: "Pattern" } }),
		description: rules.optionalString({ max: 1000, messages: { stringMax: "Size" } }),
		technicalContactUrl: { type: "url", optional: true, nullable: true, messages: { url: "Pattern" } },
	},
};

const given = (value: unknown): value is string => typeof value === "string" && value !== "";

/**
 * What the schema cannot say: a certificate that is not one valid X.509 certificate or has
 * expired, a date that is no real date, an expiration before the activation. `path` is the
 * list's field (`endpoints`, or `accessPoints[2].endpoints` in a seed file). `now: null` takes
 * an expired certificate (a restore from an export must bring back what the registry held).
 */
export function endpointViolations(
	endpoints: EndpointInput[],
	path = "endpoints",
	now: Date | null = new Date(),
): Violation[] {
	const violations: Violation[] = [];
	endpoints.forEach((endpoint, index) => {
		const at = (field: string) => `${path}[${index}].${field}`;
		if (given(endpoint.certificate)) {
			const problem = certificateProblem(endpoint.certificate, now ?? new Date(0));
			if (problem === "invalid")
				violations.push(
					violation(at("certificate"), "Certificate", DEFAULT_MESSAGES.Certificate, endpoint.certificate),
				);
			if (problem === "expired")
				violations.push(
					violation(
						at("certificate"),
						"CertificateExpired",
						DEFAULT_MESSAGES.CertificateExpired,
						endpoint.certificate,
					),
				);
		}
		const instants: Partial<Record<"activationDate" | "expirationDate", Date>> = {};
		for (const field of ["activationDate", "expirationDate"] as const) {
			const value = endpoint[field];
			if (!given(value)) continue;
			const instant = parseInstant(value);
			if (instant) instants[field] = instant;
			else violations.push(violation(at(field), "Pattern", DEFAULT_MESSAGES.Pattern, value));
		}
		if (instants.activationDate && instants.expirationDate && instants.expirationDate < instants.activationDate)
			violations.push(
				violation(
					at("expirationDate"),
					"ExpirationBeforeActivation",
					DEFAULT_MESSAGES.ExpirationBeforeActivation,
					endpoint.expirationDate,
				),
			);
	});
	return violations;
}

/** The endpoint as stored: the certificate as base64 DER, optional fields only when given. Call after the checks. */
export function storedEndpoint(endpoint: EndpointInput): Endpoint {
	const stored: Endpoint = {
		url: endpoint.url,
		transportProfile: {
			title: endpoint.transportProfile.title,
			value: endpoint.transportProfile.value,
			certificateTypes: [...endpoint.transportProfile.certificateTypes],
		},
	};
	for (const field of OPTIONAL_FIELDS) {
		const value = endpoint[field];
		if (!given(value)) continue;
		stored[field] = field === "certificate" ? parseCertificate(value).base64Der : value;
	}
	return stored;
}

/** A copy of a stored endpoint for an answer (fields in the contract's order, then the extensions). */
export function endpointAnswer(endpoint: Endpoint): Endpoint {
	const answer: Endpoint = {
		url: endpoint.url,
		transportProfile: {
			title: endpoint.transportProfile.title,
			value: endpoint.transportProfile.value,
			certificateTypes: [...endpoint.transportProfile.certificateTypes],
		},
	};
	for (const field of OPTIONAL_FIELDS) if (given(endpoint[field])) answer[field] = endpoint[field];
	return answer;
}
