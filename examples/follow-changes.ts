/**
 * Example: a follower that mirrors the registry into a file from the change feed
 * (GET /rest/api/changes, docs/client-guide.md "Following changes"), as a publisher (an SMP,
 * a directory) would keep its own copy without reading the whole registry again.
 *
 *   npm run example:follow -- http://localhost:3000 mirror.json
 *   REGISTRY_USERNAME=sp1 REGISTRY_PASSWORD=sp1-demo-password npm run example:follow -- http://localhost:3000 sp1.json
 *
 * The mirror file holds every record the caller may see (by resource and identifier) and the
 * cursor of the last change applied, written together and atomically (a new file renamed over
 * the old): a follower killed at any moment resumes from its file, misses nothing and applies
 * nothing twice. A record is kept only at a higher version than the one held, so a change the
 * feed repeats could never take it back.
 */
import fs from "node:fs";
import path from "node:path";
import { createRegistryClient, type Credentials, type RegistryClient, type Schemas } from "../client";

type Change = Schemas["Change"];

export interface Mirror {
	/** The cursor of the last change applied ("0": none yet). */
	cursor: string;
	/** How many changes this mirror has applied, over all runs. */
	applied: number;
	/** `resource:identifier` → the record at its version. */
	records: Record<string, { version: number; record: unknown }>;
}

export function readMirror(file: string): Mirror {
	if (!fs.existsSync(file)) return { cursor: "0", applied: 0, records: {} };
	return JSON.parse(fs.readFileSync(file, "utf8")) as Mirror;
}

/** The mirror and its cursor in one write that either happens whole or not at all. */
export function writeMirror(file: string, mirror: Mirror): void {
	const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
	const handle = fs.openSync(temporary, "w");
	try {
		fs.writeSync(handle, JSON.stringify(mirror));
		fs.fsyncSync(handle);
	} finally {
		fs.closeSync(handle);
	}
	fs.renameSync(temporary, file);
}

/** A change at or before the cursor: the feed (or this follower) broke its promise. */
export class SeenTwice extends Error {}

/** One change into the mirror. */
export function apply(mirror: Mirror, change: Change): void {
	if (change.sequence <= Number(mirror.cursor))
		throw new SeenTwice(`change ${change.sequence} seen twice (cursor ${mirror.cursor})`);
	const key = `${change.resource}:${change.identifier}`;
	const held = mirror.records[key];
	if (change.deleted) delete mirror.records[key];
	else if (!held || change.version > held.version)
		mirror.records[key] = { version: change.version, record: change.record };
	mirror.cursor = String(change.sequence);
	mirror.applied += 1;
}

/** Reads and applies one page of changes after the mirror's cursor; true when more are waiting. */
export async function followOnce(registry: RegistryClient, file: string, limit = 500): Promise<boolean> {
	const mirror = readMirror(file);
	const { data, error, response } = await registry.GET("/rest/api/changes", {
		params: { query: { after: mirror.cursor, limit } },
	});
	if (!data) throw new Error(`GET /rest/api/changes: ${response.status} ${error?.message ?? response.statusText}`);
	const page = data as Schemas["ChangePage"]; // the JSON form (the client asks for it; the other is text/event-stream)
	for (const change of page.changes) apply(mirror, change);
	if (page.changes.length > 0) writeMirror(file, mirror);
	return page.more;
}

/** Follows until `signal` aborts: a page at once while more are waiting, else every `pollMs`. */
export async function follow(
	baseUrl: string,
	file: string,
	credentials: Credentials,
	{ pollMs = 500, signal }: { pollMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
	const registry = createRegistryClient(baseUrl, credentials);
	while (!signal?.aborted) {
		let more = false;
		try {
			more = await followOnce(registry, file);
		} catch (error) {
			if (error instanceof SeenTwice) throw error;
			// The registry restarting or a network hiccup: try again at the next poll.
			console.error(String(error));
		}
		if (!more) await new Promise((resolve) => setTimeout(resolve, pollMs));
	}
}

if (require.main === module) {
	const [baseUrl = "http://localhost:3000", file = "mirror.json"] = process.argv.slice(2);
	const credentials = {
		username: process.env.REGISTRY_USERNAME ?? "authority",
		password: process.env.REGISTRY_PASSWORD ?? "authority-demo-password",
	};
	const stop = new AbortController();
	process.once("SIGINT", () => stop.abort());
	process.once("SIGTERM", () => stop.abort());
	console.log(
		`following ${baseUrl} as ${credentials.username} into ${file} (from cursor ${readMirror(file).cursor}); Ctrl-C stops`,
	);
	follow(baseUrl, file, credentials, { signal: stop.signal }).catch((error) => {
		console.error(error);
		process.exit(1);
	});
}
