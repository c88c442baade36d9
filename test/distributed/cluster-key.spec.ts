/**
 * The cluster's wires (decisions §3, issue 36; docs/security.md): a registry of OS processes over
 * the machine's NATS, with its own CLUSTER_KEY (test/support/cluster.ts), against
 *   - a stranger on the same NATS namespace without the key: a Moleculer node, and raw NATS
 *     requests shaped as Moleculer's. Nothing answers it, it never learns a service, and what it
 *     can read of the namespace's subjects and streams holds no password, hash or participant;
 *   - a node with the key naming a caller no gateway signed: refused;
 *   - a change published on the durable channel without the key: never applied;
 *   - a process with TRANSPORTER and no usable CLUSTER_KEY: it does not start.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { ServiceBroker } from "moleculer";
import { connect, type NatsConnection } from "nats";
import { createRegistryBroker } from "../../services";
import type { Caller } from "../../src/contract/model";
import { importSeed } from "../../src/exchange/seed";
import { callerMeta, signCaller } from "../../src/platform/caller-signature";
import { channelPrefix, PARTICIPANTS_CHANGED, REGISTRY_CHANGES } from "../../src/platform/channels";
import { clusterKeys, type ClusterKeys } from "../../src/platform/cluster-key";
import { SealedJsonSerializer } from "../../src/platform/sealed-messages";
import { openPacket, sealPacket } from "../../src/platform/sealed-packets";
import { PROCESS_READY_TIMEOUT_MS, startCluster, type Cluster } from "../support/cluster";
import { demoAccount, demoAuth, demoSeed, REGISTRY_START_TIMEOUT_MS } from "../support/registry";
import globalSetup from "../support/global-setup";
import { NATS_URL } from "../support/servers";
import { ADD, CONTACT, FREE_PROCESSES, LOOKUP, pollUntil, qid, send } from "./support";

const ROOT = path.join(__dirname, "..", "..");
const ADMIN: Caller = { username: "admin", role: "ADMIN" };
const SP1: Caller = {
	username: "sp1",
	role: "SERVICE_PROVIDER",
	serviceProvider: "11111111-0000-4000-8000-000000000001",
};
const DEMO_PASSWORDS = (demoSeed().accounts as { password: string }[]).map((account) => account.password);
const ADMIN_PASSWORD = demoAccount("ADMIN").password as string;

let cluster: Cluster;
let ns: string;
let keys: ClusterKeys;
let nats: NatsConnection;
/** Every message on the namespace's transporter and channel subjects since before the seed: what a stranger reads. */
const captured: { subject: string; data: Buffer }[] = [];
/** What the stranger published itself (its own requests name the admin's password): not what it read. */
const ownMessages = new Set<string>();

function publishAsStranger(subject: string, data: Buffer): void {
	ownMessages.add(data.toString("base64"));
	nats.publish(subject, data);
}

/** Written by the test that adds it, read by the ones after. */
const participant = { organization: "", name: "" };

beforeAll(async () => {
	cluster = await startCluster({
		topology: { gateway: "api", accounts: "accounts", registry: "catalog,participants,accessPoints,lookup,audit" },
	});
	ns = cluster.namespace;
	keys = clusterKeys(cluster.env);
	nats = await connect({ servers: NATS_URL, name: `stranger-${ns}` });
	for (const subject of [`MOL-${ns}.>`, `${channelPrefix(ns)}.>`])
		nats.subscribe(subject, {
			callback: (_, msg) => void captured.push({ subject: msg.subject, data: Buffer.from(msg.data) }),
		});
	await nats.flush();
	await cluster.broker.waitForServices(
		["accounts", "catalog", "accessPoints", "participants", "lookup"],
		PROCESS_READY_TIMEOUT_MS,
	);
	cluster.broker.options.requestTimeout = 60000; // seeding hashes the demo passwords
	await importSeed(cluster.broker, demoSeed() as never);
	cluster.broker.options.requestTimeout = 5000;
}, REGISTRY_START_TIMEOUT_MS);

afterAll(async () => {
	await nats?.close();
	await cluster?.stop();
});

/** What process `name` logged so far. */
const logOf = (name: string) => cluster.processes.get(name)?.output.join("") ?? "";

async function failure(promise: Promise<unknown>): Promise<{ code?: number; type?: string; name?: string }> {
	try {
		await promise;
	} catch (error) {
		return error as never;
	}
	throw new Error("expected the call to fail");
}

