/**
 * The SML delivery's guarantees in one process (decisions §14), against the stand-in SML: nothing
 * lost over a restart with calls pending (the network outbox and the delivery state are in the
 * store), a bulk import delivered with CreateList in batches, a list the SML refuses delivered one
 * call each, a call refused past the patience parked and replayed (`registry sml replay`), and the
 * delivery metric. The cluster runs the same code (network.http.spec.ts runs on both projects).
 */
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { importSeed } from "../../src/exchange/seed";
import { pollUntil } from "../support/poll";
import { REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";
import { makeTestPki, missingOpenssl, networkEnv, StandInSml, type TestPki } from "../support/stand-in-network";

const suite = missingOpenssl().length ? describe.skip : describe;

const SP1 = "11111111-0000-4000-8000-000000000001";
const BILLING = "55555555-0000-4000-8000-000000000001";
const DEADLINE_MS = 120_000;

const until = (what: string, check: () => Promise<boolean>) =>
	pollUntil(what, DEADLINE_MS, async () => ((await check()) ? true : undefined));

/** `count` valid Norwegian organization numbers (MOD11) from `start` on. */
function organizationNumbers(start: number, count: number): string[] {
	const numbers: string[] = [];
	for (let base = start; numbers.length < count; base++) {
		const digits = String(base).padStart(8, "0").split("").map(Number);
		const sum = digits.reduce((total, digit, index) => total + digit * [3, 2, 7, 6, 5, 4, 3, 2][index], 0);
		const check = (11 - (sum % 11)) % 11;
		if (check !== 10) numbers.push(`${digits.join("")}${check}`);
	}
	return numbers;
}

function seedOf(numbers: string[]) {
	return {
		participants: numbers.map((organizationIdentifier) => ({
			serviceProvider: SP1,
			icd: "0192",
			organizationIdentifier,
			name: `Bulk ${organizationIdentifier} AS`,
			contact: { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" },
			processes: [{ identifier: BILLING }],
		})),
	};
}

let pki: TestPki;
let sml: StandInSml;

suite("the SML delivery in one process", () => {
	beforeAll(async () => {
		pki = makeTestPki();
		sml = await new StandInSml(pki).start();
	});
	afterAll(() => sml?.stop());

	it("the stand-in SML refuses a client certificate its authority did not sign", async () => {
		const refused = await new Promise<string>((resolve) => {
			const call = https.request(`${sml.url}/manageparticipantidentifier`, {
				method: "POST",
				key: fs.readFileSync(pki.strangerKey),
				cert: fs.readFileSync(pki.strangerCert),
				ca: fs.readFileSync(pki.caFile),
			});
			call.on("response", (response) => resolve(`answered ${response.statusCode}`));
			call.on("error", (error) => resolve(error.message));
			call.end("<x/>");
		});
		expect(refused).not.toMatch(/^answered/);
		expect(sml.calls).toEqual([]);
	});

	describe("a restart with calls pending", () => {
		const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-network-restart-"));
		afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

		it("loses none: what the SML missed while down reaches it after the restart", async () => {
			const numbers = organizationNumbers(97200000, 3);
			sml.down = true;
			// The demo seed gives the provider and process the imported participants name.
			let registry = await startRegistry({
				env: { ...networkEnv(pki, sml, null), DATA_DIR: dataDir, SML_SYNC_INTERVAL: "0" },
			});
			try {
				await importSeed(registry.broker, seedOf(numbers));
				const organizations = (
					registry.broker.getLocalService("network") as unknown as {
						collections: { organizations: { get(key: string): Promise<{ smlFailing: boolean } | null> } };
					}
				).collections.organizations;
				await until("the deliveries failing while the SML is down", async () =>
					(await Promise.all(numbers.map((number) => organizations.get(`0192:${number}`)))).every(
						(doc) => doc?.smlFailing === true,
					),
				);
			} finally {
				await registry.stop();
				sml.down = false;
			}
			expect(numbers.some((number) => sml.participants.has(`0192:${number}`))).toBe(false);
			registry = await startRegistry({
				seed: false,
				env: { ...networkEnv(pki, sml, null), DATA_DIR: dataDir, SML_SYNC_INTERVAL: "0" },
			});
			try {
				await until("the pending organizations in the SML after the restart", async () =>
					numbers.every((number) => sml.participants.has(`0192:${number}`)),
				);
			} finally {
				await registry.stop();
			}
		});
	});

	describe("bulk imports, refused lists, parking", () => {
		let registry: RunningRegistry;
		beforeAll(async () => {
			registry = await startRegistry({ env: { ...networkEnv(pki, sml, null), SML_SYNC_INTERVAL: "0" } });
			await until("the SMP record", async () => sml.smp !== null);
		}, REGISTRY_START_TIMEOUT_MS);
		afterAll(() => registry.stop());

		it("a bulk import reaches the SML with CreateList in batches of at most 100, not one call each", async () => {
			const numbers = organizationNumbers(97300000, 250);
			const [lists, singles] = [sml.count("CreateList"), sml.count("CreateParticipantIdentifier")];
			await importSeed(registry.broker, seedOf(numbers));
			await until("the bulk import in the SML", async () =>
				numbers.every((number) => sml.participants.has(`0192:${number}`)),
			);
			const listCalls = sml.calls.filter((call) => call.operation === "CreateList").slice(lists);
			expect(listCalls.length).toBeGreaterThanOrEqual(3);
			expect(Math.max(...listCalls.map((call) => call.values.length))).toBeLessThanOrEqual(100);
			expect(sml.count("CreateParticipantIdentifier")).toBe(singles);
		});

		it("a list the SML refuses goes one call each", async () => {
			const numbers = organizationNumbers(97400000, 5);
			sml.refuseLists = true;
			try {
				const singles = sml.count("CreateParticipantIdentifier");
				await importSeed(registry.broker, seedOf(numbers));
				await until("the organizations in the SML one by one", async () =>
					numbers.every((number) => sml.participants.has(`0192:${number}`)),
				);
				expect(sml.count("CreateParticipantIdentifier") - singles).toBeGreaterThanOrEqual(numbers.length);
			} finally {
				sml.refuseLists = false;
			}
		});

		it("a call refused past the delivery's patience is parked, shown in the metric, and replayed", async () => {
			const [number] = organizationNumbers(97500000, 1);
			const value = `0192:${number}`;
			const network = registry.broker.getLocalService("network") as unknown as {
				settings: { parkAfterMs: number };
			};
			const patience = network.settings.parkAfterMs;
			network.settings.parkAfterMs = 0;
			sml.refused.set(value, { fault: "BadRequestFault", message: "Identifier scheme not allowed" });
			try {
				await importSeed(registry.broker, seedOf([number]));
				await until("the delivery parked", async () => {
					const parked = await registry.broker.call<{ organization: string; message: string }[], object>(
						"network.parked",
						{},
					);
					return parked.some((entry) => entry.organization === value && /not allowed/.test(entry.message));
				});
				const metrics = await request(registry.url).get("/metrics");
				expect(metrics.text).toMatch(
					/registry_network_deliveries\{[^}]*target="sml"[^}]*state="parked"[^}]*\} 1/,
				);
			} finally {
				network.settings.parkAfterMs = patience;
				sml.refused.delete(value);
			}
			expect(sml.participants.has(value)).toBe(false);
			await registry.broker.call("network.replayParked", {});
			await until("the replayed delivery in the SML", async () => sml.participants.has(value));
			expect(await registry.broker.call("network.parked", {})).toEqual([]);
		});
	});
});
