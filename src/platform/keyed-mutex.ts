/** Runs tasks one at a time per key in this process, so writes to one participant queue instead of retrying. */
export class KeyedMutex {
	private readonly tails = new Map<string, Promise<unknown>>();

	async run<T>(key: string, task: () => Promise<T>): Promise<T> {
		const previous = this.tails.get(key) ?? Promise.resolve();
		const current = previous.then(task, task);
		const tail = current.catch(() => undefined);
		this.tails.set(key, tail);
		try {
			return await current;
		} finally {
			// The last task of a key removes it, so the map holds only keys with work queued.
			if (this.tails.get(key) === tail) this.tails.delete(key);
		}
	}
}
