/**
 * Consented transfers (docs/decisions.md "Transfers", the registry's extension): the owning
 * provider starts one and is given a single-use key; the receiving provider completes it with
 * that key, which moves the participant exactly as the contract's one-step transfer does, in
 * one store batch with the transfer's own change; the sender may cancel it; an unclaimed one
 * expires. The key is stored only as its SHA-256 and never audited, logged or answered again.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { calendarDate } from "../../src/contract/dates";
import { AccessDenied, Conflict, NotFound, TypeMismatch, ValidationFailed } from "../../src/contract/errors";
import { isUuid, parseParticipantIdentifier } from "../../src/contract/identifiers";
import { seesEverything, type Caller, type ServiceProvider } from "../../src/contract/model";
import { pageOf, type Page, type PageRequest } from "../../src/contract/paging";
import type { StartTransferForm } from "../../src/contract/schemas";
import { DEFAULT_MESSAGES } from "../../src/contract/validation";
import { auditWrite } from "../../src/platform/audit";
import { newRecordIdentifier } from "../../src/platform/record-identifier";
import { DuplicateKey, StaleVersion } from "../../src/store/errors";
import type { Collection, Filter, WriteOp } from "../../src/store/types";
import { planChange } from "./changes";
import { TRANSFERS_MODEL, type ParticipantDoc, type TransferDoc, type TransferState } from "./model";
import { requireServiceProvider } from "./ownership";
import type { Address, Participants } from "./participants";

export const TRANSFER_STATES: TransferState[] = ["PENDING", "COMPLETED", "CANCELLED", "EXPIRED"];
export const DEFAULT_VALID_DAYS = 7;
const DAY_MS = 86_400_000;

/** Crockford's base32: no I, L, O or U, so a key read aloud or typed is not misread. */
const KEY_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** 20 random base32 characters (100 bits) in groups of five: `XXXXX-XXXXX-XXXXX-XXXXX`, 23 characters. */
export function newTransferKey(): string {
	const characters = [...randomBytes(20)].map((byte) => KEY_ALPHABET[byte & 31]).join("");
	return (characters.match(/.{5}/g) as string[]).join("-");
}

/** The key as typed, in its one spelling: case, hyphens and blanks do not matter; O is 0, I and L are 1. */
function canonicalKey(key: string): string {
	return key.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
}

export function transferKeyHash(key: string): string {
	return createHash("sha256").update(canonicalKey(key)).digest("hex");
}

/** Compared in constant time (both sides are 32-byte digests). */
export function transferKeyMatches(key: string, keyHash: string): boolean {
	const stored = Buffer.from(keyHash, "hex");
	const given = Buffer.from(transferKeyHash(key), "hex");
	return stored.length === given.length && timingSafeEqual(stored, given);
}

/** The state a transfer has at `now`: a PENDING one past its expiry is EXPIRED at once, stored or not. */
export function transferStateAt(doc: Pick<TransferDoc, "state" | "expiresAt">, now: Date): TransferState {
	return doc.state === "PENDING" && now.toISOString() > doc.expiresAt ? "EXPIRED" : doc.state;
}

/** When a transfer started at `now` expires: `validDays` after its effective date's start or now, whichever is later. */
export function transferExpiry(now: Date, effectiveDate: string | null, validDays: number): string {
	const start = Math.max(now.getTime(), effectiveDate ? Date.parse(`${effectiveDate}T00:00:00.000Z`) : 0);
	return new Date(start + validDays * DAY_MS).toISOString();
}

export interface Transfer {
	identifier: string;
	participant: { identifier: string; qualifiedIdentifier: string; name?: string };
	from: { identifier: string; name?: string };
	to: { identifier: string; name?: string };
	state: TransferState;
	createdDate: string;
	expiresDate: string;
	effectiveDate?: string;
	completedDate?: string;
	cancelledDate?: string;
	/** Only in the answer of the start. */
	key?: string;
}

export interface TransfersParts {
	transfers: Collection<TransferDoc>;
	participants: Participants;
	/** The one atomic batch of a change that moves no participant (mixins/outbox.mixin.ts `writeAudited`). */
	write(ops: WriteOp[]): Promise<void>;
}

function violation(field: string, code: string, rejectedValue: unknown): ValidationFailed {
	return ValidationFailed.one(field, code, DEFAULT_MESSAGES[code] ?? code, rejectedValue);
}

