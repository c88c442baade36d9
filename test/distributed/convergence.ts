/**
 * Issue 17's driver: seeded random participant and catalog changes through random gateways of
 * a cluster, and after each one, every observed node's lookup (anonymous and authenticated) and
 * the owner's read of the participant on every gateway polled until they all show the change. Reports how long
 * that took (convergence), how many changes took longer than 1 s (stale after 1 s), and how
 * often a gateway answered an older state after it had answered the newer one (regressions).
 */
import { startCluster, type Cluster, type ClusterOptions } from "../support/cluster";
import { demoAccount, demoAuth } from "../support/registry";
import { seededRandom } from "../support/seeded-random";
import { CONTACT, FREE_PROCESSES, LOOKUP, qid, send } from "./support";

/** The k8s topology on one machine: two gateways, two lookup nodes (answering lookups over HTTP), a process per domain service. */
export const K8S_TOPOLOGY: Record<string, string> = {
	gateway1: "api",
	gateway2: "api",
	lookup1: "lookup",
	lookup2: "lookup",
	catalog: "catalog",
	participants: "participants",
	accessPoints: "accessPoints",
	accounts: "accounts",
	audit: "audit",
};

/**
 * The cluster as an operator starts it: `npm start` (--demo-when-empty) on every process at
 * once, so the demo data is loaded while the others start. Every process is ready once the
 * registry's bootstrap is done (src/exchange/bootstrap.ts).
 */
export function startDemoCluster(options: ClusterOptions): Promise<Cluster> {
	return startCluster({ topology: K8S_TOPOLOGY, ...options, args: ["--demo-when-empty"] });
}

const ADD = "application/vnd.registry.participants.add.v1+json";
const UPDATE = "application/vnd.registry.participants.update.v1+json";
const DELETE = "application/vnd.registry.participants.delete.v1+json";
const TRANSFER = "application/vnd.registry.participants.transfer.v1+json";
const GET_PARTICIPANT = "application/vnd.registry.participants.get.v1+json";
const GET_PROCESS = "application/vnd.registry.processes.get.v1+json";
const UPDATE_PROCESS = "application/vnd.registry.processes.update.v1+json";

const ADMIN = demoAuth("ADMIN");
const PROVIDERS = [0, 1].map((index) => ({
	auth: demoAuth("SERVICE_PROVIDER", index),
	identifier: (demoAccount("SERVICE_PROVIDER", index).serviceProvider as string).toLowerCase(),
}));

export const STALE_AFTER_MS = 1000;
const GIVE_UP_MS = 10000;

interface ProcessState {
	title: string;
	visible: boolean;
}

export interface ConvergenceReport {
	changes: number;
	byKind: Record<string, number>;
	/** Milliseconds from a change's answer until every gateway showed it, sorted. */
	times: number[];
	p50: number;
	p99: number;
	max: number;
	staleAfterOneSecond: string[];
	regressions: string[];
	failedWrites: string[];
}

export interface ConvergenceOptions {
	/** Process names of the gateways: changes and the owners' reads go through them. */
	gateways: string[];
	/** Process names whose lookup is observed (lookup nodes, gateways), asked before each change (a node down is left out). */
	lookups: () => string[];
	changes: number;
	seed: number;
	organizations?: number;
	/** Called before change number `index` (faults: kill a node, restart Redis). */
	before?: (index: number) => Promise<void>;
}

