/**
 * What every operator CLI command reads and writes (cli/registry.ts): its streams, the
 * errors that decide the exit code, and how an error is told to an operator (one message per
 * line on stderr, never a stack trace).
 */
import type { Readable, Writable } from "node:stream";
import { reasonsOf } from "../../src/exchange/seed";
import { DEFAULT_MESSAGES } from "../../src/contract/validation";

export interface CliIO {
	stdin: Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
	stdout: Writable;
	stderr: Writable & { isTTY?: boolean };
	/** Broker configuration (TRANSPORTER, NAMESPACE…). The store reads process.env (DATA_DIR, MONGO_URI). */
	env: NodeJS.ProcessEnv;
}

export const PROCESS_IO: CliIO = {
	stdin: process.stdin,
	stdout: process.stdout,
	stderr: process.stderr,
	env: process.env,
};

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A refusal or failure the operator is told about (exit 1 unless said otherwise). */
export class CliFailure extends Error {
	constructor(
		message: string,
		public readonly lines: string[] = [],
		public readonly exitCode: number = EXIT.failed,
	) {
		super(message);
		this.name = "CliFailure";
	}
}

/** A command used wrongly (exit 2). */
export class UsageError extends CliFailure {
	constructor(message: string) {
		super(message, [], EXIT.usage);
		this.name = "UsageError";
	}
}

interface Violation {
	field?: string;
	message?: string;
	defaultMessage?: string;
	code?: string;
	type?: string;
	actual?: unknown;
}

/** The text of a violation from either validator: codes (NotNull, Pattern…) become their messages. */
function violationText(violation: Violation): string {
	const raw = violation.defaultMessage ?? violation.message ?? violation.code ?? violation.type ?? "is not valid";
	const text = DEFAULT_MESSAGES[raw] ?? raw;
	return violation.field ? `${violation.field}: ${text}` : text;
}

/** The operator's view of an error: a headline and detail lines. */
export function describeError(error: unknown): { message: string; lines: string[] } {
	if (error instanceof CliFailure) return { message: error.message, lines: error.lines };
	const reasons = reasonsOf(error);
	if (reasons)
		return {
			message: (error as Error).message,
			lines: reasons.map((reason) => `${reason.path || "(file)"}: ${reason.message}`),
		};
	const data = (error as { data?: unknown } | null)?.data;
	const violations = Array.isArray(data)
		? data
		: Array.isArray((data as { violations?: unknown })?.violations)
			? (data as { violations: unknown[] }).violations
			: null;
	if (violations)
		return {
			message: "refused: the values given are not valid",
			lines: (violations as Violation[]).map(violationText),
		};
	const name = (error as { name?: string } | null)?.name;
	const message = error instanceof Error ? error.message : String(error);
	if (name === "ServiceNotFoundError" || name === "ServiceNotAvailableError")
		return {
			message: `${message}: is the service running (and TRANSPORTER/NAMESPACE those of the cluster)?`,
			lines: [],
		};
	return { message, lines: [] };
}

export function writeLine(stream: Writable, line = ""): void {
	stream.write(`${line}\n`);
}

/** Rows as aligned columns (the first row is the header). */
export function table(rows: string[][]): string {
	const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
	return rows
		.map((row) =>
			row
				.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column])))
				.join("  ")
				.trimEnd(),
		)
		.join("\n");
}
