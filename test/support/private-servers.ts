/**
 * Servers of a test's own, started and stopped by the test: a nats-server with authorization
 * and JetStream (its store in a temporary folder), a redis-server with `requirepass`, each on
 * a free port. Debian's binaries; in CI (CI=true) a missing one is a failure, elsewhere the
 * suite skips and says so (`missingBinaries`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect } from "nats";
import Redis from "ioredis";
import { freePort } from "./local-network";

export const NATS_SERVER = process.env.TEST_NATS_SERVER ?? "/usr/sbin/nats-server";
export const REDIS_SERVER = process.env.TEST_REDIS_SERVER ?? "/usr/bin/redis-server";

function executable(file: string): boolean {
	try {
		fs.accessSync(file, fs.constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/** The binaries among `files` that are not there; throws in CI, where nothing may be skipped. */
export function missingBinaries(...files: string[]): string[] {
	const missing = files.filter((file) => !executable(file));
	if (missing.length && process.env.CI === "true")
		throw new Error(`CI=true and ${missing.join(", ")} missing: install Debian's package (.ci/run)`);
	// eslint-disable-next-line no-console
	if (missing.length) console.warn(`skipped: ${missing.join(", ")} not installed`);
	return missing;
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		if (await check().catch(() => false)) return;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

function stop(child: ChildProcess | null, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
	if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	child.kill(signal);
	const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
	return exited.finally(() => clearTimeout(timer));
}

/** A nats-server with JetStream that accepts one user and password. */
export class PrivateNats {
	private child: ChildProcess | null = null;
	readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-nats-"));
	port = 0;
	constructor(
		readonly user: string,
		readonly password: string,
	) {}

	/** Without credentials: the address the registry gets, and NATS_USER/NATS_PASSWORD beside it. */
	get url(): string {
		return `nats://127.0.0.1:${this.port}`;
	}

	/** With the credentials in the URL (percent-encoded), as an operator may write TRANSPORTER. */
	get urlWithCredentials(): string {
		return `nats://${encodeURIComponent(this.user)}:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}`;
	}

	/**
	 * `manifestConfig`: the nats.conf of k8s/nats.yaml (its port and store moved here), which
	 * reads the user and password from the environment as in the cluster.
	 */
	async start(manifestConfig?: string): Promise<void> {
		this.port = await freePort();
		const config = path.join(this.dir, "nats.conf");
		const store = path.join(this.dir, "js");
		if (manifestConfig) {
			// Its port and store replaced by this server's (listening on the loopback only); no monitoring port;
			// no TLS (its certificates are the cluster's Secret; test/distributed/nats-tls.spec.ts tests TLS).
			const text = manifestConfig
				.replace(/^\s*tls\s*{[^}]*}\s*$/m, "")
				.replace(/^\s*port:.*$/m, `listen: 127.0.0.1:${this.port}`)
				.replace(/^\s*http_port:.*$/m, "")
				.replace(/store_dir:.*$/m, `store_dir: ${JSON.stringify(store)}`);
			fs.writeFileSync(config, text, { mode: 0o600 });
			this.child = spawn(NATS_SERVER, ["-c", config], {
				stdio: "ignore",
				env: { ...process.env, NATS_USER: this.user, NATS_PASSWORD: this.password },
			});
		} else {
			// The password in a config file, not on the command line (where `ps` would show it).
			fs.writeFileSync(
				config,
				`authorization { user: ${JSON.stringify(this.user)}, password: ${JSON.stringify(this.password)} }\n`,
				{ mode: 0o600 },
			);
			this.child = spawn(
				NATS_SERVER,
				["-a", "127.0.0.1", "-p", String(this.port), "-js", "-sd", store, "-c", config],
				{ stdio: "ignore" },
			);
		}
		const child = this.child;
		await until("the private nats-server to accept its user", 15000, async () => {
			if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
			const connection = await connect({
				servers: `127.0.0.1:${this.port}`,
				user: this.user,
				pass: this.password,
				reconnect: false,
			});
			const manager = await connection.jetstreamManager();
			await manager.getAccountInfo();
			await connection.close();
			return true;
		});
	}

	async stop(): Promise<void> {
		await stop(this.child);
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}

/** A redis-server with `requirepass` (no persistence). */
export class PrivateAuthRedis {
	private child: ChildProcess | null = null;
	readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-redis-"));
	port = 0;
	constructor(readonly password: string) {}

	get url(): string {
		return `redis://127.0.0.1:${this.port}`;
	}

	get urlWithCredentials(): string {
		return `redis://:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}`;
	}

	async start(port?: number): Promise<void> {
		this.port = port ?? (await freePort());
		const config = path.join(this.dir, "redis.conf");
		fs.writeFileSync(
			config,
			`port ${this.port}\nbind 127.0.0.1\nsave ""\nappendonly no\ndir ${this.dir}\nrequirepass "${this.password}"\n`,
			{ mode: 0o600 },
		);
		this.child = spawn(REDIS_SERVER, [config], { stdio: "ignore" });
		const child = this.child;
		await until("the private redis-server to accept its password", 10000, async () => {
			if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
			return (await this.command("PING")) === "PONG";
		});
	}

	/** One command as an authenticated client. */
	async command(...args: string[]): Promise<unknown> {
		const client = new Redis({
			host: "127.0.0.1",
			port: this.port,
			password: this.password,
			lazyConnect: true,
			maxRetriesPerRequest: 0,
			enableOfflineQueue: false,
			retryStrategy: () => null,
		});
		client.on("error", () => undefined);
		try {
			await client.connect();
			return await client.call(args[0], ...args.slice(1));
		} finally {
			client.disconnect();
		}
	}

	/** SIGKILL: gone at once, like a crashed server. */
	kill(): Promise<void> {
		return stop(this.child, "SIGKILL");
	}

	async stop(): Promise<void> {
		await stop(this.child);
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}