function isCalendarDate(value: string): boolean {
	return (
		/^\d{4}-\d{2}-\d{2}$/.test(value) &&
		!Number.isNaN(Date.parse(`${value}T00:00:00Z`)) &&
		calendarDate(`${value}T00:00:00Z`) === value
	);
}

/** The transfer as the audit trail keeps it: everything but the key's hash. */
function auditImage(doc: TransferDoc | null): Omit<TransferDoc, "keyHash"> | null {
	if (!doc) return null;
	const { keyHash: _keyHash, ...image } = doc;
	return image;
}

/** The writes of a transfer's change of state: the document at its read version, and its audit record. */
function transferChange(
	caller: Caller | null,
	operation: string,
	before: TransferDoc | null,
	after: TransferDoc,
): WriteOp[] {
	const write: WriteOp = before
		? { kind: "replace", collection: TRANSFERS_MODEL.collection, doc: after, expectedVersion: before.version }
		: { kind: "insert", collection: TRANSFERS_MODEL.collection, doc: after };
	return [
		write,
		auditWrite(caller, {
			operation,
			resource: "transfer",
			resourceId: after.identifier,
			serviceProviders: [after.from, after.to],
			before: auditImage(before),
			after: auditImage({ ...after, version: (before?.version ?? 0) + 1 }),
		}),
	];
}

/** A transfer no longer open: its state and date, and `openFor` released for the participant's next one. */
function closed(doc: TransferDoc, state: Exclude<TransferState, "PENDING">, at: Date): TransferDoc {
	return {
		...doc,
		state,
		openFor: doc.identifier,
		...(state === "COMPLETED" ? { completedAt: at.toISOString() } : {}),
		...(state === "CANCELLED" ? { cancelledAt: at.toISOString() } : {}),
		...(state === "EXPIRED" ? { expiredAt: at.toISOString() } : {}),
	};
}

/** Store errors may arrive without their class (over a transporter): their name says which. */
function isError(error: unknown, type: typeof DuplicateKey | typeof StaleVersion): boolean {
	return error instanceof type || (error as { name?: string })?.name === type.name;
}

export class Transfers {
	constructor(private readonly parts: TransfersParts) {}

	// ---- reads --------------------------------------------------------------------------

	async find(
		caller: Caller | null | undefined,
		page: PageRequest,
		state: string | undefined,
		now: Date,
	): Promise<Page<Transfer>> {
		const filter: Filter = { ...this.scope(caller) };
		if (state !== undefined) {
			if (!TRANSFER_STATES.includes(state as TransferState))
				throw new TypeMismatch(
					`Query parameter 'state' must be one of ${TRANSFER_STATES.join(", ")}; value: '${state}'`,
				);
			// Stored states answer the filter, so overdue ones are stored EXPIRED first (as the sweeper would).
			if (state === "PENDING" || state === "EXPIRED") await this.expireDue(now);
			filter.state = state;
			if (state === "PENDING") filter.expiresAt = { gte: now.toISOString() };
		}
		const sort = page.sort.length > 0 ? page.sort : [{ field: "createdAt", direction: "desc" as const }];
		const [docs, total] = await Promise.all([
			this.parts.transfers.find({ filter, sort, offset: page.page * page.size, limit: page.size }),
			this.parts.transfers.count({ filter }),
		]);
		return pageOf(await this.answers(docs, now), total, page);
	}

	async get(caller: Caller | null | undefined, identifier: string, now: Date): Promise<Transfer> {
		return (await this.answers([await this.visible(caller, identifier)], now))[0];
	}

	// ---- changes ------------------------------------------------------------------------

