/**
 * What the network service keeps per organization (decisions §14): for the SML and for the
 * Directory, whether a delivery is due, how the last one went, and whether it is parked. An
 * organization's document goes once neither holds it and nothing is due.
 */
import type { ModelSpec, StoredDoc } from "../../src/store/types";

export type Target = "sml" | "directory";
export const TARGETS: readonly Target[] = ["sml", "directory"];

/** How one target's delivery of one organization stands. */
export interface Delivery {
	/** The target holds the organization, as far as known; absent: not known (a call settles it). */
	present?: boolean;
	/** Failed attempts since the last success. */
	attempts: number;
	/** When the current run of failures began. */
	failingSince: string | null;
	/** The last failure's message (the SML's fault message), or what the delivery waits for. */
	message: string | null;
	/** When the delivery last succeeded or failed. */
	at: string | null;
	/** Directory: the digest of the business card it was told of last ("none": told it is gone). */
	card?: string | null;
}

export interface NetworkOrganizationDoc extends StoredDoc {
	/** The organization key `<icd>:<organizationidentifier>` (lower case), also the SML's value. */
	identifier: string;
	/** When a delivery is due (ISO instant); null: nothing to do, or parked. */
	smlDue: string | null;
	directoryDue: string | null;
	/** The last attempt failed (and it is retried, unless parked). */
	smlFailing: boolean;
	directoryFailing: boolean;
	/** Refused for longer than the delivery's patience: waits for `registry sml replay`. */
	smlParked: boolean;
	directoryParked: boolean;
	sml: Delivery;
	directory: Delivery;
}

export const NETWORK_ORGANIZATIONS_MODEL: ModelSpec = {
	collection: "networkOrganizations",
	fields: {
		smlDue: { kind: "string" },
		directoryDue: { kind: "string" },
		smlFailing: { kind: "boolean" },
		directoryFailing: { kind: "boolean" },
		smlParked: { kind: "boolean" },
		directoryParked: { kind: "boolean" },
	},
	indexes: [
		{ name: "smlDue", fields: ["smlDue"] },
		{ name: "directoryDue", fields: ["directoryDue"] },
		{ name: "smlParked", fields: ["smlParked"] },
		{ name: "directoryParked", fields: ["directoryParked"] },
	],
};

export const due = (target: Target) => `${target}Due` as const;
export const failing = (target: Target) => `${target}Failing` as const;
export const parked = (target: Target) => `${target}Parked` as const;

export function newOrganizationDoc(organizationKey: string): NetworkOrganizationDoc {
	const fresh = (): Delivery => ({ attempts: 0, failingSince: null, message: null, at: null });
	return {
		identifier: organizationKey,
		smlDue: null,
		directoryDue: null,
		smlFailing: false,
		directoryFailing: false,
		smlParked: false,
		directoryParked: false,
		sml: fresh(),
		directory: fresh(),
	};
}
