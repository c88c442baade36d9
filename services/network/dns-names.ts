/**
 * The DNS names the SML publishes for a participant (decisions §14, peppol-reference.md "SML and
 * Directory"): what an access point looks up to find this registry. Pure; shown to people
 * checking the network, never resolved here.
 */
import { createHash } from "node:crypto";
import { base32nopad } from "@scure/base";

export const PARTICIPANT_SCHEME = "iso6523-actorid-upis";

export interface ParticipantDnsNames {
	/** NAPTR (the current scheme): base32 of the SHA-256 of the lower-case value, no padding. */
	naptr: string;
	/** The legacy CNAME: `B-` and the MD5 hex of the lower-case value. */
	cname: string;
}

/** Zone and scheme joined with one dot each, never a trailing one (the zone may be written with it). */
function under(label: string, zone: string): string {
	return `${label}.${PARTICIPANT_SCHEME}.${zone.replace(/^\.+|\.+$/g, "")}`;
}

/** The names of `<icd>:<organizationIdentifier>` in `zone`. */
export function participantDnsNames(value: string, zone: string): ParticipantDnsNames {
	const lower = value.toLowerCase();
	const sha256 = createHash("sha256").update(lower, "utf8").digest();
	const md5 = createHash("md5").update(lower, "utf8").digest("hex");
	return {
		naptr: under(base32nopad.encode(sha256).toLowerCase(), zone),
		cname: under(`B-${md5}`, zone),
	};
}
