/**
 * `npm run lookup:rebuild`: rebuilds the organization lookup's read model from the
 * participants (architecture "Lookup"; docs/internals.md `lookup.rebuild`).
 *
 * Distributed mode (TRANSPORTER set): joins the cluster as a node without services and asks
 * a running lookup node, which drops its cached answers everywhere when done.
 * One-process mode: starts catalog, participants and lookup here on the same DATA_DIR (or
 * MONGO_URI) and rebuilds the stored model. Run it while the registry is stopped: a running
 * one-process registry would keep answers it cached before the rebuild.
 */
import { createRegistryBroker } from "../services";
import { env } from "../src/config/settings";

const REBUILD_TIMEOUT_MS = 30 * 60 * 1000;

async function main(): Promise<void> {
	const distributed = env("TRANSPORTER") !== "";
	const broker = createRegistryBroker({ services: distributed ? [] : ["catalog", "participants", "lookup"] });
	await broker.start();
	try {
		await broker.waitForServices(["lookup", "participants"], 60000);
		const result = await broker.call<{ organizations: number; participants: number }, Record<string, never>>(
			"lookup.rebuild",
			{},
			{ timeout: REBUILD_TIMEOUT_MS },
		);
		// eslint-disable-next-line no-console
		console.log(
			`lookup rebuilt: ${result.organizations} organization(s) from ${result.participants} participant(s)`,
		);
	} finally {
		await broker.stop();
	}
}

main().catch((error) => {
	// eslint-disable-next-line no-console
	console.error("lookup rebuild failed:", error instanceof Error ? error.message : error);
	process.exit(1);
});