describe("a stranger on the namespace without the key", () => {
	test("its raw requests (as Moleculer sends them) for exportRecords, participants.find as ADMIN and authenticate are dropped unanswered, while the same request sealed with the key is answered", async () => {
		interface RawRequest {
			node: string;
			action: string;
			params: object;
			meta: object;
		}
		const requests: RawRequest[] = [
			{ node: "accounts", action: "accounts.exportRecords", params: { type: "account" }, meta: { user: ADMIN } },
			{ node: "registry", action: "participants.find", params: {}, meta: { user: ADMIN } },
			{
				node: "accounts",
				action: "accounts.authenticate",
				params: { username: "admin", password: ADMIN_PASSWORD },
				meta: {},
			},
		];
		const packet = (sender: string, request: RawRequest) =>
			Buffer.from(
				JSON.stringify({
					ver: "4",
					sender,
					id: `${sender}-1`,
					action: request.action,
					params: request.params,
					meta: request.meta,
					timeout: 5000,
					level: 1,
					tracing: null,
					parentID: null,
					requestID: `${sender}-1`,
					caller: null,
					stream: false,
				}),
			);
		const answered: string[] = [];
		const senders = requests.map((request) => `stranger-${request.action.replace(".", "-")}-${ns}`);
		// One more sealed with another key: no better than none.
		const otherKey = clusterKeys({ ...cluster.env, CLUSTER_KEY: randomBytes(48).toString("base64") });
		const otherSender = `stranger-other-key-${ns}`;
		for (const sender of [...senders, otherSender])
			nats.subscribe(`MOL-${ns}.RES.${sender}`, { callback: () => void answered.push(sender) });
		const control = `keyholder-${ns}`;
		const controlAnswer = new Promise<{ success: boolean; data: unknown }>((resolve) =>
			nats.subscribe(`MOL-${ns}.RES.${control}`, {
				callback: (_, msg) => {
					const opened = openPacket(keys, "RES", Buffer.from(msg.data));
					if ("data" in opened) resolve(JSON.parse(opened.data.toString()));
				},
			}),
		);
		await nats.flush();

		requests.forEach((request, index) =>
			publishAsStranger(`MOL-${ns}.REQ.${request.node}-${ns}`, packet(senders[index], request)),
		);
		publishAsStranger(
			`MOL-${ns}.REQ.accounts-${ns}`,
			sealPacket(otherKey.sealing, "REQ", otherSender, packet(otherSender, requests[0])),
		);
		const listing: RawRequest = { node: "accounts", action: "accounts.listServiceProviders", params: {}, meta: {} };
		publishAsStranger(
			`MOL-${ns}.REQ.accounts-${ns}`,
			sealPacket(keys.sealing, "REQ", control, packet(control, listing)),
		);

		// The shape is right: sealed with the key, the same kind of packet is answered.
		let timer: NodeJS.Timeout | undefined;
		const answer = await Promise.race([
			controlAnswer,
			new Promise<never>((_, reject) => {
				timer = setTimeout(() => reject(new Error("the sealed request was not answered")), 20000);
			}),
		]).finally(() => clearTimeout(timer));
		expect(answer.success).toBe(true);
		expect(JSON.stringify(answer.data)).toContain("Nordlys");
		// Each stranger's packet was dropped as it arrived (logged once per sender), so nothing can answer it later.
		for (const [index, sender] of senders.entries())
			await pollUntil(`${requests[index].node} to drop ${sender}'s packet`, 20000, async () =>
				logOf(requests[index].node).includes(`dropped a REQ packet from node "${sender}"`) ? true : undefined,
			);
		expect(logOf("accounts")).toMatch(
			new RegExp(`dropped a REQ packet from node "${otherSender}": sealed with another cluster key`),
		);
		expect(answered).toEqual([]);
	});

	test("a stranger's Moleculer node never learns a service (its DISCOVER, INFO and HEARTBEAT go unheard), and its calls find no one", async () => {
		const stranger = new ServiceBroker({
			namespace: ns,
			nodeID: `stranger-node-${ns}`,
			transporter: NATS_URL,
			logger: false,
			heartbeatInterval: 1,
			requestTimeout: 3000,
		});
		const witness = createRegistryBroker({
			services: [],
			env: { ...process.env, ...cluster.env, SERVICES: "" },
			overrides: { logger: false, nodeID: `witness-${ns}` },
		});
		try {
			await stranger.start();
			// A node with the key, started after the stranger, hears the cluster: the stranger heard the same.
			await witness.start();
			await witness.waitForServices(["accounts", "participants"], 30000);
			await pollUntil("the cluster to drop the stranger's packets", 20000, async () =>
				logOf("accounts").includes(`packet from node "stranger-node-${ns}"`) ? true : undefined,
			);
			expect(stranger.registry.getServiceList({ skipInternal: true, onlyAvailable: false })).toEqual([]);
			expect(
				(stranger.registry as unknown as { getNodeList(options: object): { id: string }[] })
					.getNodeList({ onlyAvailable: false })
					.map((node) => node.id),
			).toEqual([stranger.nodeID]);
			for (const [action, params] of [
				["accounts.exportRecords", { type: "account" }],
				["participants.find", {}],
				["accounts.authenticate", { username: "admin", password: ADMIN_PASSWORD }],
			] as const)
				expect(await failure(stranger.call(action, params, { meta: { user: ADMIN } }))).toMatchObject({
					name: "ServiceNotFoundError",
				});
		} finally {
			await Promise.allSettled([stranger.stop(), witness.stop()]);
		}
	});

	test("what it reads on the namespace's subjects holds no password, password hash, participant name or identifier", async () => {
		participant.organization = `sealed-${ns}`;
		participant.name = `Forseglet Ledning AS ${ns}`;
		const before = captured.length;
		// A login (its password crosses to accounts.authenticate), an add, and an export of the hashes.
		expect(
			(await send(`${cluster.url}/rest/api/account`, { headers: { Authorization: demoAuth("ADMIN") } })).status,
		).toBe(200);
		const added = await send(`${cluster.url}/rest/api/participants`, {
			method: "POST",
			headers: { Authorization: demoAuth("SERVICE_PROVIDER", 0), Accept: ADD, "Content-Type": ADD },
			body: JSON.stringify({
				icd: "0088",
				organizationIdentifier: participant.organization,
				name: participant.name,
				processes: [{ identifier: FREE_PROCESSES[0] }],
				contact: CONTACT,
			}),
		});
		expect(added.status).toBe(201);
		await pollUntil("the lookup to answer the new participant", 30000, async () => {
			const found = await send(
				`${cluster.url}/rest/api/organizations/${encodeURIComponent(qid(participant.organization))}/processes`,
				{
					headers: { Accept: LOOKUP },
				},
			);
			return found.status === 200 ? true : undefined;
		});
		const page = await cluster.broker.call<{ records: { passwordHash: string }[] }, object>(
			"accounts.exportRecords",
			{ type: "account" },
			{ meta: callerMeta(cluster.broker, ADMIN) },
		);
		const hashes = page.records.map((record) => record.passwordHash);
		expect(hashes.length).toBe(DEMO_PASSWORDS.length);
		await nats.flush();

		// It did read the traffic: requests to the accounts node, the seed, the channel's messages.
		expect(captured.length).toBeGreaterThan(before);
		expect(captured.some(({ subject }) => subject === `MOL-${ns}.REQ.accounts-${ns}`)).toBe(true);
		expect(captured.some(({ subject }) => subject.endsWith(PARTICIPANTS_CHANGED))).toBe(true);
		const all = Buffer.concat(
			captured.filter(({ data }) => !ownMessages.has(data.toString("base64"))).map(({ data }) => data),
		);
		for (const secret of [
			...DEMO_PASSWORDS,
			...hashes,
			participant.name,
			participant.organization,
			"sp1-demo",
			"passwordHash",
		])
			expect({ secret, readable: all.includes(secret) }).toEqual({ secret, readable: false });
	});

	test("a raw JetStream read of the channels' streams shows no plaintext, though the key opens the stored change", async () => {
		const manager = await nats.jetstreamManager();
		const serializer = new SealedJsonSerializer(() => keys);
		serializer.init(cluster.broker);
		const stored = async (channel: string) => {
			const stream = `${channelPrefix(ns)}.${channel}`.split(".").join("_");
			const { state } = await manager.streams.info(stream);
			const messages: Buffer[] = [];
			for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++)
				messages.push(Buffer.from((await manager.streams.getMessage(stream, { seq })).data));
			return messages;
		};
		const changes = await stored(PARTICIPANTS_CHANGED);
		expect(
			changes.some((message) =>
				JSON.stringify(serializer.deserialize(message)).includes(participant.organization),
			),
		).toBe(true);
		const feed = await pollUntil("the change feed to publish the add", 30000, async () => {
			const messages = await stored(REGISTRY_CHANGES);
			return messages.some((message) =>
				JSON.stringify(serializer.deserialize(message)).includes(participant.name),
			)
				? messages
				: undefined;
		});
		for (const message of [...changes, ...feed])
			for (const plaintext of [participant.organization, participant.name, '"participant"'])
				expect({ plaintext, readable: message.includes(plaintext) }).toEqual({ plaintext, readable: false });
	});

	test("a participant change published on the channel without the key is not applied: it ends in the dead-letter stream, logged", async () => {
		const organization = `forged-${ns}`;
		const forged = Buffer.from(
			JSON.stringify({
				participant: "99999999-0000-4000-8000-000000000001",
				organizationKey: `0088:${organization}`,
				processes: [FREE_PROCESSES[1]],
				version: 1,
				deleted: false,
				serviceProviders: [SP1.serviceProvider],
			}),
		);
		const js = nats.jetstream();
		await js.publish(`${channelPrefix(ns)}.${PARTICIPANTS_CHANGED}`, forged);
		const manager = await nats.jetstreamManager();
		const deadLetters = `${channelPrefix(ns)}_FAILED_PARTICIPANT_CHANGES`;
		await pollUntil("the forged change to reach the dead-letter stream", 60000, async () => {
			const { state } = await manager.streams.info(deadLetters);
			for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++)
				if (Buffer.from((await manager.streams.getMessage(deadLetters, { seq })).data).equals(forged))
					return true;
			return undefined;
		});
		expect(logOf("registry")).toContain("a channel message did not open");
		const lookup = await send(
			`${cluster.url}/rest/api/organizations/${encodeURIComponent(qid(organization))}/processes`,
			{
				headers: { Accept: LOOKUP },
			},
		);
		expect(lookup.status).toBe(404);
	});
});

