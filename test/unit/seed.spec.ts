/**
 * Seed files (decisions §9): the demo file is valid, a bad file is refused whole with every
 * reason and changes nothing, and an import is idempotent. The owning services are the real
 * ones; participants is a stub that records what it is handed (its service is another's).
 */
process.env.DATA_DIR = ":memory:";

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ServiceBroker } from "moleculer";
import AccessPointsService from "../../services/access-points/access-points.service";
import AccountsService from "../../services/accounts/accounts.service";
import CatalogService from "../../services/catalog/catalog.service";
import type { Process, ServiceProvider } from "../../src/contract/model";
import type { Page } from "../../src/contract/paging";
import { importSeed, reasonsOf } from "../../src/exchange/seed";
import type { Seed } from "../../src/exchange/seed-file";
import { referencesOutside, validateSeed } from "../../src/exchange/seed-validation";
import { lineReasons } from "../../src/exchange/registry-export";
import { signAuthentication } from "../../src/platform/caller-signature";
import { LOOK_ALIKES, PLAIN_GLN } from "../support/look-alikes";
import { certificatePem } from "../support/certificates";

const DEMO: Seed = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "seed", "demo.json"), "utf8"));
const UNKNOWN = "0f0f0f0f-0000-4000-8000-000000000000";

function withoutParticipants(seed: Seed): Seed {
	const copy = { ...seed };
	delete copy.participants;
	return copy;
}

async function refusal(promise: Promise<unknown>): Promise<{ path: string; message: string }[]> {
	try {
		await promise;
	} catch (error) {
		const reasons = reasonsOf(error);
		if (reasons) return reasons;
		throw error;
	}
	throw new Error("expected the seed to be refused");
}

async function startBroker(options: { participants?: boolean } = {}) {
	const broker = new ServiceBroker({ logger: false });
	broker.createService(AccessPointsService);
	broker.createService(AccountsService);
	broker.createService(CatalogService);
	const handed: unknown[] = [];
	if (options.participants !== false) {
		broker.createService({
			name: "participants",
			actions: {
				importSeed: (ctx: { params: { participants: unknown[] } }) => {
					handed.push(ctx.params);
					return { participants: { created: ctx.params.participants.length, updated: 0, unchanged: 0 } };
				},
				countUsingProcess: () => 0,
			},
		});
	}
	await broker.start();
	return { broker, handed };
}

async function registryContents(broker: ServiceBroker) {
	const everything = { pageRequest: { page: 0, size: 1000, sort: [] } };
	return {
		serviceProviders: await broker.call<ServiceProvider[]>("accounts.listServiceProviders"),
		accessPoints: (await broker.call<Page<unknown>, object>("accessPoints.find", everything)).totalElements,
		processes: (await broker.call<Process[]>("catalog.allProcesses")).length,
		documentTypes: (
			await broker.call<Page<unknown>, object>("catalog.findDocumentTypes", everything, {
				meta: { user: { username: "t", role: "ADMIN" } },
			})
		).totalElements,
	};
}

