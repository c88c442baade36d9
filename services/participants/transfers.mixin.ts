/**
 * The participants service's transfer actions (src/contract/operations.ts, tag "Transfers"; the
 * rules are in services/participants/transfers.ts) and the sweeper that stores EXPIRED for
 * transfers nobody claimed. The service calls `startTransfers()` once its participants are ready.
 */
import type { Context, Service, ServiceSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { DEFAULT_PAGE_SIZE, type Page, type PageRequest } from "../../src/contract/paging";
import { COMPLETE_TRANSFER_FORM, START_TRANSFER_FORM, type StartTransferForm } from "../../src/contract/schemas";
import { PeriodicTask } from "../../src/platform/periodic-task";
import type { Collection, WriteOp } from "../../src/store/types";
import type { TransferDoc } from "./model";
import type { Participants } from "./participants";
import { Transfers, type Transfer } from "./transfers";

export interface TransfersThis extends Service<{ sweepIntervalMs: number }> {
	collections: { transfers: Collection<TransferDoc> };
	participants: Participants;
	transfers: Transfers;
	transferSweeper: PeriodicTask;
	writeAudited(ops: WriteOp[]): Promise<void>;
	startTransfers(): void;
	expireTransfers(now: Date): Promise<number>;
}

const IDENTIFIER = { identifier: { type: "string" } };

const TRANSFERS_MIXIN: Partial<ServiceSchema<{ sweepIntervalMs: number }, TransfersThis>> = {
	actions: {
		startTransfer: {
			params: { body: START_TRANSFER_FORM },
			handler(this: TransfersThis, ctx: RegistryContext<{ body: StartTransferForm }>): Promise<Transfer> {
				return this.transfers.start(ctx.meta.user, ctx.params.body, new Date());
			},
		},

		findTransfers: {
			params: {
				pageRequest: { type: "object", optional: true },
				state: { type: "string", optional: true, max: 100 },
			},
			handler(
				this: TransfersThis,
				ctx: RegistryContext<{ pageRequest?: PageRequest; state?: string }>,
			): Promise<Page<Transfer>> {
				const page = ctx.params.pageRequest ?? { page: 0, size: DEFAULT_PAGE_SIZE, sort: [] };
				return this.transfers.find(ctx.meta.user, page, ctx.params.state, new Date());
			},
		},

		getTransfer: {
			params: IDENTIFIER,
			handler(this: TransfersThis, ctx: RegistryContext<{ identifier: string }>): Promise<Transfer> {
				return this.transfers.get(ctx.meta.user, ctx.params.identifier, new Date());
			},
		},

		completeTransfer: {
			params: { ...IDENTIFIER, body: COMPLETE_TRANSFER_FORM },
			handler(
				this: TransfersThis,
				ctx: RegistryContext<{ identifier: string; body: { key: string } }>,
			): Promise<Transfer> {
				return this.transfers.complete(ctx.meta.user, ctx.params.identifier, ctx.params.body.key, new Date());
			},
		},

		cancelTransfer: {
			params: IDENTIFIER,
			handler(this: TransfersThis, ctx: RegistryContext<{ identifier: string }>): Promise<Transfer> {
				return this.transfers.cancel(ctx.meta.user, ctx.params.identifier, new Date());
			},
		},

		/** Runs the transfer sweeper now (operators, tests); `now` (an ISO instant) defaults to the current time. */
		expireTransfers: {
			params: { now: { type: "string", optional: true, max: 40 } },
			async handler(this: TransfersThis, ctx: Context<{ now?: string }>): Promise<{ expired: number }> {
				const now = ctx.params.now === undefined ? new Date() : new Date(ctx.params.now);
				if (Number.isNaN(now.getTime())) throw new Error(`not an instant: ${ctx.params.now}`);
				return { expired: await this.expireTransfers(now) };
			},
		},
	},

	methods: {
		startTransfers(this: TransfersThis) {
			this.transfers = new Transfers({
				transfers: this.collections.transfers,
				participants: this.participants,
				write: (ops) => this.writeAudited(ops),
			});
			this.transferSweeper.start(this.settings.sweepIntervalMs);
		},

		async expireTransfers(this: TransfersThis, now: Date): Promise<number> {
			const expired = await this.transfers.expireDue(now);
			if (expired > 0) this.logger.info(`transfer sweeper stored ${expired} transfer(s) as EXPIRED`);
			return expired;
		},
	},

	created(this: TransfersThis) {
		this.transferSweeper = new PeriodicTask(
			() => this.expireTransfers(new Date()),
			(error) => this.logger.error("transfer sweeper failed:", String(error)),
		);
	},

	async stopped(this: TransfersThis) {
		await this.transferSweeper.stop();
	},
};

/** As a mixin of any service whose `this` is a TransfersThis (the participants service). */
export const TransfersMixin = TRANSFERS_MIXIN as unknown as Partial<ServiceSchema>;