	async start(caller: Caller | null | undefined, form: StartTransferForm, now: Date): Promise<Transfer> {
		const owner = requireServiceProvider(caller);
		const participant = await this.ownParticipant(caller, form.participant);
		const to = form.serviceProviderIdentifier.toLowerCase();
		if (to === participant.serviceProvider)
			throw violation("serviceProviderIdentifier", "OtherProvider", form.serviceProviderIdentifier);
		if (!(await this.parts.participants.providers.resolve([to])).has(to))
			throw violation("serviceProviderIdentifier", "Exists", form.serviceProviderIdentifier);
		const effectiveDate = form.effectiveDate ?? null;
		if (effectiveDate !== null && !isCalendarDate(effectiveDate))
			throw violation("effectiveDate", "Pattern", effectiveDate);
		if (effectiveDate !== null && effectiveDate < calendarDate(now))
			throw violation("effectiveDate", "FutureOrPresent", effectiveDate);
		const key = newTransferKey();
		const doc: TransferDoc = {
			identifier: newRecordIdentifier(),
			participant: participant.identifier,
			qualifiedIdentifier: participant.qualifiedIdentifier,
			participantName: participant.name,
			from: owner.serviceProvider,
			to,
			parties: [owner.serviceProvider, to],
			state: "PENDING",
			keyHash: transferKeyHash(key),
			openFor: participant.identifier,
			createdAt: now.toISOString(),
			expiresAt: transferExpiry(now, effectiveDate, form.validDays ?? DEFAULT_VALID_DAYS),
			effectiveDate,
			completedAt: null,
			cancelledAt: null,
			expiredAt: null,
		};
		await this.parts.participants.exclusive(participant.identifier, async () => {
			const ops = await this.closeStaleOpen(participant, now);
			try {
				await this.parts.write([...ops, ...transferChange(owner, "startTransfer", null, doc)]);
			} catch (error) {
				if (isError(error, DuplicateKey)) throw this.alreadyOpen(participant);
				throw error;
			}
		});
		return { ...(await this.answers([doc], now))[0], key };
	}

	async complete(caller: Caller | null | undefined, identifier: string, key: string, now: Date): Promise<Transfer> {
		const receiver = requireServiceProvider(caller).serviceProvider;
		const first = await this.visible(caller, identifier);
		return this.parts.participants.exclusive(first.participant, async () => {
			const doc = await this.visible(caller, identifier);
			if (doc.to !== receiver) throw new AccessDenied();
			await this.requireOpen(doc, now);
			if (!transferKeyMatches(key, doc.keyHash)) throw violation("key", "TransferKey", null);
			if (doc.effectiveDate !== null && calendarDate(now) < doc.effectiveDate) {
				throw new Conflict(
					`Transfer ${doc.identifier} takes effect on ${doc.effectiveDate}; it cannot be completed before that date`,
				);
			}
			const participant = await this.parts.participants.collection.get(doc.participant);
			if (!participant || participant.serviceProvider !== doc.from) {
				await this.parts.write(transferChange(null, "cancelTransfer", doc, closed(doc, "CANCELLED", now)));
				throw new Conflict(
					`Participant ${doc.qualifiedIdentifier} no longer belongs to the sender (transferred or deleted meanwhile); transfer ${doc.identifier} is cancelled`,
				);
			}
			const done = closed(doc, "COMPLETED", now);
			const planned = planChange(
				caller ?? null,
				"completeTransfer",
				participant,
				await this.parts.participants.movedTo(participant, doc.to),
			);
			await this.parts.participants.commit(
				[planned],
				transferChange(caller ?? null, "completeTransfer", doc, done),
			);
			return (await this.answers([done], now))[0];
		});
	}

	async cancel(caller: Caller | null | undefined, identifier: string, now: Date): Promise<Transfer> {
		const sender = requireServiceProvider(caller).serviceProvider;
		const first = await this.visible(caller, identifier);
		return this.parts.participants.exclusive(first.participant, async () => {
			const doc = await this.visible(caller, identifier);
			if (doc.from !== sender) throw new AccessDenied();
			await this.requireOpen(doc, now);
			const cancelled = closed(doc, "CANCELLED", now);
			await this.parts.write(transferChange(caller ?? null, "cancelTransfer", doc, cancelled));
			return (await this.answers([cancelled], now))[0];
		});
	}

	/** Stores EXPIRED (audited, no actor) for every PENDING transfer past its expiry; the count. */
	async expireDue(now: Date): Promise<number> {
		let expired = 0;
		for (let round = 0; round < 1000; round++) {
			const due = await this.parts.transfers.find({
				filter: { state: "PENDING", expiresAt: { lt: now.toISOString() } },
				limit: 100,
			});
			if (due.length === 0) break;
			for (const doc of due) if (await this.expire(doc, now)) expired++;
		}
		return expired;
	}

	// ---- rules --------------------------------------------------------------------------

