/**
 * Many participants for bulk tests (exports, the operator CLI) and measurements: valid
 * Norwegian organization numbers and `participants.importSeed` in batches, through any
 * broker that reaches the participants service (one process or a cluster).
 */
import type { ServiceBroker } from "moleculer";

/** Demo service provider and process (seed/demo.json) that any ICD 0192 participant may hold. */
export const DEMO_PROVIDER = "11111111-0000-4000-8000-000000000001";
export const BILLING_PROCESS = "55555555-0000-4000-8000-000000000001";

/** `count` distinct valid organization numbers (MOD11), from 8-digit prefixes `base`, `base + 1`, … */
export function organizationNumbers(count: number, base = 81000000): string[] {
	const weights = [3, 2, 7, 6, 5, 4, 3, 2];
	const numbers: string[] = [];
	for (let prefix = base; numbers.length < count; prefix++) {
		const digits = String(prefix).padStart(8, "0");
		const sum = weights.reduce((total, weight, index) => total + weight * Number(digits[index]), 0);
		const check = sum % 11 === 0 ? 0 : 11 - (sum % 11);
		if (check !== 10) numbers.push(`${digits}${check}`);
	}
	return numbers;
}

/** One valid organization number per call, from 8-digit prefix `base` on (for tests that add participants one by one). */
export function organizationNumberSource(base: number): () => string {
	let next = base;
	return () => {
		const [number] = organizationNumbers(1, next);
		next = Number(number.slice(0, 8)) + 1;
		return number;
	};
}

export interface BulkOptions {
	serviceProvider?: string;
	processes?: string[];
	/** Rows per importSeed call. */
	batch?: number;
	/** First 8-digit prefix of the organization numbers. */
	base?: number;
}

/** Adds `count` participants through `participants.importSeed`, in batches; answers how many were created. */
export async function addParticipants(
	broker: ServiceBroker,
	count: number,
	options: BulkOptions = {},
): Promise<number> {
	const numbers = organizationNumbers(count, options.base);
	const batch = options.batch ?? 250;
	let created = 0;
	for (let start = 0; start < numbers.length; start += batch) {
		const participants = numbers.slice(start, start + batch).map((organizationIdentifier, index) => ({
			serviceProvider: options.serviceProvider ?? DEMO_PROVIDER,
			icd: "0192",
			organizationIdentifier,
			name: `Bulk Participant ${start + index} AS`,
			processes: (options.processes ?? [BILLING_PROCESS]).map((identifier) => ({ identifier })),
			contact: { name: "Bulk Contact", email: `bulk${start + index}@example.no`, phoneNumber: "+47 22 33 44 55" },
		}));
		const result = await broker.call<{ participants: { created: number } }, object>(
			"participants.importSeed",
			{ participants },
			{ timeout: 120000 },
		);
		created += result.participants.created;
	}
	return created;
}
