/**
 * `registry export` and `registry import`: the whole registry as NDJSON
 * (src/exchange/registry-export.ts), in constant memory however many participants there are.
 *
 * Export asks each owner for its records page by page, by key (`<owner>.exportRecords`),
 * and writes each page as it arrives, waiting for the output to drain.
 *
 * Import reads the file several times and never holds more than a batch of it:
 *   1. check: every line on its own (JSON, type, shape, organization numbers, hashes), and
 *      across lines with a scratch SQLite file (duplicates, references to records of the
 *      file or the registry, a qualified identifier the registry gives another record,
 *      participants that clash with the registry's: a dry run of `participants.importRecords`).
 *      Any problem: every one is listed by line number and nothing is changed.
 *   2. import, owner by owner in dependency order, in batches: access point providers and
 *      access points, service providers, capabilities, processes with document types (one
 *      call: they refer to each other; the catalog is small), accounts, participants. Every
 *      write is an idempotent upsert by identifier (accounts by username), so importing
 *      the same file again changes nothing.
 */
import { once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import type { Writable } from "node:stream";
import Database from "better-sqlite3";
import type { ServiceBroker } from "moleculer";
import type { AccountSummary } from "../../services/accounts/accounts.service";
import type { ImportReason, ImportResult } from "../../services/participants/export-import";
import { organizationKey } from "../../src/contract/identifiers";
import {
	RECORD_OWNERS,
	RECORD_TYPES,
	SEED_SECTION_OF,
	importedParticipantOf,
	lineReasons,
	seedItemOf,
	type ExportPage,
	type ExportPageRequest,
	type RecordType,
} from "../../src/exchange/registry-export";
import { reasonsOf } from "../../src/exchange/seed";
import type { SeedCounts } from "../../src/exchange/upserts";
import { CliFailure, writeLine, type CliIO } from "./io";
import { asOperator } from "./operator";

/** A long page or batch may take a while on a loaded registry. */
const CALL_TIMEOUT_MS = 5 * 60 * 1000;

export interface Progress {
	start(total: number): void;
	increment(by: number): void;
	stop(): void;
}

export const NO_PROGRESS: Progress = { start: () => undefined, increment: () => undefined, stop: () => undefined };

/** Records per page or batch: smaller across NATS, whose messages are at most 1 MB. */
export function batchSize(joined: boolean): number {
	return joined ? 250 : 1000;
}

// ---------------------------------------------------------------------------------------
// Export

export async function exportRegistry(
	broker: ServiceBroker,
	out: Writable,
	progress: Progress,
	pageSize: number,
): Promise<Record<RecordType, number>> {
	const page = (request: ExportPageRequest) =>
		// As the operator: accounts' pages carry password hashes (a signed ADMIN only, src/platform/permissions.ts).
		broker.call<ExportPage, ExportPageRequest>(`${RECORD_OWNERS[request.type]}.exportRecords`, request, {
			...asOperator(broker),
			timeout: CALL_TIMEOUT_MS,
		});
	const totals = await Promise.all(RECORD_TYPES.map(async (type) => (await page({ type, limit: 1 })).total ?? 0));
	progress.start(totals.reduce((sum, total) => sum + total, 0));
	const counts = Object.fromEntries(RECORD_TYPES.map((type) => [type, 0])) as Record<RecordType, number>;
	for (const type of RECORD_TYPES) {
		let after: string | undefined;
		for (;;) {
			const { records, next } = await page({ type, limit: pageSize, ...(after === undefined ? {} : { after }) });
			if (records.length) {
				if (!out.write(records.map((record) => `${JSON.stringify(record)}\n`).join("")))
					await once(out, "drain");
				counts[type] += records.length;
				progress.increment(records.length);
			}
			if (next === null) break;
			after = next;
		}
	}
	progress.stop();
	return counts;
}

// ---------------------------------------------------------------------------------------
// Reading a file, line by line

interface Line {
	line: number;
	text: string;
}

async function* linesOf(file: string): AsyncGenerator<Line> {
	const input = fs.createReadStream(file, { encoding: "utf8" });
	const reader = readline.createInterface({ input, crlfDelay: Infinity });
	let line = 0;
	try {
		for await (const text of reader) {
			line++;
			const trimmed = line === 1 ? text.replace(/^\uFEFF/, "") : text;
			if (trimmed.trim() !== "") yield { line, text: trimmed };
		}
	} finally {
		reader.close();
		input.destroy();
	}
}

interface FileRecord {
	line: number;
	value: Record<string, unknown>;
}

/** The records of these types (the file is known to be valid by then). */
async function* recordsOf(file: string, types: RecordType[]): AsyncGenerator<FileRecord> {
	const needles = types.map((type) => `"${type}"`);
	for await (const { line, text } of linesOf(file)) {
		if (!needles.some((needle) => text.includes(needle))) continue;
		const value = JSON.parse(text) as Record<string, unknown>;
		if (types.includes(value.type as RecordType)) yield { line, value };
	}
}

async function* batchesOf<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
	let batch: T[] = [];
	for await (const item of items) {
		batch.push(item);
		if (batch.length >= size) {
			yield batch;
			batch = [];
		}
	}
	if (batch.length) yield batch;
}

