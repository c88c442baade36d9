/**
 * The collections of the process replacement jobs (docs/decisions.md "Bulk jobs"), owned by the
 * participants service next to the participants they change: the jobs, their results (one per
 * participant, in a collection of their own) and the lock that lets one job of the kind run at a time.
 */
import type { Caller } from "../../src/contract/model";
import type { ModelSpec, StoredDoc } from "../../src/store/types";

export type JobState = "RUNNING" | "SUCCEEDED" | "FAILED" | "INTERRUPTED";
export type ReplacementOutcome = "REPLACED" | "WOULD_REPLACE" | "REFUSED" | "UNCHANGED";
export const REPLACEMENT_OUTCOMES: readonly ReplacementOutcome[] = [
	"REPLACED",
	"WOULD_REPLACE",
	"REFUSED",
	"UNCHANGED",
];

/** A process as the job names it (from the catalog when the job started). */
export interface JobProcess {
	identifier: string;
	qualifiedIdentifier?: string;
	title?: string;
}

export interface ReplacementCounts {
	replaced: number;
	wouldReplace: number;
	refused: number;
	unchanged: number;
}

export interface ProcessReplacementJobDoc extends StoredDoc {
	identifier: string;
	version?: number;
	from: JobProcess;
	to: JobProcess;
	dryRun: boolean;
	state: JobState;
	/** Who started it: the actor of every change it makes (the audit trail). */
	actor: Caller;
	/** ISO instants. */
	startedDate: string;
	finishedDate: string | null;
	/** Written every few seconds while it runs; a RUNNING job whose heartbeat is old has lost its runner. */
	heartbeat: string;
	/** The node that runs it (logs, operators). */
	node: string;
	progress: { total: number; done: number };
	counts: ReplacementCounts;
	failure: { message: string } | null;
	/** The last process claim handled (claims of `from`, in identifier order). */
	cursor: string | null;
}

export interface ProcessReplacementResultDoc extends StoredDoc {
	/** `<job>|<participant>`: a batch written again after a retry replaces its results. */
	identifier: string;
	version?: number;
	job: string;
	participant: { identifier: string; qualifiedIdentifier: string; name?: string };
	outcome: ReplacementOutcome;
	reason?: string;
	at: string;
}

/** One document per kind of job, under a fixed identifier: the store's primary key lets one job of the kind run at a time. */
export interface JobLockDoc extends StoredDoc {
	identifier: string;
	version?: number;
	job: string;
	at: string;
}

export const PROCESS_REPLACEMENT_LOCK = "process-replacement";

export const PROCESS_REPLACEMENT_JOBS_MODEL: ModelSpec = {
	collection: "processReplacementJobs",
	fields: { state: { kind: "string" }, startedDate: { kind: "string" }, heartbeat: { kind: "string" } },
	indexes: [
		{ name: "startedDate", fields: ["startedDate"] },
		{ name: "state_heartbeat", fields: ["state", "heartbeat"] },
	],
};

export const PROCESS_REPLACEMENT_RESULTS_MODEL: ModelSpec = {
	collection: "processReplacementResults",
	fields: {
		job: { kind: "string" },
		outcome: { kind: "string" },
		"participant.qualifiedIdentifier": { kind: "string", caseInsensitive: true },
	},
	indexes: [
		{ name: "job_participant", fields: ["job", "participant.qualifiedIdentifier"] },
		{ name: "job_outcome", fields: ["job", "outcome"] },
	],
};

export const JOB_LOCKS_MODEL: ModelSpec = {
	collection: "jobLocks",
	fields: { job: { kind: "string" } },
	indexes: [{ name: "job", fields: ["job"] }],
};

export const PROCESS_REPLACEMENT_MODELS = {
	processReplacementJobs: PROCESS_REPLACEMENT_JOBS_MODEL,
	processReplacementResults: PROCESS_REPLACEMENT_RESULTS_MODEL,
	jobLocks: JOB_LOCKS_MODEL,
};