describe("a node with the key naming a caller no gateway signed", () => {
	const forgeries = (): Record<string, object> => {
		// Never started: it only signs (no TRANSPORTER or CACHER, so it opens no connection either).
		const otherCluster = createRegistryBroker({
			services: [],
			env: { NAMESPACE: ns, CLUSTER_KEY: randomBytes(48).toString("base64") },
			overrides: { logger: false },
		});
		return {
			unsigned: { user: ADMIN },
			"signed with another key": callerMeta(otherCluster, ADMIN),
			expired: { user: ADMIN, userSignature: signCaller(cluster.broker, ADMIN, Date.now() - 10 * 60_000) },
			"a service provider's signature with role ADMIN": {
				user: { ...SP1, role: "ADMIN" },
				userSignature: signCaller(cluster.broker, SP1),
			},
		};
	};

	test("participants.find and accounts.exportRecords refuse a forged ADMIN (403), and exportRecords without a caller (401)", async () => {
		for (const [forgery, meta] of Object.entries(forgeries())) {
			for (const [action, params] of [
				["participants.find", {}],
				["accounts.exportRecords", { type: "account" }],
			] as const)
				expect({
					forgery,
					action,
					error: await failure(cluster.broker.call(action, params, { meta })),
				}).toMatchObject({
					forgery,
					action,
					error: { code: 403, type: "AccessDeniedException" },
				});
		}
		expect(await failure(cluster.broker.call("accounts.exportRecords", { type: "account" }))).toMatchObject({
			code: 401,
			type: "AuthenticationException",
		});
		// Signed with the cluster's key, the same calls run.
		await expect(
			cluster.broker.call("participants.find", {}, { meta: callerMeta(cluster.broker, ADMIN) }),
		).resolves.toMatchObject({ content: expect.any(Array) });
	});

	test("accounts.authenticate answers no node but a gateway (no password oracle on the bus)", async () => {
		expect(
			await failure(
				cluster.broker.call("accounts.authenticate", { username: "admin", password: ADMIN_PASSWORD }),
			),
		).toMatchObject({ code: 403 });
	});
});