// ---------------------------------------------------------------------------------------
// Check: the scratch database that remembers keys, references and reasons by line

type ReferenceKind =
	"serviceProvider" | "accessPointProvider" | "accessPoint" | "capability" | "process" | "documentType";

const NOUN: Record<ReferenceKind, string> = {
	serviceProvider: "service provider",
	accessPointProvider: "access point provider",
	accessPoint: "access point",
	capability: "capability",
	process: "process",
	documentType: "document type",
};

const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
const lower = (value: unknown): string | undefined => str(value)?.toLowerCase();

function referencesIn(value: unknown, field: string): { field: string; identifier: string }[] {
	if (!Array.isArray(value)) return [];
	return value.flatMap((entry, index) => {
		const identifier = lower((entry as { identifier?: unknown } | null)?.identifier);
		return identifier ? [{ field: `${field}[${index}].identifier`, identifier }] : [];
	});
}

class Check {
	private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-import-"));
	readonly db = new Database(path.join(this.dir, "check.db"));
	readonly counts = Object.fromEntries(RECORD_TYPES.map((type) => [type, 0])) as Record<RecordType, number>;
	private readonly insertKey;
	private readonly firstLine;
	private readonly insertReference;
	private readonly insertReason;

	constructor() {
		this.db.pragma("journal_mode = OFF");
		this.db.pragma("synchronous = OFF");
		this.db.exec(`
			CREATE TABLE keys (kind TEXT NOT NULL, key TEXT NOT NULL, line INTEGER NOT NULL, extra TEXT, PRIMARY KEY (kind, key)) WITHOUT ROWID;
			CREATE TABLE refs (line INTEGER NOT NULL, field TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL);
			CREATE INDEX refs_kind_id ON refs (kind, id);
			CREATE TABLE reasons (line INTEGER NOT NULL, field TEXT NOT NULL, message TEXT NOT NULL);
			CREATE INDEX reasons_line ON reasons (line);
		`);
		this.insertKey = this.db.prepare(
			"INSERT INTO keys (kind, key, line, extra) VALUES (?, ?, ?, ?) ON CONFLICT (kind, key) DO NOTHING",
		);
		this.firstLine = this.db.prepare("SELECT line FROM keys WHERE kind = ? AND key = ?").pluck();
		this.insertReference = this.db.prepare("INSERT INTO refs (line, field, kind, id) VALUES (?, ?, ?, ?)");
		this.insertReason = this.db.prepare("INSERT INTO reasons (line, field, message) VALUES (?, ?, ?)");
	}

	reason(line: number, field: string, message: string): void {
		this.insertReason.run(line, field, message);
	}

