/**
 * `npm run bench:data -- --participants N [--data-dir DIR] [--out FILE]`
 *
 * Generates N participants (bench/lib/generate.ts: Norwegian-style names, valid 0192
 * organization numbers, +47 contacts, processes every participant may hold) and loads them,
 * with the demo seed, into the registry's store at DATA_DIR (default ./data, or --data-dir)
 * through the participants service, then rebuilds the lookup's read model. With --out it
 * writes a seed file (demo seed plus the generated participants, for `npm run seed`)
 * instead of loading. Running it again with the same N changes nothing; a larger N adds
 * the rest of the same sequence.
 */
import path from "node:path";
import { SingleBar, Presets } from "cli-progress";
import { MAX_PARTICIPANTS } from "./lib/generate";
import { loadParticipants, writeSeedFile, type LoadProgress } from "./lib/load";

interface Options {
	participants: number;
	dataDir: string;
	out?: string;
}

function usage(message?: string): never {
	if (message) console.error(message);
	console.error("usage: npm run bench:data -- --participants N [--data-dir DIR] [--out FILE]");
	process.exit(2);
}

function parse(argv: string[]): Options {
	const options: Partial<Options> = { dataDir: process.env.DATA_DIR || "./data" };
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].split("=", 2);
		const value = () => inline ?? argv[++i] ?? usage(`${flag} needs a value`);
		if (flag === "--participants" || flag === "-n") {
			const text = value().replace(/_/g, "");
			const count = Number(text);
			if (!Number.isInteger(count) || count < 0 || count > MAX_PARTICIPANTS)
				usage(`--participants must be an integer 0…${MAX_PARTICIPANTS}`);
			options.participants = count;
		} else if (flag === "--data-dir") options.dataDir = value();
		else if (flag === "--out") options.out = value();
		else if (flag === "--help" || flag === "-h") usage();
		else usage(`unknown option ${flag}`);
	}
	if (options.participants === undefined) usage("--participants is required");
	return options as Options;
}

function progressBar(): LoadProgress & { stop(): void } {
	const bar = new SingleBar(
		{
			format: " {phase} [{bar}] {percentage}% | {value}/{total} | {rate}/s | ETA {eta_formatted}",
			hideCursor: true,
			etaBuffer: 20,
			noTTYOutput: true,
			notTTYSchedule: 5000,
		},
		Presets.shades_classic,
	);
	let started = false;
	let since = performance.now();
	return {
		phase(name) {
			if (started) bar.update({ phase: name });
			else console.log(`- ${name}`);
		},
		tick(done, total) {
			if (!started) {
				bar.start(total, 0, { phase: "participants", rate: 0 });
				started = true;
				since = performance.now();
			}
			bar.update(done, { rate: Math.round(done / Math.max(0.001, (performance.now() - since) / 1000)) });
		},
		stop() {
			if (started) bar.stop();
			started = false;
		},
	};
}

async function main(): Promise<void> {
	const options = parse(process.argv.slice(2));
	const bar = progressBar();
	const started = performance.now();
	if (options.out) {
		await writeSeedFile(options.out, options.participants, bar);
		bar.stop();
		console.log(
			`wrote ${options.participants} generated participants (plus the demo seed) to ${path.resolve(options.out)} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
		);
		return;
	}
	const dataDir = path.resolve(options.dataDir);
	console.log(`loading ${options.participants} generated participants into ${dataDir}`);
	const result = await loadParticipants(dataDir, options.participants, {
		phase(name) {
			if (name === "lookup rebuild") {
				bar.stop();
				console.log("- lookup rebuild");
			} else bar.phase(name);
		},
		tick: bar.tick,
	});
	bar.stop();
	console.log(
		`done in ${((performance.now() - started) / 1000).toFixed(1)} s: ${result.created} created, ${result.unchanged} already there ` +
			`(import ${(result.importMs / 1000).toFixed(1)} s, ${Math.round(result.participants / Math.max(0.001, result.importMs / 1000))}/s; ` +
			`lookup rebuild ${(result.rebuildMs / 1000).toFixed(1)} s, ${result.organizations} organizations)`,
	);
}

main().catch((error) => {
	console.error("bench:data failed:", error instanceof Error ? (error.stack ?? error.message) : error);
	process.exit(1);
});
