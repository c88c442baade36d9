/** Waiting on a condition in tests: poll it, never sleep a guessed time (a loaded machine only makes the wait longer). */

/** Polls `check` until it returns a value other than undefined, or fails at the deadline. */
export async function pollUntil<T>(
	what: string,
	timeoutMs: number,
	check: () => Promise<T | undefined>,
	intervalMs = 100,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let last: unknown;
	for (;;) {
		try {
			const value = await check();
			if (value !== undefined) return value;
		} catch (error) {
			last = error;
		}
		if (Date.now() >= deadline)
			throw new Error(
				`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`,
			);
		await new Promise((resolve) => setTimeout(resolve, intervalMs));
	}
}
