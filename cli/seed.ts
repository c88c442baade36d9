/**
 * `npm run seed -- <file.json>`: imports a seed file (decisions §1, §9): offline, into the
 * configured store (DATA_DIR or MONGO_URI), or, when TRANSPORTER is set, through the
 * services of that running cluster. It starts the services that own seed sections (those present in this build),
 * imports, prints what changed and exits 0; a refused file prints every reason and exits 1
 * having changed nothing; a usage or start-up problem exits 2.
 */
import fs from "node:fs";
import { createRegistryBroker } from "../services";
import { importSeed, reasonsOf } from "../src/exchange/seed";
import { parseSeed } from "../src/exchange/seed-file";
import type { SeedCounts } from "../src/exchange/upserts";

/** The services that own seed sections, in the order they import. */
const OWNERS = ["accessPoints", "accounts", "catalog", "participants"];

export interface CliOutput {
	out(line: string): void;
	error(line: string): void;
}

const CONSOLE: CliOutput = {
	out: (line) => process.stdout.write(`${line}\n`),
	error: (line) => process.stderr.write(`${line}\n`),
};

function describeCounts(section: string, counts: unknown): string {
	const { created, updated, unchanged } = (counts ?? {}) as Partial<SeedCounts>;
	if ([created, updated, unchanged].every((value) => typeof value === "number")) {
		return `  ${section}: ${created} created, ${updated} updated, ${unchanged} unchanged`;
	}
	return `  ${section}: ${JSON.stringify(counts)}`;
}

/** The whole command; answers the exit code (kept apart from process.exit for tests). */
export async function runSeed(
	args: string[],
	output: CliOutput = CONSOLE,
	env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
	const [file, ...rest] = args;
	if (!file || rest.length > 0 || file.startsWith("-")) {
		output.error("usage: npm run seed -- <seed-file.json>");
		return 2;
	}
	let text: string;
	try {
		text = fs.readFileSync(file, "utf8");
	} catch (error) {
		output.error(`cannot read ${file}: ${(error as Error).message}`);
		return 2;
	}
	const parsed = parseSeed(text);
	if (parsed.reasons.length) return refused(file, parsed.reasons, output);

	// With TRANSPORTER set the command joins that cluster and imports through its running
	// services (so their caches and the lookup hear of every change); without, it starts the
	// owning services itself on the configured store, the lookup included so that its read
	// model follows the imported participants, and audit so that the trail has the import.
	const joinCluster = Boolean(env.TRANSPORTER);
	const broker = createRegistryBroker({
		env,
		services: joinCluster ? [] : [...OWNERS, "lookup", "audit"],
		overrides: { nodeID: `seed-${process.pid}`, logger: { type: "Console", options: { level: "warn" } } },
	});
	try {
		await broker.start();
		if (joinCluster) await broker.waitForServices(OWNERS, 60000);
		const result = await importSeed(broker, parsed.seed);
		output.out(`${file} imported:`);
		for (const [section, counts] of Object.entries(result)) output.out(describeCounts(section, counts));
		// Deliver the audit records now; what cannot go stays in the outboxes for the next start.
		for (const service of broker.services)
			await (service as { relayAuditNow?: () => Promise<number> }).relayAuditNow?.().catch(() => 0);
		return 0;
	} catch (error) {
		const reasons = reasonsOf(error);
		if (reasons) return refused(file, reasons, output);
		output.error(`seed failed: ${(error as Error).message}`);
		return 2;
	} finally {
		await broker.stop();
	}
}

function refused(file: string, reasons: { path: string; message: string }[], output: CliOutput): number {
	output.error(`${file} refused, nothing changed (${reasons.length} reason(s)):`);
	for (const reason of reasons) output.error(`  ${reason.path || "(file)"}: ${reason.message}`);
	return 1;
}

if (require.main === module) {
	runSeed(process.argv.slice(2)).then(
		(code) => process.exit(code),
		(error) => {
			process.stderr.write(`${(error as Error).stack ?? error}\n`);
			process.exit(2);
		},
	);
}
