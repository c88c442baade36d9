/**
 * The participants service's collections (docs/internals.md "Storage"): participants, the
 * process claims that make "one provider per organization and process" a store rule, and
 * the audit outbox. Declared here, next to the service that owns them.
 */
import type { ChangeOutboxDoc } from "../../mixins/outbox.mixin";
import { AUDIT_OUTBOX_MODEL } from "../../src/platform/audit";
import type { ParticipantChange } from "../../src/platform/channels";
import type { Contact } from "../../src/contract/model";
import type { ModelSpec, StoredDoc } from "../../src/store/types";

export interface ParticipantDoc extends StoredDoc {
	identifier: string;
	version?: number;
	icd: string;
	/** As the client sent it (answered as given). */
	organizationIdentifier: string;
	/** Case-folded `icd:organizationIdentifier`: how organizations are compared (decisions §5). */
	organizationKey: string;
	qualifiedIdentifier: string;
	name: string | null;
	contact: Contact;
	/** Process identifiers in the order last submitted (answers keep that order). */
	processIds: string[];
	serviceProvider: string;
	/** ISO instants; answered as UTC calendar dates. */
	registrationDate: string;
	lastModificationDate: string;
	/** `YYYY-MM-DD` or null: the sweeper removes the participant once it has arrived. */
	deleteDate: string | null;
	/**
	 * Made when the participant is created (a time-ordered UUID), kept by its changes: a participant
	 * deleted and created again with the same identifier is a newer incarnation, whose changes the
	 * lookup takes over the old one's (its versions start again at 1).
	 */
	incarnation?: string;
}

/**
 * One claim per organization and process: its identifier is deterministic, so a second
 * participant (another provider) claiming the same pair fails on the primary key inside
 * the same batch as its participant write — the store, not a read, decides the race.
 */
export interface ProcessClaimDoc extends StoredDoc {
	identifier: string;
	version?: number;
	organizationKey: string;
	processId: string;
	participant: string;
}

export const PARTICIPANTS_MODEL: ModelSpec = {
	collection: "participants",
	fields: {
		icd: { kind: "string" },
		organizationIdentifier: { kind: "string", caseInsensitive: true },
		organizationKey: { kind: "string" },
		qualifiedIdentifier: { kind: "string", caseInsensitive: true },
		name: { kind: "string", caseInsensitive: true },
		serviceProvider: { kind: "string" },
		registrationDate: { kind: "string" },
		lastModificationDate: { kind: "string" },
		deleteDate: { kind: "string" },
	},
	indexes: [
		{ name: "serviceProvider_organization", fields: ["serviceProvider", "organizationKey"], unique: true },
		{ name: "organizationKey", fields: ["organizationKey"] },
		{ name: "organizationIdentifier", fields: ["organizationIdentifier"] },
		{ name: "name", fields: ["name"] },
		{ name: "icd", fields: ["icd"] },
		{ name: "qualifiedIdentifier", fields: ["qualifiedIdentifier"] },
		{ name: "registrationDate", fields: ["registrationDate"] },
		{ name: "lastModificationDate", fields: ["lastModificationDate"] },
		{ name: "deleteDate", fields: ["deleteDate"] },
		// Provider-scoped finds sort within one provider's participants.
		{ name: "serviceProvider_name", fields: ["serviceProvider", "name"] },
	],
	textField: "name",
};

export const PROCESS_CLAIMS_MODEL: ModelSpec = {
	collection: "processClaims",
	fields: {
		organizationKey: { kind: "string" },
		processId: { kind: "string" },
		participant: { kind: "string" },
	},
	indexes: [
		{ name: "organization_process", fields: ["organizationKey", "processId"], unique: true },
		{ name: "processId", fields: ["processId"] },
		{ name: "participant", fields: ["participant"] },
	],
};

/**
 * A committed change not yet delivered (applied to a lookup, published on the durable channel,
 * told as a notice). Written in the change's own batch and removed once delivered, so a change
 * that NATS or a crash kept from going out is delivered later by the relay, never lost.
 */
export type ParticipantChangeOutboxDoc = ChangeOutboxDoc<ParticipantChange>;

export const CHANGE_OUTBOX_MODEL: ModelSpec = {
	collection: "participantChangeOutbox",
	fields: { at: { kind: "string" } },
	indexes: [{ name: "at", fields: ["at"] }],
};

/**
 * An organization whose network state (SML, Directory) needs delivering after a change (decisions
 * §14): written in the change's own batch and removed once `network.enqueue` took it. An outbox
 * of its own: the change outbox empties as soon as the lookup has a change, which cannot wait for an SML.
 */
export interface NetworkOutboxDoc extends StoredDoc {
	at: string;
	organizationKey: string;
}

export const NETWORK_OUTBOX_MODEL: ModelSpec = {
	collection: "participantNetworkOutbox",
	fields: { at: { kind: "string" } },
	indexes: [{ name: "at", fields: ["at"] }],
};

export type TransferState = "PENDING" | "COMPLETED" | "CANCELLED" | "EXPIRED";

/**
 * A consented transfer of a participant to another provider (docs/decisions.md "Transfers").
 * The key is kept only as its SHA-256 (`keyHash`). `openFor` is the participant's identifier
 * while the transfer is PENDING and the transfer's own identifier after, under a unique index:
 * the store, not a read, refuses a second open transfer of one participant.
 */
export interface TransferDoc extends StoredDoc {
	identifier: string;
	version?: number;
	participant: string;
	qualifiedIdentifier: string;
	participantName: string | null;
	from: string;
	to: string;
	/** [from, to]: one filter finds a provider's transfers on either side. */
	parties: string[];
	state: TransferState;
	keyHash: string;
	openFor: string;
	/** ISO instants. */
	createdAt: string;
	expiresAt: string;
	/** `YYYY-MM-DD` or null: no completion before this UTC day. */
	effectiveDate: string | null;
	completedAt: string | null;
	cancelledAt: string | null;
	expiredAt: string | null;
}

export const TRANSFERS_MODEL: ModelSpec = {
	collection: "transfers",
	fields: {
		participant: { kind: "string" },
		from: { kind: "string" },
		to: { kind: "string" },
		parties: { kind: "stringArray" },
		state: { kind: "string" },
		openFor: { kind: "string" },
		createdAt: { kind: "string" },
		expiresAt: { kind: "string" },
	},
	indexes: [
		{ name: "openFor", fields: ["openFor"], unique: true },
		{ name: "participant_state", fields: ["participant", "state"] },
		{ name: "from_createdAt", fields: ["from", "createdAt"] },
		{ name: "to_createdAt", fields: ["to", "createdAt"] },
		{ name: "parties", fields: ["parties"] },
		{ name: "state_expiresAt", fields: ["state", "expiresAt"] },
		{ name: "createdAt", fields: ["createdAt"] },
	],
};

export const PARTICIPANT_MODELS = {
	participants: PARTICIPANTS_MODEL,
	processClaims: PROCESS_CLAIMS_MODEL,
	transfers: TRANSFERS_MODEL,
	auditOutbox: AUDIT_OUTBOX_MODEL,
	changeOutbox: CHANGE_OUTBOX_MODEL,
	networkOutbox: NETWORK_OUTBOX_MODEL,
};

export function claimIdentifier(organizationKey: string, processId: string): string {
	return `${organizationKey}|${processId}`;
}

export function claimDoc(participant: ParticipantDoc, processId: string): ProcessClaimDoc {
	return {
		identifier: claimIdentifier(participant.organizationKey, processId),
		organizationKey: participant.organizationKey,
		processId,
		participant: participant.identifier,
	};
}
