/**
 * NATS over TLS, end to end (docs/operations.md "NATS over TLS"): a CA and a server certificate
 * made here with openssl, a nats-server of the test's own that requires TLS (JetStream on, its
 * store in the same temporary folder), and the registry over it with `TRANSPORTER=tls://…` and
 * `NATS_TLS_CA_FILE`: every NATS connection of every process (the transporter, the durable
 * channels') is a TLS one, a participant registered through the API reaches the
 * organization lookup through the durable channel, and a client that does not trust the CA is
 * refused. Redis is the machine's, under the cluster's own NAMESPACE. In CI (CI=true) a missing
 * nats-server or openssl is a failure; elsewhere the suite skips and says so.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { connect, type ConnectionOptions, type NatsConnection } from "nats";
import type { Cluster } from "../support/cluster";
import { freePort } from "../support/local-network";
import { missingBinaries, NATS_SERVER } from "../support/private-servers";
import { REDIS_URL } from "../support/servers";
import { FREE_PROCESSES, LOOKUP, Participants, pollUntil, qid, send, startSeededCluster } from "./support";

const OPENSSL = process.env.TEST_OPENSSL ?? "/usr/bin/openssl";
const missing = missingBinaries(NATS_SERVER, OPENSSL);
const suite = missing.length ? describe.skip : describe;

interface Certificates {
	ca: string;
	cert: string;
	key: string;
}

/** A CA, and a certificate it signed for 127.0.0.1 (the name the registry dials), valid a day. */
function makeCertificates(dir: string): Certificates {
	const openssl = (...args: string[]) => execFileSync(OPENSSL, args, { cwd: dir, stdio: "pipe" });
	const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
	openssl(
		...["req", "-x509", ...ecKey, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1"],
		...["-subj", "/CN=registry test CA", "-addext", "basicConstraints=critical,CA:TRUE"],
		...["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
	);
	openssl("req", ...ecKey, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
	fs.writeFileSync(
		path.join(dir, "server.ext"),
		"subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
	);
	openssl(
		"x509",
		"-req",
		"-in",
		"server.csr",
		"-CA",
		"ca.pem",
		"-CAkey",
		"ca.key",
		"-CAcreateserial",
		"-out",
		"server.pem",
		"-days",
		"1",
		"-extfile",
		"server.ext",
	);
	return { ca: path.join(dir, "ca.pem"), cert: path.join(dir, "server.pem"), key: path.join(dir, "server.key") };
}

let dir: string;
let certificates: Certificates;
let natsServer: ChildProcess | null = null;
let port = 0;
let monitorPort = 0;
let cluster: Cluster | undefined;

/** What the server says to a client that connects without TLS and sends `text`, until it closes the connection. */
function plainTextSession(text: string): Promise<string> {
	return new Promise((resolve, reject) => {
		let said = "";
		const socket = net.connect({ host: "127.0.0.1", port }, () => socket.write(text));
		socket.setTimeout(10000, () => socket.destroy(new Error(`no close within 10 s; said: ${said}`)));
		socket.on("data", (chunk) => (said += chunk.toString()));
		socket.once("error", reject);
		socket.once("close", () => resolve(said));
	});
}

function client(options: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
	return connect({ servers: `127.0.0.1:${port}`, reconnect: false, timeout: 5000, ...options });
}

const trusted = () => client({ tls: { caFile: certificates.ca } });

suite("NATS over TLS", () => {
	beforeAll(async () => {
		dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-nats-tls-"));
		certificates = makeCertificates(dir);
		[port, monitorPort] = [await freePort(), await freePort()];
		natsServer = spawn(
			NATS_SERVER,
			[
				...["-a", "127.0.0.1", "-p", String(port), "-m", String(monitorPort)],
				...["--tls", "--tlscert", certificates.cert, "--tlskey", certificates.key],
				...["-js", "-sd", path.join(dir, "js")],
			],
			{ stdio: "ignore" },
		);
		const server = natsServer;
		await pollUntil("the TLS nats-server to accept a client that trusts its CA", 15000, async () => {
			if (server.exitCode !== null) throw new Error(`nats-server exited with ${server.exitCode}`);
			const connection = await trusted().catch(() => null);
			if (!connection) return undefined;
			await (await connection.jetstreamManager()).getAccountInfo();
			await connection.close();
			return true;
		});
		cluster = await startSeededCluster({
			// Two processes: the channel's publisher (participants) and its consumer (lookup) in different ones.
			topology: { gateway: "api,lookup,accounts", core: "catalog,participants,accessPoints,audit" },
			env: {
				TRANSPORTER: `tls://127.0.0.1:${port}`,
				NATS_TLS_CA_FILE: certificates.ca,
				CACHER: REDIS_URL,
			},
		});
	}, 300000);

	afterAll(async () => {
		await cluster?.stop();
		if (natsServer && natsServer.exitCode === null && natsServer.signalCode === null) {
			const exited = new Promise((resolve) => natsServer?.once("exit", resolve));
			natsServer.kill("SIGTERM");
			await exited;
		}
		if (dir) fs.rmSync(dir, { recursive: true, force: true });
	});

	test("a participant registered through the API reaches the organization lookup, through the durable channel", async () => {
		const running = cluster as Cluster;
		const organization = `tls-${running.namespace}`;
		const added = await new Participants(running).add(organization, FREE_PROCESSES.slice(0, 2));
		expect(added.status).toBe(201);
		const url = `${running.url}/rest/api/organizations/${encodeURIComponent(qid(organization))}/processes`;
		const answer = await pollUntil("the lookup to answer the new participant", 20000, async () => {
			const found = await send(url, { headers: { Accept: LOOKUP } });
			return found.status === 200 ? found : undefined;
		});
		expect((answer.body as { identifier: string }[]).map((process) => process.identifier).sort()).toEqual(
			FREE_PROCESSES.slice(0, 2).sort(),
		);

		// The change went through JetStream over TLS: the channel's stream holds it and the lookup's consumer took it.
		const connection = await trusted();
		try {
			const manager = await connection.jetstreamManager();
			const streams = await manager.streams.list().next();
			const changes = streams.find(
				(stream) =>
					stream.config.name.includes(running.namespace) &&
					stream.config.name.endsWith("participants_changed") &&
					!stream.config.name.includes("FAILED"),
			);
			expect(changes?.state.messages).toBeGreaterThan(0);
			const name = changes?.config.name as string;
			await pollUntil("the lookup's consumer to have taken every change", 20000, async () => {
				const [consumer] = await manager.consumers.list(name).next();
				const stream = await manager.streams.info(name);
				return consumer &&
					consumer.delivered.stream_seq >= stream.state.last_seq &&
					consumer.num_pending === 0 &&
					consumer.num_ack_pending === 0
					? true
					: undefined;
			});
		} finally {
			await connection.close();
		}
	});

	test("every NATS connection of the registry is a TLS one: the transporter's and the channels'", async () => {
		const connz = (await (await fetch(`http://127.0.0.1:${monitorPort}/connz?limit=1000`)).json()) as {
			connections: { name?: string; tls_version?: string }[];
		};
		const names = connz.connections.map((connection) => connection.name ?? "");
		// Two registry processes and the test's own node: a transporter and a channels connection each.
		expect(names.filter((name) => name === "registry-transporter").length).toBeGreaterThanOrEqual(3);
		expect(names.filter((name) => name === "registry-channels").length).toBeGreaterThanOrEqual(3);
		expect(connz.connections.length).toBeGreaterThanOrEqual(6);
		for (const connection of connz.connections) expect(connection.tls_version).toMatch(/^1\.[23]$/);
	});

	test("a client that does not trust the CA is refused, and so is one that speaks plain text", async () => {
		await expect(client()).rejects.toMatchObject({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
		// Plain text: the server announces that it requires TLS and answers nothing but an error.
		const plain = await plainTextSession(`CONNECT {"verbose":false}\r\nPING\r\n`);
		expect(plain).toMatch(/^INFO .*"tls_required":true/);
		expect(plain).not.toContain("PONG");
		// Trusting the CA is what lets a client in.
		await (await trusted()).close();
	});
});