describe("validateSeed", () => {
	test("seed/demo.json is a valid seed file", () => {
		expect(validateSeed(DEMO)).toEqual([]);
	});

	test("the demo file holds what the README and tests quote: fixed identifiers, one restricted, one hidden process, a dependency", () => {
		const processes = DEMO.processes ?? [];
		expect(processes.filter((process) => process.restricted)).toHaveLength(1);
		expect(processes.filter((process) => process.visible === false)).toHaveLength(1);
		expect(processes.find((process) => process.alias === "Invoice response")?.dependencies).toEqual([
			{ identifier: "55555555-0000-4000-8000-000000000001" },
		]);
		expect(processes.some((process) => (process.requiredICDs ?? []).length > 0)).toBe(true);
		expect((DEMO.accounts ?? []).map((account) => [account.username, account.role])).toEqual([
			["sp1", "SERVICE_PROVIDER"],
			["sp2", "SERVICE_PROVIDER"],
			["app1", "ACCESS_POINT_PROVIDER"],
			["admin", "ADMIN"],
			["authority", "NETWORK_AUTHORITY"],
		]);
		expect((DEMO.participants ?? []).map((participant) => participant.organizationIdentifier)).toEqual([
			"991825827",
			"923609016",
			"986252932",
			"745707327",
		]);
	});

	test("a bad file gets every reason, each with the path of what is wrong", () => {
		const reasons = validateSeed({
			serviceProviders: [
				{ identifier: "11111111-0000-4000-8000-000000000001", title: "One" },
				{ title: "No identifier" },
			],
			accessPoints: [{ identifier: "not-a-uuid", title: "AP", provider: UNKNOWN, endpoints: [] }],
			capabilities: "not a list",
			processes: [
				{
					identifier: "55555555-0000-4000-8000-000000000001",
					domain: "D",
					qualifiedIdentifier: "cenbii-procid-ubl::x",
					dependencies: [{ identifier: "55555555-0000-4000-8000-000000000001" }],
				},
				{
					identifier: "55555555-0000-4000-8000-000000000001",
					domain: "D",
					qualifiedIdentifier: "CENBII-PROCID-UBL::X",
					colour: "blue",
				},
			],
			documentTypes: [
				{ identifier: "66666666-0000-4000-8000-000000000001", title: "", processes: [{ identifier: UNKNOWN }] },
			],
			accounts: [
				{
					username: "sp",
					password: "long-enough-password",
					role: "SERVICE_PROVIDER",
					serviceProvider: UNKNOWN,
				},
				{ username: "admin", password: "long-enough-password", role: "ADMIN", accessPointProvider: UNKNOWN },
				{ username: "sp", role: "ADMIN" },
			],
			participants: [
				{
					serviceProvider: "11111111-0000-4000-8000-000000000001",
					icd: "0192",
					organizationIdentifier: "123456789",
					processes: [],
					contact: { name: "N", email: "n@x.example", phoneNumber: "+47 22 33 44 55" },
				},
			],
			extras: [],
		});
		expect(reasons.map((reason) => reason.path).sort()).toEqual(
			[
				"serviceProviders[1].identifier",
				"accessPoints[0].identifier",
				"accessPoints[0].provider",
				"capabilities",
				"processes[0].dependencies[0].identifier",
				"processes[1]",
				"processes[1].identifier",
				"processes[1].qualifiedIdentifier",
				"documentTypes[0].title",
				"documentTypes[0].processes[0].identifier",
				"accounts[0].serviceProvider",
				"accounts[1].accessPointProvider",
				"accounts[1].accessPointProvider",
				"accounts[2].username",
				"accounts[2].password",
				"participants[0].organizationIdentifier",
				"extras",
			].sort(),
		);
		expect(reasons.find((reason) => reason.path === "processes[1]")?.message).toMatch(/colour/);
		expect(reasons.find((reason) => reason.path === "extras")?.message).toMatch(/unknown section/);
		expect(reasons.find((reason) => reason.path === "processes[0].dependencies[0].identifier")?.message).toMatch(
			/itself/,
		);
	});

	test("a participant whose organization identifier is a look-alike is refused on that field (decisions §5)", () => {
		const provider = "11111111-0000-4000-8000-000000000001";
		const participant = (organizationIdentifier: string) => ({
			serviceProvider: provider,
			icd: "0088",
			organizationIdentifier,
			processes: [],
			contact: { name: "N", email: "n@x.example", phoneNumber: "+47 22 33 44 55" },
		});
		const reasons = validateSeed({
			serviceProviders: [{ identifier: provider, title: "One" }],
			participants: [participant(PLAIN_GLN), ...LOOK_ALIKES.map(([, lookAlike]) => participant(lookAlike))],
		});
		expect(reasons).toEqual(
			LOOK_ALIKES.map((_lookAlike, index) => ({
				path: `participants[${index + 1}].organizationIdentifier`,
				message: "must match the required pattern",
			})),
		);
	});

	test("an NDJSON participant line with a look-alike organization identifier is refused on that field", () => {
		const line = (organizationIdentifier: string) => ({
			type: "participant",
			identifier: "88888888-0000-4000-8000-000000000001",
			icd: "0088",
			organizationIdentifier,
			registrationDate: "2026-01-01",
			lastModificationDate: "2026-01-01",
			contact: { name: "N", email: "n@x.example", phoneNumber: "+47 22 33 44 55" },
			provider: { identifier: "11111111-0000-4000-8000-000000000001" },
			processes: [],
		});
		expect(lineReasons(line(PLAIN_GLN)).reasons).toEqual([]);
		for (const [, lookAlike] of LOOK_ALIKES)
			expect(lineReasons(line(lookAlike)).reasons).toEqual([
				{ field: "organizationIdentifier", message: "must match the required pattern" },
			]);
	});

	test("references may name records the registry already holds", () => {
		const file = {
			processes: [
				{
					identifier: "55555555-0000-4000-8000-0000000000f1",
					domain: "D",
					dependencies: [{ identifier: UNKNOWN }],
				},
			],
		};
		expect(referencesOutside(file).processes).toEqual([UNKNOWN]);
		expect(validateSeed(file)).toHaveLength(1);
		expect(validateSeed(file, { processes: [UNKNOWN] })).toEqual([]);
	});

	test("SMP publishing data (decisions §13): endpoint certificates and dates, service providers' access points, checked like the rest", async () => {
		const expired = await certificatePem(-1);
		const AS4 = { title: "AS4", value: "peppol-transport-as4-v2_0", certificateTypes: ["Peppol AP"] };
		const AP = "33333333-0000-4000-8000-0000000000f1";
		const file = {
			accessPointProviders: DEMO.accessPointProviders,
			accessPoints: [
				{
					identifier: AP,
					title: "AP",
					provider: (DEMO.accessPointProviders ?? [])[0].identifier,
					endpoints: [
						{ url: "https://ap.example/as4", transportProfile: AS4, certificate: "AAAA" },
						{ url: "https://ap.example/as4", transportProfile: AS4, certificate: expired },
						{
							url: "https://ap.example/as4",
							transportProfile: AS4,
							activationDate: "2026-02-01",
							expirationDate: "2026-01-01",
							technicalContactUrl: "not a url",
						},
					],
				},
			],
			serviceProviders: [
				{
					identifier: UNKNOWN,
					title: "SP",
					accessPoints: [{ identifier: AP }, { identifier: AP }, { identifier: "nope" }],
				},
				{
					identifier: "11111111-0000-4000-8000-0000000000f2",
					title: "SP two",
					accessPoints: [{ identifier: "33333333-0000-4000-8000-0000000000f9" }],
				},
			],
		};
		expect(referencesOutside(file).accessPoints).toContain("33333333-0000-4000-8000-0000000000f9");
		expect(validateSeed(file).map((reason) => reason.path)).toEqual([
			"accessPoints[0].endpoints[2].technicalContactUrl",
			"serviceProviders[0].accessPoints[2].identifier",
			"serviceProviders[0].accessPoints[2].identifier",
			"serviceProviders[1].accessPoints[0].identifier",
			"accessPoints[0].endpoints[0].certificate",
			"accessPoints[0].endpoints[1].certificate",
			"accessPoints[0].endpoints[2].expirationDate",
			"serviceProviders[0].accessPoints[1].identifier",
		]);
		expect(
			validateSeed(file, { accessPoints: ["33333333-0000-4000-8000-0000000000f9"] }).map((reason) => reason.path),
		).not.toContain("serviceProviders[1].accessPoints[0].identifier");
	});

	test("the demo file gives every endpoint a certificate and links every service provider to an access point", () => {
		for (const accessPoint of DEMO.accessPoints ?? [])
			for (const endpoint of accessPoint.endpoints) expect(endpoint.certificate).toMatch(/^MII[A-Za-z0-9+/]+=*$/);
		for (const provider of DEMO.serviceProviders ?? []) expect(provider.accessPoints?.length).toBeGreaterThan(0);
	});

	test("a file that is not an object of sections is refused", () => {
		expect(validateSeed([])).toEqual([{ path: "", message: expect.any(String) }]);
	});
});

