/**
 * Issue 23, "Locked wires": a nats-server that wants a user and password (JetStream on, the
 * configuration of k8s/nats.yaml) and a
 * redis-server with `requirepass`, both the test's own. The registry cluster works with the
 * credentials (every connection: transporter, channels, cacher), given as NATS_* /
 * REDIS_* variables to one process and inside the URLs to the other; a process without them,
 * or with wrong ones, is refused at start with a message naming the server and exits 1 (never
 * ready); a password Redis stops accepting makes a running process not ready; no secret appears
 * in any output, /metrics or /health answer.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type { Cluster } from "../support/cluster";
import { freePort } from "../support/local-network";
import { missingBinaries, NATS_SERVER, PrivateAuthRedis, PrivateNats, REDIS_SERVER } from "../support/private-servers";
import { FREE_PROCESSES, LOOKUP, Participants, pollUntil, qid, send, startSeededCluster } from "./support";

const ROOT = path.join(__dirname, "..", "..");
const missing = missingBinaries(NATS_SERVER, REDIS_SERVER);
const suite = missing.length ? describe.skip : describe;

// Characters that must be percent-encoded in a URL, so both ways of giving them are tried.
const NATS_PASSWORD = `n@ts:pw/${process.pid}%x`;
const REDIS_PASSWORD = `r3dis#pw-${process.pid}`;
const SECRETS = [NATS_PASSWORD, REDIS_PASSWORD, encodeURIComponent(NATS_PASSWORD), encodeURIComponent(REDIS_PASSWORD)];

let nats: PrivateNats;
let redis: PrivateAuthRedis;
let cluster: Cluster;

function natsManifestConfig(): string {
	const documents = parseAllDocuments(fs.readFileSync(path.join(ROOT, "k8s", "nats.yaml"), "utf8")).map((document) =>
		document.toJS(),
	);
	return documents.find((document) => document?.kind === "ConfigMap" && document.metadata.name === "nats-config")
		.data["nats.conf"];
}

function noSecretIn(text: string, where: string): void {
	for (const secret of SECRETS) expect({ where, leaks: text.includes(secret) }).toEqual({ where, leaks: false });
}

suite("NATS and Redis with credentials", () => {
	beforeAll(async () => {
		nats = new PrivateNats("registry", NATS_PASSWORD);
		redis = new PrivateAuthRedis(REDIS_PASSWORD);
		// NATS runs k8s/nats.yaml's own configuration: authorization from NATS_USER/NATS_PASSWORD.
		await Promise.all([nats.start(natsManifestConfig()), redis.start()]);
		cluster = await startSeededCluster({
			// Two processes: every connection kind in each (the gateway's counters share the cacher's client).
			topology: { gateway: "api,lookup,accounts", core: "catalog,participants,accessPoints,audit" },
			env: {
				TRANSPORTER: nats.url,
				NATS_USER: nats.user,
				NATS_PASSWORD,
				CACHER: redis.url,
				REDIS_PASSWORD,
				LOG_LEVEL: "info",
			},
			processEnv: {
				core: {
					TRANSPORTER: nats.urlWithCredentials,
					NATS_USER: "",
					NATS_PASSWORD: "",
					CACHER: redis.urlWithCredentials,
					REDIS_PASSWORD: "",
				},
			},
		});
	}, 180000);

	afterAll(async () => {
		await cluster?.stop();
		await Promise.all([nats?.stop(), redis?.stop()]);
	});

	test("the cluster works with the credentials: a write reaches the lookup (the channel), lookups are cached in Redis", async () => {
		const organization = `creds-${cluster.namespace}`;
		const added = await new Participants(cluster).add(organization, FREE_PROCESSES.slice(0, 2));
		expect(added.status).toBe(201);
		const url = `${cluster.url}/rest/api/organizations/${encodeURIComponent(qid(organization))}/processes`;
		const answer = await pollUntil("the lookup to answer the new participant", 20000, async () => {
			const found = await send(url, { headers: { Accept: LOOKUP } });
			return found.status === 200 ? found : undefined;
		});
		expect((answer.body as { identifier: string }[]).map((process) => process.identifier).sort()).toEqual(
			FREE_PROCESSES.slice(0, 2).sort(),
		);
		// The shared answers live in the password-protected Redis.
		const keys = (await redis.command("KEYS", `registry-${cluster.namespace}*`)) as string[];
		expect(keys.length).toBeGreaterThan(0);
	});

	test.each([
		["no NATS credentials", () => ({ TRANSPORTER: nats.url }), "NATS"],
		[
			"a wrong NATS password",
			() => ({ TRANSPORTER: nats.url, NATS_USER: "registry", NATS_PASSWORD: "wrong" }),
			"NATS",
		],
		["no Redis password", () => ({ TRANSPORTER: nats.urlWithCredentials, CACHER: redis.url }), "Redis"],
		[
			"a wrong Redis password",
			() => ({ TRANSPORTER: nats.urlWithCredentials, CACHER: redis.url, REDIS_PASSWORD: "wrong" }),
			"Redis",
		],
	])(
		"a process with %s is refused at start, says which server refused it, exits 1 and is never ready",
		async (_what, environment, server) => {
			const port = await freePort();
			const env: NodeJS.ProcessEnv = {
				...process.env,
				NAMESPACE: cluster.namespace,
				CLUSTER_KEY: cluster.env.CLUSTER_KEY,
				SERVICES: "lookup",
				PORT: String(port),
				DATA_DIR: ":memory:",
				LOG_LEVEL: "info",
				...environment(),
			};
			for (const name of ["NATS_USER", "NATS_PASSWORD", "CACHER", "REDIS_PASSWORD"])
				if (!(name in environment())) delete env[name];
			const child = spawn(process.execPath, [path.join(ROOT, "dist", "server.js")], {
				cwd: ROOT,
				env,
				stdio: ["ignore", "pipe", "pipe"],
			});
			let output = "";
			child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
			child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
			let readyAnswered = false;
			const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
			let done = false;
			void exited.then(() => (done = true));
			while (!done) {
				const ready = await send(`http://127.0.0.1:${port}/health/ready`, { timeoutMs: 1000 });
				if (ready.status === 200) readyAnswered = true;
				await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 100))]);
			}
			expect(await exited).toBe(1);
			expect(readyAnswered).toBe(false);
			const port_ = server === "NATS" ? nats.port : redis.port;
			expect(output).toMatch(
				new RegExp(
					`registry failed to start: ${server} at \\S*127\\.0\\.0\\.1:${port_} refused the registry's credentials \\(authentication failed`,
				),
			);
			noSecretIn(output, `output of the refused process (${_what})`);
		},
		60000,
	);

	test("Redis stops accepting the password (rotated there, not here): the process says so and is not ready; accepted again: ready", async () => {
		const gateway = cluster.processes.get("gateway")!;
		const readiness = () => send(`http://127.0.0.1:${gateway.port}/health/ready`);
		const rotated = new PrivateAuthRedis(`${REDIS_PASSWORD}-rotated`);
		rotated.port = redis.port;
		await redis.command("CONFIG", "SET", "requirepass", rotated.password);
		try {
			// Existing connections stay authenticated: drop them so the registry must log in again.
			await rotated.command("CLIENT", "KILL", "TYPE", "normal").catch(() => undefined);
			const down = await pollUntil("the gateway to be not ready", 20000, async () => {
				const answer = await readiness();
				return answer.status === 503 ? answer : undefined;
			});
			expect((down.body as { checks: Record<string, string> }).checks.cache).toBe("DOWN");
			expect(gateway.output.join("")).toContain("refused the registry's credentials");
		} finally {
			await rotated.command("CONFIG", "SET", "requirepass", REDIS_PASSWORD);
			await rotated.stop();
		}
		await pollUntil("the gateway to be ready again", 20000, async () =>
			(await readiness()).status === 200 ? true : undefined,
		);
	});

	test("Redis away with auth on: lookups still answer (from the stores) and the process stays ready; back: the cacher logs in again", async () => {
		const gateway = cluster.processes.get("gateway")!;
		const url = `${cluster.url}/rest/api/organizations/${encodeURIComponent(qid(`creds-${cluster.namespace}`))}/processes`;
		await redis.kill();
		try {
			for (let i = 0; i < 5; i++) expect((await send(url, { headers: { Accept: LOOKUP } })).status).toBe(200);
			expect((await send(`http://127.0.0.1:${gateway.port}/health/ready`)).status).toBe(200);
		} finally {
			await redis.start(redis.port);
		}
		// The cachers log in again (the lookup nodes' answer caches keep lookups off Redis meanwhile).
		await pollUntil("the processes to log in to the restarted Redis", 20000, async () => {
			// The fresh server's clients other than this one: the cluster's processes logged in again.
			const clients = String(await redis.command("CLIENT", "LIST"))
				.split("\n")
				.filter((line) => line.includes("addr=") && !line.includes("cmd=client"));
			return clients.length >= cluster.processes.size ? true : undefined;
		});
		expect((await send(`http://127.0.0.1:${gateway.port}/health/ready`)).status).toBe(200);
	});

	test("no secret in any process's output, /metrics, /health answers or an API error answer", async () => {
		const texts: [string, string][] = [];
		for (const entry of cluster.processes.values()) {
			for (const route of ["/metrics", "/health/ready", "/health/live"]) {
				const answer = await fetch(`http://127.0.0.1:${entry.port}${route}`);
				texts.push([`${entry.name} ${route}`, await answer.text()]);
			}
		}
		const refused = await fetch(`${cluster.url}/rest/api/participants`, {
			headers: { Authorization: `Basic ${Buffer.from(`x:${NATS_PASSWORD}`).toString("base64")}` },
		});
		texts.push(["a refused API request", await refused.text()]);
		for (const entry of cluster.processes.values()) texts.push([`output of ${entry.name}`, entry.output.join("")]);
		// The start line shows the addresses, credentials masked.
		expect(cluster.processes.get("core")!.output.join("")).toContain(
			`transporter nats://***@127.0.0.1:${nats.port}`,
		);
		for (const [where, text] of texts) noSecretIn(text, where);
	});
});
