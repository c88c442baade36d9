/**
 * Issue 37's freshness, decisions §11 and §13: in the k8s topology run on one machine (two
 * gateways, two lookup nodes answering the SMP lookups over HTTP, every domain service in its own
 * process, over NATS and Redis), every node signing with the same configured pair (SMP_KEY_FILE,
 * SMP_CERTIFICATE_FILE, as the registry-smp-signing Secret gives the lookup pods), each of the
 * three changes an SMP answer depends on is seen on every node within 1 s of the change's answer,
 * and no node goes back to the older answer after it showed the newer one:
 * - a process the participant's service provider adds (its document types appear),
 * - a document type ADMIN hides (it disappears, its metadata answers 404),
 * - an access point's URL its provider changes (the signed metadata names the new one).
 * Every node's answers are polled before each change, so what they cached must not outlive it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Cluster } from "../support/cluster";
import { REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import {
	bdxrGroupPath,
	bdxrMetadataPath,
	BILLING,
	CREDIT_NOTE,
	CREDIT_NOTE_TYPE,
	get,
	groupDocumentTypes,
	INVOICE,
	INVOICE_RESPONSE,
	metadataAddresses,
	NORDLYS,
	NORDLYS_AP,
	NORDLYS_AP_URL,
	opensslSigningPair,
	ORDER,
	ORDERING,
	peppolGroupPath,
	peppolMetadataPath,
	setAccessPointUrl,
	setDocumentTypeVisible,
	setNordlysProcesses,
	withXmlsec,
	xmlsecVerify,
	type SigningFiles,
} from "../support/smp";
import { STALE_AFTER_MS, startDemoCluster } from "./convergence";

const NODES = ["gateway1", "gateway2", "lookup1", "lookup2"];
/** Ends a wait that hangs; the 1 s is asserted on the measured time. */
const GIVE_UP_MS = 30_000;
/** Rounds over every node after they all agree, each of which must still show the change. */
const ROUNDS_AFTER = 20;
const MOVED_URL = "https://as4-moved.nordlys-ap.example/as4";

let cluster: Cluster;
let signing: SigningFiles;

beforeAll(async () => {
	signing = opensslSigningPair(fs.mkdtempSync(path.join(os.tmpdir(), "smp-freshness-")));
	// The two lookup nodes share their store, as the lookup pods share MongoDB (test/distributed/lookup-convergence.spec.ts).
	cluster = await startDemoCluster({
		env: { ...signing.env, SMP_PUBLIC_URL: "https://smp.registry.example" },
		shareDataWith: { lookup2: "lookup1" },
	});
}, REGISTRY_START_TIMEOUT_MS);
afterAll(async () => {
	await cluster?.stop();
	if (signing) fs.rmSync(signing.folder, { recursive: true, force: true });
});

const nodeUrl = (name: string) => `http://127.0.0.1:${(cluster.processes.get(name) as { port: number }).port}`;

/** One observation of a node: which answer it gives, as a comparable string. */
interface Observation {
	label: string;
	read(node: string): Promise<string>;
}

const groupOf = (format: "peppol" | "bdxr"): Observation => ({
	label: `${format} service group of ${NORDLYS}`,
	async read(node) {
		const reply = await get(nodeUrl(node), (format === "peppol" ? peppolGroupPath : bdxrGroupPath)(NORDLYS));
		return JSON.stringify(groupDocumentTypes(format, reply.status, reply.text) ?? reply.status);
	},
});

const SHORT_NAMES: Record<string, string> = { [ORDER]: "Order", [CREDIT_NOTE]: "CreditNote", [INVOICE]: "Invoice" };

const metadataOf = (format: "peppol" | "bdxr", documentType: string): Observation => ({
	label: `${format} service metadata of ${NORDLYS} for ${SHORT_NAMES[documentType]}`,
	async read(node) {
		const reply = await get(
			nodeUrl(node),
			(format === "peppol" ? peppolMetadataPath : bdxrMetadataPath)(NORDLYS, documentType),
		);
		return JSON.stringify(metadataAddresses(format, reply.status, reply.text) ?? reply.status);
	},
});

/** Every node's current answer to every observation, concurrently. */
async function readAll(observations: Observation[]): Promise<Map<string, string>> {
	const reads = NODES.flatMap((node) =>
		observations.map(
			async (observation) => [`${node}: ${observation.label}`, await observation.read(node)] as const,
		),
	);
	return new Map(await Promise.all(reads));
}