describe("importSeed", () => {
	test("the demo file imports every section, in dependency order, and a second import changes nothing", async () => {
		const { broker, handed } = await startBroker();
		try {
			const first = await importSeed(broker, DEMO);
			expect(first).toMatchObject({
				accessPointProviders: { created: 2 },
				accessPoints: { created: 3 },
				serviceProviders: { created: 3 },
				accounts: { created: 5 },
				capabilities: { created: 2 },
				processes: { created: 12 },
				documentTypes: { created: 5 },
				participants: { created: 4 },
			});
			expect(handed).toEqual([{ participants: DEMO.participants }]);
			expect(
				await broker.call(
					"accounts.authenticate",
					{ username: "sp1", password: "sp1-demo-password" },
					{ meta: { authenticationSignature: signAuthentication(broker, "sp1") } },
				),
			).toMatchObject({ role: "SERVICE_PROVIDER" });
			const billing = await broker.call<Process, object>("catalog.getProcess", {
				identifier: "55555555-0000-4000-8000-000000000001",
			});
			expect(billing.documentTypes.map((documentType) => documentType.identifier)).toEqual([
				"66666666-0000-4000-8000-000000000001",
				"66666666-0000-4000-8000-000000000002",
			]);

			const second = (await importSeed(broker, withoutParticipants(DEMO))) as Record<
				string,
				{ created: number; updated: number }
			>;
			for (const [section, counts] of Object.entries(second))
				expect([section, counts.created + counts.updated]).toEqual([section, 0]);
		} finally {
			await broker.stop();
		}
	});

	test("a bad file is refused whole with every reason, and nothing is changed", async () => {
		const { broker, handed } = await startBroker();
		try {
			const bad = {
				...DEMO,
				accounts: [
					...(DEMO.accounts ?? []),
					{
						username: "orphan",
						password: "orphan-password",
						role: "SERVICE_PROVIDER",
						serviceProvider: UNKNOWN,
					},
				],
				documentTypes: [
					...(DEMO.documentTypes ?? []),
					{
						identifier: "66666666-0000-4000-8000-0000000000ff",
						title: "Bad link",
						processes: [{ identifier: UNKNOWN }],
					},
				],
			};
			const reasons = await refusal(importSeed(broker, bad));
			expect(reasons.map((reason) => reason.path)).toEqual([
				"documentTypes[5].processes[0].identifier",
				"accounts[5].serviceProvider",
			]);
			expect(await registryContents(broker)).toEqual({
				serviceProviders: [],
				accessPoints: 0,
				processes: 0,
				documentTypes: 0,
			});
			expect(handed).toEqual([]);
		} finally {
			await broker.stop();
		}
	});

	test("a file may refer to records imported before; an unknown one is still refused", async () => {
		const { broker } = await startBroker();
		try {
			await importSeed(broker, withoutParticipants(DEMO));
			const later = {
				processes: [
					{
						identifier: "55555555-0000-4000-8000-0000000000f1",
						domain: "Invoicing",
						dependencies: [{ identifier: "55555555-0000-4000-8000-000000000001" }],
					},
				],
			};
			expect(await importSeed(broker, later)).toMatchObject({ processes: { created: 1 } });
			const reasons = await refusal(
				importSeed(broker, {
					accounts: [
						{
							username: "x",
							password: "long-enough-password",
							role: "SERVICE_PROVIDER",
							serviceProvider: UNKNOWN,
						},
					],
				}),
			);
			expect(reasons).toEqual([
				{ path: "accounts[0].serviceProvider", message: expect.stringContaining(UNKNOWN) },
			]);
		} finally {
			await broker.stop();
		}
	});

	test("participants in a file without a running participants service refuse the whole file", async () => {
		const { broker } = await startBroker({ participants: false });
		try {
			const reasons = await refusal(importSeed(broker, DEMO));
			expect(reasons).toEqual([
				{ path: "participants", message: expect.stringContaining("participants.importSeed") },
			]);
			expect((await registryContents(broker)).processes).toBe(0);
		} finally {
			await broker.stop();
		}
	});
});

