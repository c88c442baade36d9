/**
 * `npm run repl`: Moleculer's REPL (moleculer-repl) on a node that joins the running cluster
 * of TRANSPORTER and NAMESPACE with no services of its own, so an operator can look and
 * ask: `nodes`, `services`, `actions`, `call participants.find …`, `emit …`, `info`.
 * docs/operations.md "Moleculer REPL" shows the commands that matter here.
 *
 * A one-process registry (no TRANSPORTER) cannot be joined; the REPL then refuses (exit 2).
 */
import os from "node:os";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../services";
import { env } from "../src/config/settings";

export function replBroker(source: NodeJS.ProcessEnv = process.env): ServiceBroker {
	return createRegistryBroker({
		env: source,
		services: [],
		overrides: {
			nodeID: `repl-${os.hostname()}-${process.pid}`,
			logger: {
				type: "Console",
				options: { level: source.LOG_LEVEL || "warn", formatter: "short", colors: false, moduleColors: false },
			},
			replDelimiter: "registry $",
		},
	});
}

async function main(): Promise<void> {
	if (env("TRANSPORTER") === "") {
		process.stderr.write(
			"npm run repl joins a running cluster: set TRANSPORTER (e.g. nats://127.0.0.1:4222) and the cluster's NAMESPACE.\n" +
				"A one-process registry cannot be joined; use the operator CLI (npm run registry -- --help) on its store.\n",
		);
		process.exit(2);
	}
	const broker = replBroker();
	await broker.start();
	process.stderr.write(
		`joined the cluster as ${broker.nodeID} (namespace ${broker.namespace || "(none)"}); type help, or quit to leave\n`,
	);
	broker.repl();
}

if (require.main === module) {
	main().catch((error) => {
		process.stderr.write(`repl: ${(error as Error).message ?? error}\n`);
		process.exit(1);
	});
}