describe("a process with TRANSPORTER and no usable CLUSTER_KEY", () => {
	beforeAll(() => globalSetup(), 5 * 60 * 1000);

	/** `node dist/server.js` with `env` until it exits: its exit code and output. */
	function run(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
		const source: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: ":memory:", PORT: "0", LOG_LEVEL: "warn" };
		for (const name of ["CACHER", "MONGO_URI", "REGISTRY_SEED", "CLUSTER_KEY", "CLUSTER_KEY_PREVIOUS"])
			delete source[name];
		const child = spawn(process.execPath, [path.join(ROOT, "dist", "server.js")], {
			cwd: ROOT,
			env: { ...source, TRANSPORTER: NATS_URL, NAMESPACE: ns, SERVICES: "accounts", ...env },
			stdio: ["ignore", "pipe", "pipe"],
		});
		let output = "";
		child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
		child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
		return new Promise((resolve) => child.once("close", (code) => resolve({ code, output })));
	}

	test.each([
		["no CLUSTER_KEY", {}, "registry failed to start: CLUSTER_KEY is not set"],
		[
			"k8s/secret.yaml's placeholder",
			{ CLUSTER_KEY: "CHANGE-ME" },
			"registry failed to start: CLUSTER_KEY still holds the placeholder CHANGE-ME",
		],
		[
			"a key of 31 characters",
			{ CLUSTER_KEY: "w".repeat(31) },
			"registry failed to start: CLUSTER_KEY is too short (31 characters, at least 32)",
		],
	])("%s: it exits 1 with the reason", async (_what, env, message) => {
		const { code, output } = await run(env);
		expect(output).toContain(message);
		expect(code).toBe(1);
		expect(output).not.toContain("w".repeat(31));
	});
});