describe("npm run seed", () => {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const { runSeed } = require("../../cli/seed") as typeof import("../../cli/seed");

	function capture() {
		const lines = { out: [] as string[], error: [] as string[] };
		return {
			lines,
			output: { out: (line: string) => lines.out.push(line), error: (line: string) => lines.error.push(line) },
		};
	}

	test("imports the demo file into the configured store, and a second run reports nothing changed", async () => {
		const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-seed-"));
		process.env.DATA_DIR = dataDir;
		try {
			const first = capture();
			expect(await runSeed([path.join(__dirname, "..", "..", "seed", "demo.json")], first.output)).toBe(0);
			expect(first.lines.out).toContain("  processes: 12 created, 0 updated, 0 unchanged");
			expect(first.lines.out).toContain("  participants: 4 created, 0 updated, 0 unchanged");
			const second = capture();
			expect(await runSeed([path.join(__dirname, "..", "..", "seed", "demo.json")], second.output)).toBe(0);
			expect(second.lines.out).toContain("  processes: 0 created, 0 updated, 12 unchanged");
			expect(second.lines.out).toContain("  accounts: 0 created, 0 updated, 5 unchanged");
		} finally {
			process.env.DATA_DIR = ":memory:";
			fs.rmSync(dataDir, { recursive: true, force: true });
		}
	});

	test("a bad file exits 1 and prints every reason; a missing argument exits 2", async () => {
		const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-seed-"));
		try {
			const file = path.join(dataDir, "bad.json");
			fs.writeFileSync(file, JSON.stringify({ processes: [{ identifier: "nope" }], extras: [] }));
			const run = capture();
			expect(await runSeed([file], run.output)).toBe(1);
			expect(run.lines.error[0]).toMatch(/refused, nothing changed \(3 reason/);
			expect(run.lines.error.slice(1)).toEqual([
				"  processes[0].identifier: must match the required pattern",
				"  processes[0].domain: must not be null",
				"  extras: unknown section; sections are serviceProviders, accessPointProviders, accessPoints, capabilities, processes, documentTypes, accounts, participants",
			]);
			fs.writeFileSync(
				file,
				JSON.stringify({
					participants: [
						{
							serviceProvider: "11111111-0000-4000-8000-000000000001",
							icd: "0088",
							organizationIdentifier: LOOK_ALIKES[0][1],
							processes: [],
							contact: { name: "N", email: "n@x.example", phoneNumber: "+47 22 33 44 55" },
						},
					],
				}),
			);
			const lookAlike = capture();
			expect(await runSeed([file], lookAlike.output)).toBe(1);
			expect(lookAlike.lines.error).toContain(
				"  participants[0].organizationIdentifier: must match the required pattern",
			);
			fs.writeFileSync(file, "{ not json");
			expect(await runSeed([file], capture().output)).toBe(1);
			expect(await runSeed([], capture().output)).toBe(2);
		} finally {
			fs.rmSync(dataDir, { recursive: true, force: true });
		}
	});
});
