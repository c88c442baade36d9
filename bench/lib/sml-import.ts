/**
 * The bulk import against the stand-in SML (issue 42's bench): the generated participants imported
 * through `participants.importSeed` into a fresh store, with the `network` service running and
 * SML_URL pointing at the stand-in or unset; the import's time, then (with the SML) how long until
 * the stand-in holds every organization and how many calls of each kind that took.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { importSeed } from "../../src/exchange/seed";
import { networkEnv, type StandInSml, type TestPki } from "../../test/support/stand-in-network";
import { createGenerator, type GeneratedParticipant } from "./generate";
import { BATCH, loaderBroker, readDemoSeed, WRITERS } from "./load";

export interface SmlImportRun {
	importMs: number;
	/** With the SML: from the import's start until the stand-in holds every organization. */
	deliveredMs: number | null;
	calls: Record<string, number>;
}

export async function importWithSml(
	count: number,
	sml: { server: StandInSml; pki: TestPki } | null,
): Promise<SmlImportRun> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-bench-sml-"));
	const saved = { ...process.env };
	Object.assign(
		process.env,
		{ DATA_DIR: dir, SML_SYNC_INTERVAL: "0" },
		sml ? networkEnv(sml.pki, sml.server, null) : {},
	);
	const seed = readDemoSeed();
	const generator = createGenerator(seed);
	const broker = loaderBroker(WRITERS);
	const before = sml ? sml.server.calls.length : 0;
	sml?.server.participants.clear();
	try {
		await broker.start();
		await importSeed(broker, seed);
		const started = performance.now();
		const organizations = new Set<string>();
		for (let from = 0; from < count; from += BATCH) {
			const rows: GeneratedParticipant[] = [];
			for (let index = from; index < Math.min(count, from + BATCH); index++)
				rows.push(generator.participant(index));
			for (const row of rows) organizations.add(`${row.icd}:${row.organizationIdentifier}`.toLowerCase());
			await broker.call("participants.importSeed", { participants: rows });
		}
		const importMs = performance.now() - started;
		let deliveredMs: number | null = null;
		if (sml) {
			while ([...organizations].some((key) => !sml.server.participants.has(key)))
				await new Promise((resolve) => setTimeout(resolve, 100));
			deliveredMs = performance.now() - started;
		}
		const calls: Record<string, number> = {};
		for (const call of sml?.server.calls.slice(before) ?? [])
			calls[call.operation] = (calls[call.operation] ?? 0) + 1;
		return { importMs, deliveredMs, calls };
	} finally {
		await broker.stop();
		for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
		Object.assign(process.env, saved);
		fs.rmSync(dir, { recursive: true, force: true });
	}
}
