/**
 * The actions of the process replacement jobs (src/contract/operations.ts, tag "Jobs"), spread
 * into the participants service's `actions`; the work is services/participants/process-replacement.ts.
 */
import type { ServiceActionsSchema } from "moleculer";
import type { RegistryContext } from "../../src/platform/context";
import { DEFAULT_PAGE_SIZE, type Page, type PageRequest } from "../../src/contract/paging";
import { PROCESS_REPLACEMENT_FORM, type ProcessReplacementForm } from "../../src/contract/schemas";
import type { ProcessReplacementJob, ProcessReplacementResult, ProcessReplacements } from "./process-replacement";

/** What the actions need of the service. */
export interface ProcessReplacementHost {
	processReplacements: ProcessReplacements;
}

const FIRST_PAGE: PageRequest = { page: 0, size: DEFAULT_PAGE_SIZE, sort: [] };

export const PROCESS_REPLACEMENT_ACTIONS: ServiceActionsSchema = {
	/** POST /rest/api/jobs/process-replacements: 202 with the RUNNING job; it goes on in the background on this node. */
	startProcessReplacement: {
		params: { body: PROCESS_REPLACEMENT_FORM },
		handler(
			this: ProcessReplacementHost,
			ctx: RegistryContext<{ body: ProcessReplacementForm }>,
		): Promise<ProcessReplacementJob> {
			return this.processReplacements.start(ctx.meta.user, ctx.params.body);
		},
	},

	findProcessReplacements: {
		params: { pageRequest: { type: "object", optional: true } },
		handler(
			this: ProcessReplacementHost,
			ctx: RegistryContext<{ pageRequest?: PageRequest }>,
		): Promise<Page<ProcessReplacementJob>> {
			return this.processReplacements.find(ctx.meta.user, ctx.params.pageRequest ?? FIRST_PAGE);
		},
	},

	getProcessReplacement: {
		params: { identifier: { type: "string" } },
		handler(
			this: ProcessReplacementHost,
			ctx: RegistryContext<{ identifier: string }>,
		): Promise<ProcessReplacementJob> {
			return this.processReplacements.get(ctx.meta.user, ctx.params.identifier);
		},
	},

	findProcessReplacementResults: {
		params: {
			identifier: { type: "string" },
			pageRequest: { type: "object", optional: true },
			outcome: { type: "string", optional: true },
		},
		handler(
			this: ProcessReplacementHost,
			ctx: RegistryContext<{ identifier: string; pageRequest?: PageRequest; outcome?: string }>,
		): Promise<Page<ProcessReplacementResult>> {
			return this.processReplacements.results(
				ctx.meta.user,
				ctx.params.identifier,
				ctx.params.pageRequest ?? FIRST_PAGE,
				ctx.params.outcome,
			);
		},
	},

	/** Marks INTERRUPTED the RUNNING jobs whose runner stopped sending heartbeats (operators, tests); the periodic check does the same. */
	interruptStaleJobs: {
		visibility: "public",
		async handler(this: ProcessReplacementHost): Promise<{ interrupted: number }> {
			return { interrupted: await this.processReplacements.interruptStale() };
		},
	},
};
