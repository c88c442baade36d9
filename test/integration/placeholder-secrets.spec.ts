/**
 * A registry process configured for a cluster whose Secret still holds k8s/secret.yaml's
 * placeholder does not start (`node dist/server.js`, as the image runs it): it exits non-zero
 * with a message naming the variable and never its value. The check itself is unit-tested in
 * test/unit/connections.spec.ts.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import globalSetup from "../support/global-setup";

const ROOT = path.join(__dirname, "..", "..");
const DISTINCT_PASSWORD = "CHANGE-ME-then-forgotten-7Hq2";

/** Runs dist/server.js with `env` until it exits (bounded by jest's timeout): its exit code and output. */
function run(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
	const source: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: ":memory:", PORT: "0", LOG_LEVEL: "warn" };
	for (const name of ["TRANSPORTER", "CACHER", "MONGO_URI", "SERVICES", "NAMESPACE", "REGISTRY_SEED"])
		delete source[name];
	const child = spawn(process.execPath, [path.join(ROOT, "dist", "server.js")], {
		cwd: ROOT,
		env: { ...source, ...env },
		stdio: ["ignore", "pipe", "pipe"],
	});
	let output = "";
	child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
	child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
	return new Promise((resolve) => child.once("close", (code) => resolve({ code, output })));
}

beforeAll(() => globalSetup(), 5 * 60 * 1000);

test("a process with TRANSPORTER set and NATS_PASSWORD still the placeholder exits 1 naming NATS_PASSWORD, not its value", async () => {
	// Port 1: no NATS there; the process must stop before it would try to reach one.
	const { code, output } = await run({
		TRANSPORTER: "nats://127.0.0.1:1",
		NATS_USER: "registry",
		NATS_PASSWORD: DISTINCT_PASSWORD,
		SERVICES: "catalog",
	});
	expect(code).toBe(1);
	expect(output).toContain("registry failed to start: NATS_PASSWORD still holds the placeholder CHANGE-ME");
	expect(output).not.toContain(DISTINCT_PASSWORD);
});

test("MONGO_URI with the placeholder password exits 1 naming MONGO_URI, without the URI", async () => {
	const uri = "mongodb://registry:CHANGE-ME@127.0.0.1:1/registry?replicaSet=rs0";
	const { code, output } = await run({ MONGO_URI: uri, SERVICES: "catalog" });
	expect(code).toBe(1);
	expect(output).toContain("MONGO_URI still holds the placeholder CHANGE-ME");
	expect(output).not.toContain("registry:CHANGE-ME@");
});
