/**
 * Starts the whole registry in this process, as `npm start` does, for HTTP tests: every
 * service and the real gateway on an ephemeral port, an in-memory store, seeded with
 * seed/demo.json unless told otherwise.
 */
import fs from "node:fs";
import path from "node:path";
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../src/broker";

export const DEMO_SEED_FILE = path.join(__dirname, "..", "..", "seed", "demo.json");

export interface RunningRegistry {
	url: string;
	broker: ServiceBroker;
	stop(): Promise<void>;
}

export interface StartOptions {
	/** A seed object, or false for an empty registry. Default: seed/demo.json. */
	seed?: object | false;
	/** Extra environment for this registry (DATA_DIR defaults to ":memory:"). */
	env?: Record<string, string>;
	services?: string[];
}

export function demoSeed(): Record<string, unknown> {
	return JSON.parse(fs.readFileSync(DEMO_SEED_FILE, "utf8"));
}

export async function startRegistry(options: StartOptions = {}): Promise<RunningRegistry> {
	const previous = { ...process.env };
	Object.assign(process.env, { DATA_DIR: ":memory:", PORT: "0", LOG_LEVEL: "warn" }, options.env ?? {});
	const broker = createRegistryBroker({ services: options.services, overrides: { logger: false } });
	await broker.start();
	const seed = options.seed === undefined ? demoSeed() : options.seed;
	if (seed) {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const { importSeed } = require("../../src/seed") as { importSeed: (broker: ServiceBroker, seed: object) => Promise<unknown> };
		await importSeed(broker, seed);
	}
	const api = broker.getLocalService("api") as unknown as { settings: { port: number } } | undefined;
	const url = api ? `http://127.0.0.1:${api.settings.port}` : "";
	return {
		url,
		broker,
		async stop() {
			await broker.stop();
			for (const key of Object.keys(process.env)) if (!(key in previous)) delete process.env[key];
			Object.assign(process.env, previous);
		},
	};
}

/** Basic credentials of the demo accounts (docs/demo-data.md). */
export function basic(username: string, password: string): string {
	return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}