function percentile(sorted: number[], p: number): number {
	if (sorted.length === 0) return 0;
	return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export async function runConvergence(cluster: Cluster, options: ConvergenceOptions): Promise<ConvergenceReport> {
	const random = seededRandom(options.seed);
	const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
	const gatewayUrl = (name: string) => `http://127.0.0.1:${(cluster.processes.get(name) as { port: number }).port}`;
	const organizations = Array.from(
		{ length: options.organizations ?? 24 },
		(_, index) => `cv${cluster.namespace}${index}`,
	);
	// What the registry holds, as this driver made it: organization → provider → processes.
	const holdings = new Map<string, Map<string, string[]>>(
		organizations.map((organization) => [organization, new Map()]),
	);
	const catalog = new Map<string, ProcessState>();
	for (const identifier of FREE_PROCESSES) {
		const answer = await send(`${cluster.url}/rest/api/processes/${identifier}`, {
			headers: { Accept: GET_PROCESS, Authorization: ADMIN },
		});
		const process = answer.body as { title: string; visible?: boolean };
		catalog.set(identifier, { title: process.title, visible: process.visible !== false });
	}

	/** The lookup answer the registry should give now, as sorted `identifier|title` (null: 404). */
	const expected = (organization: string, anonymous: boolean): string | null => {
		const held = holdings.get(organization) as Map<string, string[]>;
		if (held.size === 0) return null;
		const union = [...new Set([...held.values()].flat())];
		const shown = union.filter((identifier) => !anonymous || (catalog.get(identifier) as ProcessState).visible);
		return JSON.stringify(
			shown.map((identifier) => `${identifier}|${(catalog.get(identifier) as ProcessState).title}`).sort(),
		);
	};
	const lookupOn = async (
		gateway: string,
		organization: string,
		anonymous: boolean,
	): Promise<string | null | undefined> => {
		const headers: Record<string, string> = anonymous
			? { Accept: LOOKUP }
			: { Accept: LOOKUP, Authorization: ADMIN };
		const answer = await send(
			`${gatewayUrl(gateway)}/rest/api/organizations/${encodeURIComponent(qid(organization))}/processes`,
			{ headers, timeoutMs: 5000 },
		);
		if (answer.status === 404) return null;
		if (answer.status !== 200) return undefined;
		return JSON.stringify(
			(answer.body as { identifier: string; title: string }[])
				.map((process) => `${process.identifier}|${process.title}`)
				.sort(),
		);
	};
	/** The owner's read of its participant on a gateway: the provider identifier it answers, or null for 404. */
	const ownerReadOn = async (
		gateway: string,
		organization: string,
		provider: (typeof PROVIDERS)[number],
	): Promise<string | null | undefined> => {
		const answer = await send(
			`${gatewayUrl(gateway)}/rest/api/participants/${encodeURIComponent(qid(organization))}`,
			{
				headers: { Accept: GET_PARTICIPANT, Authorization: provider.auth },
				timeoutMs: 5000,
			},
		);
		if (answer.status === 404) return null;
		if (answer.status !== 200) return undefined;
		const body = answer.body as { provider?: { identifier: string }; processes: { identifier: string }[] };
		return `${body.provider?.identifier.toLowerCase()}:${JSON.stringify(body.processes.map((process) => process.identifier).sort())}`;
	};
	const expectedRead = (organization: string, provider: (typeof PROVIDERS)[number]): string | null => {
		const processes = holdings.get(organization)?.get(provider.identifier);
		return processes ? `${provider.identifier}:${JSON.stringify([...processes].sort())}` : null;
	};

	/** Every observation a change must see, as [label, read, expected]. */
	const observationsFor = (touched: string[]) => [
		...options.lookups().flatMap((node) =>
			touched.flatMap((organization) =>
				[true, false].map((anonymous) => ({
					label: `${node} ${anonymous ? "anonymous" : "authenticated"} lookup of ${organization}`,
					read: () => lookupOn(node, organization, anonymous),
					want: () => expected(organization, anonymous),
				})),
			),
		),
		...options.gateways.flatMap((gateway) =>
			touched.flatMap((organization) =>
				PROVIDERS.map((provider) => ({
					label: `${gateway} ${provider.identifier} read of ${organization}`,
					read: () => ownerReadOn(gateway, organization, provider),
					want: () => expectedRead(organization, provider),
				})),
			),
		),
	];

	const report: ConvergenceReport = {
		changes: 0,
		byKind: {},
		times: [],
		p50: 0,
		p99: 0,
		max: 0,
		staleAfterOneSecond: [],
		regressions: [],
		failedWrites: [],
	};

	/**
	 * Polls until every observation shows the current state; counts a gateway that goes back after
	 * it showed it, and a read sent more than STALE_AFTER_MS after the write's answer that still
	 * shows the old state (decisions §11). A read slow to come back on a busy machine is not stale.
	 */
	const converge = async (what: string, touched: string[], counted = true) => {
		const started = Date.now();
		const observations = observationsFor(touched);
		const seen = new Set<string>();
		let stale: string | undefined;
		let slowest: { observation: { label: string }; ms: number } | undefined;
		const slowestRead = () => (slowest ? ` (slowest read: ${slowest.observation.label}, ${slowest.ms} ms)` : "");
		for (;;) {
			const results = await Promise.all(
				observations.map(async (observation) => {
					const sent = Date.now();
					const value = await observation.read();
					return { observation, value, sent, ms: Date.now() - sent };
				}),
			);
			// A slow change is usually one slow read (docs/reliability.md): say which.
			for (const result of results) if (!slowest || result.ms > slowest.ms) slowest = result;
			let agreed = true;
			for (const { observation, value, sent } of results) {
				const matches = value === observation.want();
				if (matches) seen.add(observation.label);
				else {
					agreed = false;
					if (stale === undefined && sent - started > STALE_AFTER_MS)
						stale = `${observation.label} answered ${value} to a read sent ${sent - started} ms after the write`;
					if (seen.has(observation.label))
						report.regressions.push(
							`${what}: ${observation.label} answered ${value} after the current state`,
						);
				}
			}
			const elapsed = Date.now() - started;
			if (agreed) {
				if (!counted) return;
				report.times.push(elapsed);
				if (stale) report.staleAfterOneSecond.push(`${what}: ${stale}${slowestRead()}`);
				return;
			}
			if (elapsed > GIVE_UP_MS) {
				const differing = results
					.filter(({ observation, value }) => value !== observation.want())
					.map(({ observation, value }) => `${observation.label}: ${value} (want ${observation.want()})`);
				report.times.push(elapsed);
				report.staleAfterOneSecond.push(
					`${what}: not converged after ${elapsed} ms${slowestRead()}: ${differing.slice(0, 4).join("; ")}`,
				);
				return;
			}
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
	};

	// Every gateway holds an answer (a 404 for most) before the first change.
	await converge("warm-up", organizations, false);

	for (let index = 0; index < options.changes; index++) {
		if (options.before) await options.before(index);
		const gateway = gatewayUrl(pick(options.gateways));
		const roll = random();
		const organization = pick(organizations);
		const held = holdings.get(organization) as Map<string, string[]>;
		const provider = pick(PROVIDERS);
		const other = PROVIDERS.find((candidate) => candidate !== provider) as (typeof PROVIDERS)[number];
		const freeFor = (owner: (typeof PROVIDERS)[number]) => {
			const taken = new Set(
				[...held.entries()]
					.filter(([identifier]) => identifier !== owner.identifier)
					.flatMap(([, processes]) => processes),
			);
			return FREE_PROCESSES.filter((identifier) => !taken.has(identifier));
		};
		const someOf = (identifiers: string[]) => identifiers.filter(() => random() < 0.35).slice(0, 3);
		const path = `${gateway}/rest/api/participants/${encodeURIComponent(qid(organization))}`;
		let kind: string;
		let touched = [organization];
		let answer;
		let expectStatus: number;
		if (roll < 0.06) {
			// A catalog change: a process renamed, or hidden / shown again.
			kind = "catalog";
			const identifier = pick(FREE_PROCESSES);
			const state = catalog.get(identifier) as ProcessState;
			const current = (
				await send(`${gateway}/rest/api/processes/${identifier}`, {
					headers: { Accept: GET_PROCESS, Authorization: ADMIN },
				})
			).body as Record<string, unknown>;
			const next =
				random() < 0.5
					? { ...state, visible: !state.visible }
					: { ...state, title: `${state.title.replace(/ r\d+$/, "")} r${index}` };
			const ids = (key: string) =>
				((current[key] as { identifier: string }[] | undefined) ?? []).map((item) => ({
					identifier: item.identifier,
				}));
			const form = {
				...current,
				title: next.title,
				visible: next.visible,
				capabilities: ids("capabilities"),
				documentTypes: ids("documentTypes"),
				dependencies: ids("dependencies"),
			};
			delete (form as { identifier?: unknown }).identifier;
			answer = await send(`${gateway}/rest/api/processes/${identifier}`, {
				method: "PUT",
				headers: { Accept: UPDATE_PROCESS, "Content-Type": UPDATE_PROCESS, Authorization: ADMIN },
				body: JSON.stringify(form),
			});
			expectStatus = 200;
			if (answer.status === 200) catalog.set(identifier, next);
			touched = organizations
				.filter((candidate) =>
					[...(holdings.get(candidate) as Map<string, string[]>).values()].some((processes) =>
						processes.includes(identifier),
					),
				)
				.slice(0, 6);
			if (touched.length === 0) touched = [organization];
		} else if (!held.has(provider.identifier)) {
			const processes = someOf(freeFor(provider));
			kind = "add";
			if (processes.length === 0) processes.push(...freeFor(provider).slice(0, 1));
			if (processes.length === 0) continue;
			answer = await send(`${gateway}/rest/api/participants`, {
				method: "POST",
				headers: { Accept: ADD, "Content-Type": ADD, Authorization: provider.auth },
				body: JSON.stringify({
					icd: "0088",
					organizationIdentifier: organization,
					processes: processes.map((identifier) => ({ identifier })),
					contact: CONTACT,
				}),
			});
			expectStatus = 201;
			if (answer.status === 201) held.set(provider.identifier, processes);
		} else if (roll < 0.45) {
			kind = "update";
			const processes = someOf(freeFor(provider));
			answer = await send(path, {
				method: "PUT",
				headers: { Accept: UPDATE, "Content-Type": UPDATE, Authorization: provider.auth },
				body: JSON.stringify({ processes: processes.map((identifier) => ({ identifier })), contact: CONTACT }),
			});
			expectStatus = 200;
			if (answer.status === 200) held.set(provider.identifier, processes);
		} else if (roll < 0.6 && !held.has(other.identifier)) {
			kind = "transfer";
			answer = await send(`${path}/transfer/${other.identifier}`, {
				method: "PUT",
				headers: { Accept: TRANSFER, Authorization: provider.auth },
			});
			expectStatus = 200;
			if (answer.status === 200) {
				held.set(other.identifier, held.get(provider.identifier) as string[]);
				held.delete(provider.identifier);
			}
		} else {
			kind = "delete";
			answer = await send(path, { method: "DELETE", headers: { Accept: DELETE, Authorization: provider.auth } });
			expectStatus = 204;
			if (answer.status === 204) held.delete(provider.identifier);
		}
		const what = `change ${index} (${kind} of ${organization} through ${gateway})`;
		if (answer.status !== expectStatus) {
			report.failedWrites.push(`${what}: ${answer.status} ${answer.error ?? JSON.stringify(answer.body)}`);
			continue;
		}
		report.changes++;
		report.byKind[kind] = (report.byKind[kind] ?? 0) + 1;
		await converge(what, touched);
	}
	const sorted = [...report.times].sort((a, b) => a - b);
	report.times = sorted;
	report.p50 = percentile(sorted, 50);
	report.p99 = percentile(sorted, 99);
	report.max = sorted[sorted.length - 1] ?? 0;
	return report;
}

export function summary(name: string, report: ConvergenceReport): string {
	return `${name}: ${report.changes} changes ${JSON.stringify(report.byKind)}; convergence p50 ${report.p50} ms, p99 ${report.p99} ms, max ${report.max} ms; stale after 1 s: ${report.staleAfterOneSecond.length}; regressions: ${report.regressions.length}; failed writes: ${report.failedWrites.length}`;
}
