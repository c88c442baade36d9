/**
 * What a process loads at start (decisions §1 "bootstrap"; issue 17): REGISTRY_SEED, or with
 * `npm start` (--demo-when-empty) the demo data when the registry holds nothing yet. Loaded
 * once for the registry however many processes start together: the catalog keeps one claim
 * (services/catalog/bootstrap.ts). The first process takes it and loads; the others wait
 * until it is done, then skip the demo data or import their seed again (an idempotent upsert).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import type { ServiceBroker } from "moleculer";
import { parseSeed } from "./seed-file";
import { importSeed, reasonsOf, type SeedResult } from "./seed";

export interface BootstrapOptions {
	/** REGISTRY_SEED, when set. */
	seedFile?: string;
	/** `npm start`: the demo data when the registry is empty and no seed is given. */
	demoFile?: string;
}

interface Claim {
	source: "demo" | "seed";
	file?: string;
	node: string;
	state: "loading" | "done";
	loaded?: "demo" | "seed" | "nothing";
	at: string;
}

const OWNERS = ["accounts", "accessPoints", "catalog", "participants"];
const POLL_MS = 500;

function describe(claim: Claim): string {
	const what =
		claim.loaded === "demo"
			? "the demo data"
			: claim.loaded === "seed"
				? `the seed ${claim.file ?? ""}`.trim()
				: "nothing (it was not empty)";
	return `${what}, loaded by ${claim.node} at ${claim.at}`;
}

async function isEmpty(broker: ServiceBroker): Promise<boolean> {
	const [providers, processes] = await Promise.all([
		broker.call<unknown[]>("accounts.listServiceProviders"),
		broker.call<unknown[]>("catalog.allProcesses"),
	]);
	return providers.length === 0 && processes.length === 0;
}

function readSeed(file: string): { seed: unknown; digest: string } {
	if (!fs.existsSync(file)) throw new Error(`REGISTRY_SEED file not found: ${file}`);
	const text = fs.readFileSync(file, "utf8");
	const parsed = parseSeed(text);
	if (parsed.reasons.length)
		throw new Error(
			`REGISTRY_SEED ${file} refused:\n${parsed.reasons.map((reason) => `  ${JSON.stringify(reason)}`).join("\n")}`,
		);
	return { seed: parsed.seed, digest: createHash("sha256").update(text).digest("hex") };
}

/** A seed the registry refused, explained in terms of what the registry was initialized with. */
function refusal(file: string, error: unknown, claim: Claim | null): Error {
	const reasons = reasonsOf(error);
	const listed = reasons
		? reasons.map((reason) => `  ${reason.path}: ${reason.message}`).join("\n")
		: `  ${String((error as Error)?.message ?? error)}`;
	if (claim?.loaded !== "demo") return new Error(`REGISTRY_SEED ${file} refused, nothing changed:\n${listed}`);
	return new Error(
		`REGISTRY_SEED ${file} refused, nothing changed: this registry already holds ${describe(claim)} (npm start on an empty registry), and the seed clashes with it:\n${listed}\n` +
			"To start a registry from your seed, start it with an empty store and REGISTRY_SEED set on every process (or on the first one, before the others), " +
			"or load the seed into an empty store offline with `npm run seed -- <file>` before starting.",
	);
}

/** Loads the seed or the demo data once for the registry; resolves with what this process imported (null: nothing). */
export async function bootstrapRegistry(broker: ServiceBroker, options: BootstrapOptions): Promise<SeedResult | null> {
	const file = options.seedFile ?? options.demoFile;
	if (!file) return null;
	const source = options.seedFile ? "seed" : "demo";
	const { seed, digest } = readSeed(file);
	await broker.waitForServices(OWNERS, 120000);
	const request = { source, file, digest, node: broker.nodeID };
	let waitingLogged = false;
	for (;;) {
		const { granted, claim } = await broker.call<{ granted: boolean; claim: Claim }, typeof request>(
			"catalog.claimBootstrap",
			request,
		);
		if (granted) return load(broker, source, file, seed);
		if (claim.state === "loading") {
			if (!waitingLogged)
				broker.logger.info(
					`${claim.node} is loading ${claim.source === "demo" ? "the demo data" : `the seed ${claim.file}`}; waiting for it`,
				);
			waitingLogged = true;
			await new Promise((resolve) => setTimeout(resolve, POLL_MS));
			continue;
		}
		if (source === "demo") {
			broker.logger.info(`the registry was initialized already (${describe(claim)}): no demo data loaded`);
			return null;
		}
		try {
			return await importSeed(broker, seed);
		} catch (error) {
			throw refusal(file, error, claim);
		}
	}
}

async function load(
	broker: ServiceBroker,
	source: "demo" | "seed",
	file: string,
	seed: unknown,
): Promise<SeedResult | null> {
	let loaded: Claim["loaded"] = "nothing";
	try {
		if (source === "demo" && !(await isEmpty(broker))) return null;
		if (source === "demo")
			broker.logger.info(
				`empty registry: loading the demo data of ${file} (set REGISTRY_SEED, or run \`npm run seed -- <file>\`, to load your own)`,
			);
		let result: SeedResult;
		try {
			result = await importSeed(broker, seed);
		} catch (error) {
			throw refusal(file, error, null);
		}
		loaded = source;
		return result;
	} finally {
		// Also after a failure: the processes waiting for this one go on.
		await broker
			.call("catalog.finishBootstrap", { node: broker.nodeID, loaded })
			.catch((error) => broker.logger.warn("could not record the registry's initialization:", String(error)));
	}
}
