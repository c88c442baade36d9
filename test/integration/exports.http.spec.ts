/**
 * The admin bulk export (GET /rest/api/exports/participants, application/x-ndjson) through
 * the real gateway: in one process, and in the distributed project across NATS, where the
 * action's stream travels over the transporter. More participants than one store page and
 * one stream chunk, so the answer is many chunks. In the distributed project the operator
 * tools join the cluster (TRANSPORTER, NAMESPACE): the CLI exports the same participants, and
 * the REPL (`npm run repl`) lists the nodes and calls an action.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { brokerEnv } from "../../src/platform/broker";
import { addParticipants, DEMO_PROVIDER } from "../support/bulk";
import { basic, TOPOLOGY, type RunningRegistry, REGISTRY_START_TIMEOUT_MS, startRegistry } from "../support/registry";
import { NATS_URL } from "../support/servers";

const EXPORT = "/rest/api/exports/participants";
const ADMIN = basic("admin", "admin-demo-password");
const DEMO_PARTICIPANTS = 4;
const BULK = 700;

let registry: RunningRegistry;
beforeAll(async () => {
	registry = await startRegistry();
	expect(await addParticipants(registry.broker, BULK)).toBe(BULK);
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

/** The body as text, whatever its media type. */
function text(
	response: NodeJS.ReadableStream & { setEncoding(encoding: string): void },
	callback: (error: Error | null, body: string) => void,
): void {
	let body = "";
	response.setEncoding("utf8");
	response.on("data", (chunk: string) => (body += chunk));
	response.on("end", () => callback(null, body));
}

const exportAs = (authorization: string | null) => {
	const call = request(registry.url)
		.get(EXPORT)
		.buffer(true)
		.parse(text as never);
	return authorization ? call.set("Authorization", authorization) : call;
};

test("ADMIN gets 200 application/x-ndjson: one participant per line, each in the spec's shape, every one once", async () => {
	const response = await exportAs(ADMIN);
	expect(response.status).toBe(200);
	expect(response.headers["content-type"]).toMatch(/^application\/x-ndjson/);
	const body = response.body as string;
	expect(body.endsWith("\n")).toBe(true);
	const lines = body.slice(0, -1).split("\n");
	expect(lines).toHaveLength(DEMO_PARTICIPANTS + BULK);
	const participants = lines.map((line) => JSON.parse(line));
	expect(new Set(participants.map((participant) => participant.identifier)).size).toBe(DEMO_PARTICIPANTS + BULK);
	for (const participant of participants) {
		expect(participant).toEqual({
			identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
			qualifiedIdentifier: `iso6523-actorid-upis::${participant.icd}:${participant.organizationIdentifier}`,
			icd: expect.any(String),
			organizationIdentifier: expect.any(String),
			...(participant.name === undefined ? {} : { name: expect.any(String) }),
			registrationDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
			lastModificationDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
			contact: { name: expect.any(String), email: expect.any(String), phoneNumber: expect.any(String) },
			provider: { identifier: expect.any(String), title: expect.any(String) },
			processes: expect.arrayContaining([{ identifier: expect.any(String) }]),
		});
	}
	expect(
		participants.find((participant) => participant.identifier === "77777777-0000-4000-8000-000000000001"),
	).toMatchObject({
		organizationIdentifier: "991825827",
		provider: { identifier: DEMO_PROVIDER, title: "Nordlys E-faktura AS" },
		processes: [
			{ identifier: "55555555-0000-4000-8000-000000000001" },
			{ identifier: "55555555-0000-4000-8000-000000000006" },
		],
	});
});

test.each([
	["SERVICE_PROVIDER", basic("sp1", "sp1-demo-password")],
	["NETWORK_AUTHORITY", basic("authority", "authority-demo-password")],
	["ACCESS_POINT_PROVIDER", basic("app1", "app1-demo-password")],
])("%s gets 403", async (_role, authorization) => {
	const response = await request(registry.url).get(EXPORT).set("Authorization", authorization);
	expect(response.status).toBe(403);
	expect(response.body.exception).toBe("AccessDeniedException");
});

