/**
 * Metrics and health on a port of their own (decisions §10; k8s/ sets OPERATIONS_PORT): a
 * registry started as the image starts it answers /metrics and /health/* there, and its API port,
 * the only one the ingress routes, answers them 404. Without OPERATIONS_PORT both stay on PORT
 * (decisions §1).
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import globalSetup from "../support/global-setup";
import { freePort } from "../support/local-network";

const ROOT = path.join(__dirname, "..", "..");

let child: ChildProcess;
let api: string;
let operations: string;

async function ready(url: string): Promise<void> {
	const deadline = Date.now() + 120_000;
	for (;;) {
		if (child.exitCode !== null) throw new Error(`the registry exited with ${child.exitCode}`);
		const status = await fetch(`${url}/health/ready`).then(
			(response) => response.status,
			() => 0,
		);
		if (status === 200) return;
		if (Date.now() > deadline) throw new Error("the registry was not ready in time");
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

beforeAll(
	async () => {
		await globalSetup();
		const [port, operationsPort] = [await freePort(), await freePort()];
		const env: NodeJS.ProcessEnv = {
			...process.env,
			DATA_DIR: ":memory:",
			PORT: String(port),
			OPERATIONS_PORT: String(operationsPort),
			LOG_LEVEL: "warn",
		};
		for (const name of ["TRANSPORTER", "CACHER", "MONGO_URI", "SERVICES", "NAMESPACE", "REGISTRY_SEED"])
			delete env[name];
		child = spawn(process.execPath, [path.join(ROOT, "dist", "server.js"), "--demo-when-empty"], {
			cwd: ROOT,
			env,
			stdio: "ignore",
		});
		api = `http://127.0.0.1:${port}`;
		operations = `http://127.0.0.1:${operationsPort}`;
		await ready(operations);
	},
	5 * 60 * 1000,
);

afterAll(async () => {
	if (child?.exitCode === null) {
		const exited = new Promise((resolve) => child.once("exit", resolve));
		child.kill("SIGTERM");
		await exited;
	}
});

test("the operations port answers /metrics and /health/*; the API port answers them 404 and serves the API", async () => {
	const metrics = await fetch(`${operations}/metrics`);
	expect(metrics.status).toBe(200);
	expect(await metrics.text()).toContain("moleculer_request_total");
	expect((await fetch(`${operations}/health/live`)).status).toBe(200);
	for (const path of ["/metrics", "/health/live", "/health/ready"])
		expect({ path, status: (await fetch(`${api}${path}`)).status }).toEqual({ path, status: 404 });
	const processes = await fetch(`${api}/rest/api/processes`, {
		headers: { Accept: "application/vnd.registry.processes.find.v1+json" },
	});
	expect(processes.status).toBe(200);
	expect((await fetch(`${operations}/rest/api/processes`)).status).toBe(404);
});