/** Polls every node until each observation answers `want(label)`, or fails when `GIVE_UP_MS` is over. */
async function untilAll(observations: Observation[], want: (label: string) => string): Promise<void> {
	const deadline = Date.now() + GIVE_UP_MS;
	for (;;) {
		const answers = await readAll(observations);
		const differing = [...answers].filter(([label, value]) => value !== want(label));
		if (differing.length === 0) return;
		if (Date.now() > deadline)
			throw new Error(`not agreed after ${GIVE_UP_MS} ms: ${differing.map((d) => d.join(" = ")).join("; ")}`);
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

/**
 * The change, then every node polled until it shows it: the time from the change's answer until
 * the last node showed it, and every node that answered the older state after the newer one.
 */
async function convergence(
	observations: Observation[],
	change: () => Promise<unknown>,
	newer: (label: string) => string,
): Promise<{ ms: number; regressions: string[] }> {
	const before = await readAll(observations);
	await change();
	const changed = Date.now();
	const seen = new Set<string>();
	const regressions: string[] = [];
	let ms: number | null = null;
	let roundsAfter = 0;
	while (roundsAfter < ROUNDS_AFTER) {
		const answers = await readAll(observations);
		for (const [label, value] of answers) {
			if (value === newer(label)) seen.add(label);
			else if (seen.has(label)) regressions.push(`${label}: ${value} after ${newer(label)}`);
			else if (value !== before.get(label)) regressions.push(`${label}: neither before nor after: ${value}`);
		}
		if (ms === null && [...answers.keys()].every((label) => seen.has(label))) ms = Date.now() - changed;
		if (ms !== null) roundsAfter++;
		else if (Date.now() - changed > GIVE_UP_MS)
			throw new Error(
				`not converged after ${GIVE_UP_MS} ms: ${[...answers].filter(([label]) => !seen.has(label)).join("; ")}`,
			);
		else await new Promise((resolve) => setTimeout(resolve, 10));
	}
	return { ms: ms as number, regressions };
}

const report = (what: string, result: { ms: number; regressions: string[] }) =>
	// eslint-disable-next-line no-console
	console.info(
		`SMP freshness, ${what}: every node within ${result.ms} ms; regressions: ${result.regressions.length}`,
	);

describe("SMP answers on two gateways and two lookup nodes, one signing pair", () => {
	test("a process sp1 adds to a participant: its document type is published on every node within 1 s, and stays", async () => {
		const observations = [
			groupOf("peppol"),
			groupOf("bdxr"),
			metadataOf("peppol", ORDER),
			metadataOf("bdxr", ORDER),
		];
		const nowAnswers = (withOrder: boolean) => (label: string) => {
			if (label.includes("service group")) {
				const types = [CREDIT_NOTE, INVOICE, ...(withOrder ? [ORDER] : [])];
				return JSON.stringify(
					[
						...types,
						"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:fdc:peppol.eu:poacc:trns:invoice_response:3::2.1",
						...(withOrder
							? [
									"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:OrderResponse-2::OrderResponse##urn:fdc:peppol.eu:poacc:trns:order_response:3::2.1",
								]
							: []),
					].sort(),
				);
			}
			return withOrder ? JSON.stringify([NORDLYS_AP_URL]) : "404";
		};
		await untilAll(observations, nowAnswers(false));
		const result = await convergence(
			observations,
			() => setNordlysProcesses(cluster.url, [BILLING, INVOICE_RESPONSE, ORDERING]),
			nowAnswers(true),
		);
		report("process added", result);
		expect(result.regressions).toEqual([]);
		expect(result.ms).toBeLessThanOrEqual(STALE_AFTER_MS);
	});

	test("a document type ADMIN hides: gone from every node's service groups and metadata within 1 s, and stays gone", async () => {
		const observations = [
			groupOf("peppol"),
			groupOf("bdxr"),
			metadataOf("peppol", CREDIT_NOTE),
			metadataOf("bdxr", CREDIT_NOTE),
		];
		const before = await readAll(observations);
		const group = JSON.parse(before.get(`gateway1: ${observations[0].label}`) as string) as string[];
		expect(group).toContain(CREDIT_NOTE);
		const hidden = (label: string) =>
			label.includes("service group")
				? JSON.stringify(group.filter((documentType) => documentType !== CREDIT_NOTE))
				: "404";
		await untilAll(
			observations,
			(label) => before.get(`gateway1: ${label.slice(label.indexOf(": ") + 2)}`) as string,
		);
		const result = await convergence(
			observations,
			() => setDocumentTypeVisible(cluster.url, CREDIT_NOTE_TYPE, false),
			hidden,
		);
		report("document type hidden", result);
		expect(result.regressions).toEqual([]);
		expect(result.ms).toBeLessThanOrEqual(STALE_AFTER_MS);
	});

	test("an access point URL app1 changes: every node's signed metadata names it within 1 s, and keeps naming it", async () => {
		const observations = [metadataOf("peppol", INVOICE), metadataOf("bdxr", INVOICE)];
		await untilAll(observations, () => JSON.stringify([NORDLYS_AP_URL]));
		const result = await convergence(
			observations,
			() => setAccessPointUrl(cluster.url, NORDLYS_AP, MOVED_URL),
			() => JSON.stringify([MOVED_URL]),
		);
		report("access point URL changed", result);
		expect(result.regressions).toEqual([]);
		expect(result.ms).toBeLessThanOrEqual(STALE_AFTER_MS);
	});

	withXmlsec(
		"every node answers the same signed metadata, which xmlsec1 verifies with the configured certificate",
		async () => {
			const answers = await Promise.all(
				NODES.map(async (node) => (await get(nodeUrl(node), peppolMetadataPath(NORDLYS, INVOICE))).text),
			);
			expect(new Set(answers).size).toBe(1);
			expect(answers[0]).toContain(MOVED_URL);
			expect(xmlsecVerify(signing.folder, answers[0], signing.certificateFile)).toMatchObject({ status: 0 });
		},
	);
});
