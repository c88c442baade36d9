/**
 * One of node's nextTick queue entries, held for the life of the process. Without it a busy
 * registry's entries came in more than one hidden class, nextTick's object literal stopped being
 * inline-cached, and each entry (about six per request) was built in V8's runtime: ~5 % of the process
 * under load (docs/performance.md, eleventh round). Held from the start, the first class stays.
 */
import { executionAsyncResource } from "node:async_hooks";

let heldEntry: object | undefined;

/** Holds the entry of a nextTick callback (its execution resource) once; later calls keep the first. */
export function holdTickObjectShape(): Promise<object> {
	return new Promise((resolve) =>
		process.nextTick(() => {
			heldEntry ??= executionAsyncResource();
			resolve(heldEntry);
		}),
	);
}
