/**
 * `npm run repl`: Moleculer's REPL (moleculer-repl) on a node that joins the running cluster
 * of TRANSPORTER and NAMESPACE with no services of its own, so an operator can look and
 * ask: `nodes`, `services`, `actions`, `call participants.find …`, `emit …`, `info`.
 * docs/operations.md "Moleculer REPL" shows the commands that matter here.
 *
 * A one-process registry (no TRANSPORTER) cannot be joined; the REPL then refuses (exit 2).
 *
 * `call` names no caller: it reaches internal actions, and the operations table's actions answer
 * 401. `operator <action> [json]` calls as the operator CLI does: the operator (ADMIN), signed
 * with the cluster key of the REPL's environment (src/platform/caller-signature.ts).
 */
import os from "node:os";
import util from "node:util";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../services";
import { env } from "../src/config/settings";
import { asOperator } from "./registry/operator";

/** The REPL's `operator` command (moleculer-repl's custom command shape). */
const OPERATOR_COMMAND = {
	command: "operator <action> [jsonParams]",
	description: "Calls an action as the operator (ADMIN), signed with the cluster key, as the operator CLI does",
	async action(broker: ServiceBroker, args: { action: string; jsonParams?: string }): Promise<void> {
		try {
			const params = args.jsonParams ? JSON.parse(args.jsonParams) : {};
			const answer = await broker.call(args.action, params, asOperator(broker));
			process.stdout.write(`${util.inspect(answer, { depth: 8, colors: true })}\n`);
		} catch (error) {
			process.stdout.write(`>> ERROR: ${(error as Error).message ?? String(error)}\n`);
		}
	},
};

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
			replCommands: [OPERATOR_COMMAND],
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