test("anonymous gets 401", async () => {
	const response = await request(registry.url).get(EXPORT);
	expect(response.status).toBe(401);
	expect(response.headers["www-authenticate"]).toMatch(/^Basic/);
});

const inCluster = TOPOLOGY === "distributed" ? test : test.skip;

inCluster(
	"the operator CLI joins the cluster (TRANSPORTER, NAMESPACE), exports the same participants and imports them back unchanged",
	() => {
		const cli = path.join(__dirname, "..", "..", "dist", "cli", "registry.js");
		const env = {
			...process.env,
			TRANSPORTER: NATS_URL,
			NAMESPACE: registry.broker.namespace,
			CLUSTER_KEY: brokerEnv(registry.broker).CLUSTER_KEY,
			DATA_DIR: ":memory:",
			LOG_LEVEL: "error",
		};
		const result = spawnSync(process.execPath, [cli, "export"], {
			env,
			encoding: "utf8",
			maxBuffer: 64 * 1024 * 1024,
			timeout: 120000,
		});
		expect(result.stderr).toContain("exported");
		expect(result.status).toBe(0);
		const records = result.stdout
			.trimEnd()
			.split("\n")
			.map((line) => JSON.parse(line));
		expect(records.filter((record) => record.type === "participant")).toHaveLength(DEMO_PARTICIPANTS + BULK);
		expect(
			records
				.filter((record) => record.type === "account")
				.map((record) => record.username)
				.sort(),
		).toEqual(["admin", "app1", "authority", "sp1", "sp2"]);

		// The same file imported through the cluster's services: checked (a dry run over NATS), then nothing to change.
		const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "registry-export-")), "registry.ndjson");
		fs.writeFileSync(file, result.stdout);
		const imported = spawnSync(process.execPath, [cli, "import", file], { env, encoding: "utf8", timeout: 120000 });
		expect(imported.stderr).toContain(`participant: 0 created, 0 updated, ${DEMO_PARTICIPANTS + BULK} unchanged`);
		expect(imported.status).toBe(0);
		fs.rmSync(path.dirname(file), { recursive: true, force: true });
	},
);

inCluster(
	"the REPL (npm run repl) joins the cluster with no services of its own: nodes, a call answers, and `operator` calls a table action as the operator",
	async () => {
		const env = {
			...process.env,
			TRANSPORTER: NATS_URL,
			NAMESPACE: registry.broker.namespace,
			CLUSTER_KEY: brokerEnv(registry.broker).CLUSTER_KEY,
			LOG_LEVEL: "error",
		};
		const repl = spawn(process.execPath, [path.join(__dirname, "..", "..", "dist", "cli", "repl.js")], {
			env,
			stdio: ["pipe", "pipe", "pipe"],
		});
		let output = "";
		repl.stdout.on("data", (chunk) => (output += chunk));
		repl.stderr.on("data", (chunk) => (output += chunk));
		const exited = new Promise<number | null>((resolve) => repl.once("exit", (code) => resolve(code)));
		const waitFor = async (text: string) => {
			const deadline = Date.now() + 30000;
			while (!output.includes(text)) {
				if (Date.now() > deadline) throw new Error(`REPL never printed ${text}:\n${output}`);
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
		};
		try {
			await waitFor("joined the cluster");
			repl.stdin.write("nodes\n");
			await waitFor("gateway-");
			repl.stdin.write("call accounts.listServiceProviders\n");
			await waitFor("Nordlys E-faktura AS");
			// A table action needs a signed caller: `operator` names the operator, as the CLI does.
			repl.stdin.write(`operator accounts.findAccounts '{"pageRequest":{"page":0,"size":10,"sort":[]}}'\n`);
			await waitFor("app1");
			repl.stdin.write("quit\n");
			expect(await exited).toBe(0);
		} finally {
			repl.kill();
		}
	},
	60000,
);