	/** Remembers a key; the line that had it first when it is taken. */
	unique(kind: string, key: string | undefined, line: number, extra: string | null = null): number | null {
		if (key === undefined) return null;
		if (this.insertKey.run(kind, key, line, extra).changes > 0) return null;
		return this.firstLine.get(kind, key) as number;
	}

	reference(line: number, field: string, kind: ReferenceKind, identifier: string | undefined): void {
		if (identifier) this.insertReference.run(line, field, kind, identifier);
	}

	hasReasons(line: number): boolean {
		return this.db.prepare("SELECT 1 FROM reasons WHERE line = ? LIMIT 1").get(line) !== undefined;
	}

	reasonCount(): number {
		return this.db.prepare("SELECT count(*) FROM reasons").pluck().get() as number;
	}

	/** Every reason in line order, streamed. */
	reasons(): IterableIterator<{ line: number; field: string; message: string }> {
		return this.db
			.prepare("SELECT line, field, message FROM reasons ORDER BY line, rowid")
			.iterate() as IterableIterator<{ line: number; field: string; message: string }>;
	}

	close(): void {
		this.db.close();
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}

/** Keys and references of one line (its fields may be of any shape: only strings count). */
function remember(check: Check, line: number, type: RecordType, value: Record<string, unknown>): void {
	const duplicate = (
		kind: string,
		key: string | undefined,
		field: string,
		what: string,
		extra: string | null = null,
	) => {
		const first = check.unique(kind, key, line, extra);
		if (first !== null) check.reason(line, field, `duplicate ${what} (also line ${first})`);
	};
	if (type === "account") {
		duplicate("account", str(value.username), "username", "username");
		check.reference(line, "serviceProvider", "serviceProvider", lower(value.serviceProvider));
		check.reference(line, "accessPointProvider", "accessPointProvider", lower(value.accessPointProvider));
		return;
	}
	const identifier = lower(value.identifier);
	duplicate(type, identifier, "identifier", `${type} identifier`);
	if (type === "process" || type === "documentType") {
		duplicate(
			`${type}:qualifiedIdentifier`,
			lower(value.qualifiedIdentifier),
			"qualifiedIdentifier",
			`${type} qualifiedIdentifier`,
			identifier ?? null,
		);
	}
	if (type === "accessPoint") check.reference(line, "provider", "accessPointProvider", lower(value.provider));
	if (type === "serviceProvider") {
		for (const { field, identifier: id } of referencesIn(value.accessPoints, "accessPoints"))
			check.reference(line, field, "accessPoint", id);
	}
	if (type === "process") {
		for (const { field, identifier: id } of referencesIn(value.capabilities, "capabilities"))
			check.reference(line, field, "capability", id);
		for (const { field, identifier: id } of referencesIn(value.documentTypes, "documentTypes"))
			check.reference(line, field, "documentType", id);
		for (const { field, identifier: id } of referencesIn(value.dependencies, "dependencies")) {
			if (id === identifier) check.reason(line, field, "a process cannot depend on itself");
			check.reference(line, field, "process", id);
		}
	}
	if (type === "documentType") {
		for (const { field, identifier: id } of referencesIn(value.processes, "processes"))
			check.reference(line, field, "process", id);
	}
	if (type === "participant") {
		const provider = lower((value.provider as { identifier?: unknown } | null)?.identifier);
		check.reference(line, "provider.identifier", "serviceProvider", provider);
		const icd = str(value.icd);
		const organizationIdentifier = str(value.organizationIdentifier);
		const key = icd && organizationIdentifier ? organizationKey(icd, organizationIdentifier) : undefined;
		if (key && provider)
			duplicate(
				"participant:organization",
				`${provider}|${key}`,
				"",
				"participant of this service provider for this organization",
			);
		for (const { field, identifier: processId } of referencesIn(value.processes, "processes")) {
			check.reference(line, field, "process", processId);
			if (!key) continue;
			const first = check.unique("claim", `${key}|${processId}`, line);
			if (first === line) check.reason(line, field, "the same process is listed twice");
			else if (first !== null)
				check.reason(
					line,
					field,
					`the organization holds this process with another participant too (line ${first})`,
				);
		}
	}
}

/** Which referenced identifiers outside the file the registry has. */
async function knownToRegistry(broker: ServiceBroker, kind: ReferenceKind, identifiers: string[]): Promise<string[]> {
	const ids = (records: { identifier: string }[]) => records.map((record) => record.identifier.toLowerCase());
	if (kind === "serviceProvider") return ids(await broker.call("accounts.serviceProviders", { identifiers }));
	if (kind === "accessPointProvider") return ids(await broker.call("accessPoints.providers", { identifiers }));
	if (kind === "accessPoint")
		return (await broker.call<string[], object>("accessPoints.knownIdentifiers", { identifiers })).map((id) =>
			id.toLowerCase(),
		);
	const section = { capability: "capabilities", process: "processes", documentType: "documentTypes" }[kind];
	const known = await broker.call<Record<string, string[]>, Record<string, string[]>>("catalog.knownIdentifiers", {
		[section]: identifiers,
	});
	return (known[section] ?? []).map((id) => id.toLowerCase());
}

async function checkReferences(broker: ServiceBroker, check: Check): Promise<void> {
	const markKnown = check.db.prepare(
		"INSERT INTO keys (kind, key, line, extra) VALUES (?, ?, 0, NULL) ON CONFLICT (kind, key) DO NOTHING",
	);
	const outside =
		"FROM refs WHERE kind = ? AND NOT EXISTS (SELECT 1 FROM keys WHERE keys.kind = refs.kind AND keys.key = refs.id)";
	for (const kind of Object.keys(NOUN) as ReferenceKind[]) {
		// Identifiers outside the file are the registry's reference data: a short list.
		const asked = check.db.prepare(`SELECT DISTINCT id ${outside}`).pluck().all(kind) as string[];
		for (let start = 0; start < asked.length; start += 1000) {
			const known = await knownToRegistry(broker, kind, asked.slice(start, start + 1000));
			check.db.transaction(() => known.forEach((id) => markKnown.run(kind, id)))();
		}
		const missing = check.db.prepare(`SELECT line, field, id ${outside} ORDER BY line`).all(kind) as {
			line: number;
			field: string;
			id: string;
		}[];
		for (const { line, field, id } of missing)
			check.reason(line, field, `no ${NOUN[kind]} ${id} in the file or the registry`);
	}
}

/** A qualified identifier the registry gives another process or document type (that the file does not redefine). */
async function checkQualifiedIdentifiers(broker: ServiceBroker, check: Check, pageSize: number): Promise<void> {
	for (const type of ["process", "documentType"] as const) {
		if (check.counts[type] === 0) continue;
		const inFile = check.db.prepare("SELECT line, extra FROM keys WHERE kind = ? AND key = ? AND line > 0");
		const redefined = check.db.prepare("SELECT 1 FROM keys WHERE kind = ? AND key = ? AND line > 0");
		let after: string | undefined;
		do {
			const page: ExportPage = await broker.call(
				`catalog.exportRecords`,
				{ type, limit: pageSize, ...(after === undefined ? {} : { after }) },
				{ timeout: CALL_TIMEOUT_MS },
			);
			for (const record of page.records) {
				const qualifiedIdentifier = lower(record.qualifiedIdentifier);
				const identifier = String(record.identifier);
				if (!qualifiedIdentifier) continue;
				const holder = inFile.get(`${type}:qualifiedIdentifier`, qualifiedIdentifier) as
					{ line: number; extra: string | null } | undefined;
				if (holder && holder.extra !== identifier && !redefined.get(type, identifier)) {
					check.reason(
						holder.line,
						"qualifiedIdentifier",
						`the registry's ${type} ${identifier} has this qualified identifier`,
					);
				}
			}
			after = page.next ?? undefined;
		} while (after !== undefined);
	}
}

/** Participants that clash with the registry's: a dry run of each batch (references were checked above). */
async function checkParticipants(broker: ServiceBroker, file: string, check: Check, size: number): Promise<void> {
	if (check.counts.participant === 0) return;
	const checkable = async function* () {
		for await (const record of recordsOf(file, ["participant"])) if (!check.hasReasons(record.line)) yield record;
	};
	for await (const batch of batchesOf(checkable(), size)) {
		const result = await broker.call<ImportResult, object>(
			"participants.importRecords",
			{ participants: batch.map(({ value }) => importedParticipantOf(value)), dryRun: true },
			{ timeout: CALL_TIMEOUT_MS },
		);
		for (const reason of result.reasons ?? ([] as ImportReason[])) {
			if (reason.code !== "Exists") check.reason(batch[reason.index].line, reason.field, reason.message);
		}
	}
}

async function checkFile(broker: ServiceBroker, file: string, check: Check, size: number): Promise<void> {
	let inTransaction = 0;
	check.db.exec("BEGIN");
	for await (const { line, text } of linesOf(file)) {
		let value: unknown;
		try {
			value = JSON.parse(text);
		} catch (error) {
			check.reason(line, "", `not JSON: ${(error as Error).message}`);
			continue;
		}
		const { type, reasons } = lineReasons(value);
		for (const reason of reasons) check.reason(line, reason.field, reason.message);
		if (type) {
			check.counts[type]++;
			remember(check, line, type, value as Record<string, unknown>);
		}
		if (++inTransaction >= 10000) {
			check.db.exec("COMMIT; BEGIN");
			inTransaction = 0;
		}
	}
	check.db.exec("COMMIT");
	await checkReferences(broker, check);
	await checkQualifiedIdentifiers(broker, check, size);
	await checkParticipants(broker, file, check, size);
}

// ---------------------------------------------------------------------------------------
// Import

export type ImportCounts = Partial<Record<RecordType, SeedCounts>>;

const TYPE_OF_SECTION = Object.fromEntries(
	Object.entries(SEED_SECTION_OF).map(([type, section]) => [section, type]),
) as Record<string, RecordType>;

/** A refusal of one batch, told by file line: `accounts[3].serviceProvider` → `line 812: serviceProvider: …`. */
function refusedBatch(error: unknown, lines: Partial<Record<string, number[]>>): CliFailure {
	const reasons = reasonsOf(error);
	const told = (reasons ?? [{ path: "", message: (error as Error).message }]).map(({ path: where, message }) => {
		const match = /^(\w+)\[(\d+)\]\.?(.*)$/.exec(where);
		const line = match ? lines[match[1]]?.[Number(match[2])] : undefined;
		return line === undefined
			? `${where || "(batch)"}: ${message}`
			: `line ${line}: ${match?.[3] ? `${match[3]}: ` : ""}${message}`;
	});
	return new CliFailure(
		"import stopped: a batch was refused (earlier batches are imported; importing the file again is safe)",
		told,
	);
}

interface Phase {
	types: RecordType[];
	action: string;
	/** Records per call; 0: all in one call. */
	batch: number;
	params(records: FileRecord[]): { params: object; lines: Record<string, number[]> };
}

function seedPhase(types: RecordType[], action: string, batch: number, extra: object = {}): Phase {
	return {
		types,
		action,
		batch,
		params(records) {
			const params: Record<string, unknown> = { ...extra };
			const lines: Record<string, number[]> = {};
			for (const type of types) {
				const section = SEED_SECTION_OF[type] as string;
				const ofType = records.filter((record) => record.value.type === type);
				params[section] = ofType.map((record) => seedItemOf(record.value));
				lines[section] = ofType.map((record) => record.line);
			}
			return { params, lines };
		},
	};
}

function phases(size: number): Phase[] {
	return [
		seedPhase(["accessPointProvider"], "accessPoints.importSeed", size),
		// A restore brings back what the registry held, certificates that expired since included (the gauge tells).
		seedPhase(["accessPoint"], "accessPoints.importSeed", size, { expiredCertificates: true }),
		seedPhase(["serviceProvider"], "accounts.importSeed", size),
		seedPhase(["capability"], "catalog.importSeed", size),
		// Processes depend on processes and link document types both ways: one call.
		seedPhase(["process", "documentType"], "catalog.importSeed", 0),
		seedPhase(["account"], "accounts.importSeed", size),
		{
			types: ["participant"],
			action: "participants.importRecords",
			batch: size,
			params: (records) => ({
				params: { participants: records.map((record) => importedParticipantOf(record.value)) },
				lines: { participants: records.map((record) => record.line) },
			}),
		},
	];
}

function addCounts(total: ImportCounts, result: Record<string, unknown>): void {
	for (const [section, counts] of Object.entries(result)) {
		const type = TYPE_OF_SECTION[section] ?? (section === "participants" ? "participant" : undefined);
		if (!type || !counts || typeof counts !== "object") continue;
		const sum = (total[type] ??= { created: 0, updated: 0, unchanged: 0 });
		for (const key of ["created", "updated", "unchanged"] as const) sum[key] += (counts as SeedCounts)[key] ?? 0;
	}
}

/** Accounts the file says are disabled and the registry does not (yet): the seed import never changes the flag. */
async function disableAccounts(broker: ServiceBroker, file: string): Promise<number> {
	const wanted = new Set<string>();
	for await (const { value } of recordsOf(file, ["account"]))
		if (value.disabled === true) wanted.add(value.username as string);
	if (!wanted.size) return 0;
	const accounts = await broker.call<AccountSummary[]>("accounts.listAccounts");
	let disabled = 0;
	for (const account of accounts) {
		if (wanted.has(account.username) && !account.disabled) {
			await broker.call("accounts.disableAccount", { identifier: account.identifier }, asOperator(broker));
			disabled++;
		}
	}
	return disabled;
}

export interface ImportOutcome {
	counts: ImportCounts;
	disabledAccounts: number;
	records: number;
}

/** Checks the whole file, then imports it; a bad file is refused whole (every reason on stderr, by line). */
export async function importRegistry(
	broker: ServiceBroker,
	file: string,
	io: CliIO,
	progress: Progress,
	size: number,
): Promise<ImportOutcome> {
	const check = new Check();
	try {
		await checkFile(broker, file, check, size);
		const problems = check.reasonCount();
		if (problems > 0) {
			for (const { line, field, message } of check.reasons())
				writeLine(io.stderr, `  line ${line}: ${field ? `${field}: ` : ""}${message}`);
			throw new CliFailure(`${file} refused, nothing changed: ${problems} problem(s), listed above by line`);
		}
	} finally {
		check.close();
	}
	const records = Object.values(check.counts).reduce((sum, count) => sum + count, 0);
	const counts: ImportCounts = {};
	progress.start(records);
	for (const phase of phases(size)) {
		if (phase.types.every((type) => check.counts[type] === 0)) continue;
		for await (const batch of batchesOf(recordsOf(file, phase.types), phase.batch || Number.MAX_SAFE_INTEGER)) {
			const { params, lines } = phase.params(batch);
			let result: Record<string, unknown>;
			try {
				result = await broker.call(phase.action, params, { timeout: CALL_TIMEOUT_MS });
			} catch (error) {
				progress.stop();
				throw refusedBatch(error, lines);
			}
			addCounts(counts, result);
			progress.increment(batch.length);
		}
	}
	progress.stop();
	const disabledAccounts = check.counts.account ? await disableAccounts(broker, file) : 0;
	return { counts, disabledAccounts, records };
}
