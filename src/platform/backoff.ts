/** Tries a task again after each failure, the wait doubling up to `maxDelayMs`; the last failure is thrown. */
export interface BackoffPolicy {
	attempts: number;
	firstDelayMs: number;
	maxDelayMs: number;
	/** Before each wait (e.g. telling a message broker the work goes on). */
	beforeWait?(attempt: number, error: unknown): void;
}

export async function withBackoff<T>(task: () => Promise<T>, policy: BackoffPolicy): Promise<T> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await task();
		} catch (error) {
			if (attempt >= policy.attempts) throw error;
			policy.beforeWait?.(attempt, error);
			const delay = Math.min(policy.firstDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
			await new Promise((resolve) => setTimeout(resolve, delay));
		}
	}
}
