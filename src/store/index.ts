/**
 * Store selection (architecture "Storage"): MongoDB when MONGO_URI is set, otherwise the
 * embedded SQLite store, one database file per owning service under DATA_DIR.
 */
import path from "node:path";
import { MongoStore } from "./mongo/store";
import { SqliteStore } from "./sqlite/store";
import type { Store } from "./types";

export * from "./types";
export { MongoStore } from "./mongo/store";
export { SqliteStore } from "./sqlite/store";

/** A Store that can say where its data lives (for the one start-up log line). */
export type LocatedStore = Store & { readonly location: string };

const OWNER = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * The store of one owning service. MONGO_URI set → MongoStore on that URI (database from
 * the URI; the service's collections are named as declared). Otherwise SqliteStore at
 * `${DATA_DIR ?? "./data"}/${owner}.db`, or in memory when DATA_DIR is ":memory:".
 */
export async function createStore(owner: string, env: NodeJS.ProcessEnv = process.env): Promise<LocatedStore> {
	const uri = env.MONGO_URI?.trim();
	if (uri) return MongoStore.connect(uri);
	if (!OWNER.test(owner) || owner.includes(".."))
		throw new Error(`store: invalid owner name ${JSON.stringify(owner)}`);
	const dataDir = env.DATA_DIR?.trim() || "./data";
	if (dataDir === ":memory:") return new SqliteStore(":memory:");
	return new SqliteStore(path.join(dataDir, `${owner}.db`));
}