	/** Which transfers a caller may see: a service provider those it sends or receives; ADMIN and NETWORK_AUTHORITY all. */
	private scope(caller: Caller | null | undefined): Filter {
		if (seesEverything(caller)) return {};
		return { parties: requireServiceProvider(caller).serviceProvider };
	}

	/** The transfer, if the caller may see it; another provider's answers 404, exactly as an unknown one. */
	private async visible(caller: Caller | null | undefined, identifier: string): Promise<TransferDoc> {
		const scope = this.scope(caller);
		const doc = await this.parts.transfers.get(identifier.toLowerCase());
		if (!doc || (scope.parties !== undefined && !doc.parties.includes(scope.parties as string)))
			throw NotFound.instance("Transfer", identifier);
		return doc;
	}

	/** 409 unless the transfer is PENDING now; one found past its expiry is stored EXPIRED first. */
	private async requireOpen(doc: TransferDoc, now: Date): Promise<void> {
		const state = transferStateAt(doc, now);
		if (state === "PENDING") return;
		if (doc.state === "PENDING") await this.expire(doc, now);
		throw new Conflict(
			`Transfer ${doc.identifier} is ${state.toLowerCase()}; only a pending transfer can be completed or cancelled`,
		);
	}

	private async expire(doc: TransferDoc, now: Date): Promise<boolean> {
		try {
			await this.parts.write(transferChange(null, "expireTransfer", doc, closed(doc, "EXPIRED", now)));
			return true;
		} catch (error) {
			if (isError(error, StaleVersion)) return false; // changed meanwhile: its new state stands
			throw error;
		}
	}

	/**
	 * The participant's open transfer that no longer holds (expired, or the participant is no
	 * longer the sender's): closed in the start's batch. One that holds: 409.
	 */
	private async closeStaleOpen(participant: ParticipantDoc, now: Date): Promise<WriteOp[]> {
		const open = await this.parts.transfers.findOne({ openFor: participant.identifier });
		if (!open) return [];
		if (transferStateAt(open, now) === "EXPIRED")
			return transferChange(null, "expireTransfer", open, closed(open, "EXPIRED", now));
		if (open.from !== participant.serviceProvider)
			return transferChange(null, "cancelTransfer", open, closed(open, "CANCELLED", now));
		throw this.alreadyOpen(participant);
	}

	private alreadyOpen(participant: ParticipantDoc): Conflict {
		return new Conflict(`Participant ${participant.qualifiedIdentifier} already has a pending transfer`);
	}

	/** The body's participant (qualified identifier or UUID), which must be the caller's: else a violation on `participant`. */
	private async ownParticipant(caller: Caller | null | undefined, value: string): Promise<ParticipantDoc> {
		const text = value.trim();
		const address: Address | null = isUuid(text)
			? { identifier: text.toLowerCase() }
			: parseParticipantIdentifier(text)
				? { qualifiedIdentifier: text }
				: null;
		if (!address) throw violation("participant", "Pattern", value);
		try {
			return await this.parts.participants.addressed(caller, address, "write");
		} catch (error) {
			if (error instanceof NotFound || (error as { code?: number })?.code === 404)
				throw violation("participant", "Exists", value);
			throw error;
		}
	}

	private async answers(docs: TransferDoc[], now: Date): Promise<Transfer[]> {
		const providers = await this.parts.participants.providers.resolve(docs.flatMap((doc) => [doc.from, doc.to]));
		const party = (identifier: string) => {
			const provider: ServiceProvider | undefined = providers.get(identifier);
			return { identifier, ...(provider ? { name: provider.title } : {}) };
		};
		return docs.map((doc) => ({
			identifier: doc.identifier,
			participant: {
				identifier: doc.participant,
				qualifiedIdentifier: doc.qualifiedIdentifier,
				...(doc.participantName ? { name: doc.participantName } : {}),
			},
			from: party(doc.from),
			to: party(doc.to),
			state: transferStateAt(doc, now),
			createdDate: doc.createdAt,
			expiresDate: doc.expiresAt,
			...(doc.effectiveDate ? { effectiveDate: doc.effectiveDate } : {}),
			...(doc.completedAt ? { completedDate: doc.completedAt } : {}),
			...(doc.cancelledAt ? { cancelledDate: doc.cancelledAt } : {}),
		}));
	}
}
