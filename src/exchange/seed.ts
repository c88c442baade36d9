/**
 * Importing a seed file (decisions §9): the whole file is checked first (seed-validation.ts),
 * asking the owning services which referenced records the registry already holds; a refused
 * file throws SeedRefused with every reason and writes nothing, otherwise each section is
 * handed, in dependency order, to the service that owns it, which checks it again and
 * writes it in one atomic batch as an idempotent upsert by `identifier` (accounts: by
 * `username`).
 */
import type { ServiceBroker } from "moleculer";
import { RegistryError } from "../contract/errors";
import type { Seed, SeedReason, SeedSection } from "./seed-file";
import { referencesOutside, validateSeed, type ExistingRecords, type ReferenceTarget } from "./seed-validation";

/** A refused seed: 400 with every reason in `data.reasons` (they survive a trip over NATS). */
export class SeedRefused extends RegistryError {
	constructor(public readonly reasons: SeedReason[]) {
		super(400, "MethodArgumentNotValidException", `Seed refused. Reason count: ${reasons.length}`, { reasons });
	}
}

/** Reads the reasons of a SeedRefused, also one that crossed the broker as a plain error. */
export function reasonsOf(error: unknown): SeedReason[] | null {
	const data = (error as { data?: { reasons?: unknown } } | null)?.data;
	return Array.isArray(data?.reasons) ? (data.reasons as SeedReason[]) : null;
}

// ---------------------------------------------------------------------------------------
// Import: ask the owners what exists, refuse or hand each section to its owner.

function isRunning(broker: ServiceBroker, action: string): boolean {
	return !(broker.findNextActionEndpoint(action) instanceof Error);
}

async function existingRecords(
	broker: ServiceBroker,
	outside: Record<ReferenceTarget, string[]>,
): Promise<ExistingRecords> {
	const existing: ExistingRecords = {};
	const identifiersOf = (records: { identifier: string }[]) => records.map((record) => record.identifier);
	if (outside.serviceProviders.length && isRunning(broker, "accounts.serviceProviders")) {
		existing.serviceProviders = identifiersOf(
			await broker.call("accounts.serviceProviders", { identifiers: outside.serviceProviders }),
		);
	}
	if (outside.accessPointProviders.length && isRunning(broker, "accessPoints.providers")) {
		existing.accessPointProviders = identifiersOf(
			await broker.call("accessPoints.providers", { identifiers: outside.accessPointProviders }),
		);
	}
	if (outside.accessPoints.length && isRunning(broker, "accessPoints.knownIdentifiers")) {
		existing.accessPoints = await broker.call("accessPoints.knownIdentifiers", {
			identifiers: outside.accessPoints,
		});
	}
	const catalogKinds = {
		capabilities: outside.capabilities,
		processes: outside.processes,
		documentTypes: outside.documentTypes,
	};
	if (Object.values(catalogKinds).some((ids) => ids.length) && isRunning(broker, "catalog.knownIdentifiers")) {
		Object.assign(existing, await broker.call("catalog.knownIdentifiers", catalogKinds));
	}
	return existing;
}

/** Which service imports which sections, in dependency order (accounts name access point providers). */
const IMPORTERS: { action: string; sections: SeedSection[] }[] = [
	{ action: "accessPoints.importSeed", sections: ["accessPointProviders", "accessPoints"] },
	{ action: "accounts.importSeed", sections: ["serviceProviders", "accounts"] },
	{ action: "catalog.importSeed", sections: ["capabilities", "processes", "documentTypes"] },
	{ action: "participants.importSeed", sections: ["participants"] },
];

export type SeedResult = Record<string, unknown>;

/** Optional news of an import's progress (the operator CLI's progress bar). */
export interface SeedProgress {
	/** The file is checked and will be imported: how many records it holds. */
	onChecked?(records: number): void;
	/** One owner imported its sections: how many records they held. */
	onImported?(action: string, records: number): void;
}

const SEED_IMPORT_TIMEOUT_MS = 10 * 60 * 1000;

/** Checks the whole file first; throws SeedRefused (nothing written) or imports every section. */
export async function importSeed(
	broker: ServiceBroker,
	json: unknown,
	progress: SeedProgress = {},
): Promise<SeedResult> {
	const reasons = validateSeed(
		json,
		json && typeof json === "object" ? await existingRecords(broker, referencesOutside(json)) : {},
	);
	const seed = (reasons.length ? {} : json) as Seed;
	const importers = IMPORTERS.filter(({ sections }) => sections.some((section) => (seed[section]?.length ?? 0) > 0));
	for (const { action, sections } of importers) {
		if (!isRunning(broker, action))
			reasons.push({ path: sections.join(", "), message: `cannot be imported: ${action} is not running` });
	}
	if (reasons.length) throw new SeedRefused(reasons);
	const recordsOf = (sections: SeedSection[]) =>
		sections.reduce((sum, section) => sum + (seed[section]?.length ?? 0), 0);
	progress.onChecked?.(importers.reduce((sum, { sections }) => sum + recordsOf(sections), 0));
	const result: SeedResult = {};
	for (const { action, sections } of importers) {
		const params = Object.fromEntries(sections.map((section) => [section, seed[section] ?? []]));
		// An import is bulk work (accounts hash every password with scrypt): it gets its own
		// generous timeout rather than REQUEST_TIMEOUT, which is sized for API requests.
		Object.assign(result, await broker.call(action, params, { timeout: SEED_IMPORT_TIMEOUT_MS }));
		progress.onImported?.(action, recordsOf(sections));
	}
	return result;
}
