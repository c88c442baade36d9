/**
 * Loads generated participants into a registry's DATA_DIR through the services themselves
 * (no SQL of our own): the demo seed first (reference data, providers, accounts), then
 * `participants.importSeed` in large batches — each batch is one store transaction with
 * the participants' process claims and audit records, checked by the same rules as any
 * seed — and finally `lookup.rebuild`, so the lookup's read model holds exactly what the
 * participants hold. Used by `npm run bench:data` and by `npm run bench`.
 */
import fs from "node:fs";
import path from "node:path";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import { importSeed } from "../../src/exchange/seed";
import { ALL_SERVICES } from "../../src/config/settings";
import { createGenerator, type GeneratedParticipant, type SeedFile } from "./generate";

export const ROOT = path.join(__dirname, "..", "..", "..");
export const DEMO_SEED_FILE = path.join(ROOT, "seed", "demo.json");

export function readDemoSeed(): SeedFile {
	return JSON.parse(fs.readFileSync(DEMO_SEED_FILE, "utf8")) as SeedFile;
}

export interface LoadProgress {
	phase(name: string): void;
	/** Participants written so far (of `total`). */
	tick(done: number, total: number): void;
}

export interface LoadResult {
	participants: number;
	created: number;
	unchanged: number;
	importMs: number;
	rebuildMs: number;
	organizations: number;
}

/** Rows per participants.importSeed call: one transaction each. */
export const BATCH = 2000;

/** Every owner of data: not the gateway, not the lookup (rebuilt after a load). */
export const WRITERS = ALL_SERVICES.filter((name) => name !== "api" && name !== "lookup");

export function loaderBroker(services: string[]): ServiceBroker {
	return createRegistryBroker({
		services,
		// Quiet, and no request timeout: a batch of thousands of rows is one call. A signal ends
		// the process (each batch is one transaction): moleculer's own handler would stop the
		// broker and leave this loop running.
		overrides: {
			logger: { type: "Console", options: { level: "warn" } },
			requestTimeout: 0,
			skipProcessEventRegistration: true,
		},
	});
}

/** Waits until every writing service has forwarded its audit outbox (when the registry has one). */
async function drainAuditOutboxes(writer: ServiceBroker): Promise<void> {
	for (const service of writer.services) {
		const relay = (service as unknown as { relayAuditNow?: () => Promise<number> }).relayAuditNow;
		if (typeof relay !== "function") continue;
		while ((await relay.call(service)) > 0);
	}
}

/**
 * Writes participants 0…count-1 of the generated sequence into `dataDir` (created when
 * missing). Idempotent: a participant already there is counted as unchanged.
 */
export async function loadParticipants(dataDir: string, count: number, progress?: LoadProgress): Promise<LoadResult> {
	fs.mkdirSync(dataDir, { recursive: true });
	// The stores read DATA_DIR from the environment (src/store/index.ts).
	const previous = process.env.DATA_DIR;
	process.env.DATA_DIR = dataDir;
	const seed = readDemoSeed();
	const generator = createGenerator(seed);
	const result: LoadResult = {
		participants: count,
		created: 0,
		unchanged: 0,
		importMs: 0,
		rebuildMs: 0,
		organizations: 0,
	};
	try {
		progress?.phase("demo seed and participants");
		// Every owner of data (not the gateway, not the lookup: it is rebuilt below), so that the
		// audit records of the import reach the audit trail now rather than at the registry's start.
		const writer = loaderBroker(WRITERS);
		await writer.start();
		const started = performance.now();
		try {
			await importSeed(writer, seed);
			for (let from = 0; from < count; from += BATCH) {
				const rows: GeneratedParticipant[] = [];
				for (let index = from; index < Math.min(count, from + BATCH); index++)
					rows.push(generator.participant(index));
				const answer = await writer.call<
					{ participants: { created: number; updated: number; unchanged: number } },
					{ participants: GeneratedParticipant[] }
				>("participants.importSeed", {
					participants: rows,
				});
				result.created += answer.participants.created;
				result.unchanged += answer.participants.unchanged + answer.participants.updated;
				progress?.tick(Math.min(count, from + BATCH), count);
			}
			await drainAuditOutboxes(writer);
		} finally {
			await writer.stop();
		}
		result.importMs = performance.now() - started;

		progress?.phase("lookup rebuild");
		const rebuilder = loaderBroker(["catalog", "participants", "lookup"]);
		await rebuilder.start();
		const rebuildStarted = performance.now();
		try {
			const rebuilt = await rebuilder.call<
				{ organizations: number; participants: number },
				Record<string, never>
			>("lookup.rebuild", {});
			result.organizations = rebuilt.organizations;
		} finally {
			await rebuilder.stop();
		}
		result.rebuildMs = performance.now() - rebuildStarted;
		return result;
	} finally {
		if (previous === undefined) delete process.env.DATA_DIR;
		else process.env.DATA_DIR = previous;
	}
}

/** Writes a seed file (the demo seed plus the generated participants) that `npm run seed` imports. */
export async function writeSeedFile(file: string, count: number, progress?: LoadProgress): Promise<void> {
	const seed = readDemoSeed();
	const generator = createGenerator(seed);
	const { participants: demoParticipants = [], ...rest } = seed;
	fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
	const out = fs.createWriteStream(file);
	const write = (text: string) =>
		out.write(text) ? Promise.resolve() : new Promise<void>((resolve) => out.once("drain", () => resolve()));
	const head = JSON.stringify(rest, null, 2);
	await write(`${head.slice(0, head.lastIndexOf("}")).trimEnd()},\n  "participants": [\n`);
	let first = true;
	for (const row of demoParticipants) {
		await write(`${first ? "" : ",\n"}    ${JSON.stringify(row)}`);
		first = false;
	}
	for (let index = 0; index < count; index++) {
		await write(`${first ? "" : ",\n"}    ${JSON.stringify(generator.participant(index))}`);
		first = false;
		if ((index + 1) % BATCH === 0 || index + 1 === count) progress?.tick(index + 1, count);
	}
	await write("\n  ]\n}\n");
	await new Promise<void>((resolve, reject) =>
		out.end((error?: Error | null) => (error ? reject(error) : resolve())),
	);
}
