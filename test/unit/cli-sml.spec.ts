/**
 * `registry sml` (decisions §14) offline against the stand-in SML: `status` shows what differs and
 * changes nothing, `sync` creates what the SML misses and deletes its stray records, `sml` lists
 * the parked deliveries and `sml replay` delivers them again.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { runRegistry } from "../../cli/registry";
import type { CliIO } from "../../cli/registry/io";
import { makeTestPki, missingOpenssl, networkEnv, StandInSml, type TestPki } from "../support/stand-in-network";

jest.setTimeout(180000);

const suite = missingOpenssl().length ? describe.skip : describe;
const DEMO = path.join(__dirname, "..", "..", "seed", "demo.json");
const DEMO_ORGANIZATIONS = ["0192:745707327", "0192:923609016", "0192:986252932", "0192:991825827"];

class Capture extends Writable {
	text = "";
	_write(chunk: Buffer | string, _encoding: string, done: () => void): void {
		this.text += chunk.toString();
		done();
	}
}

suite("registry sml", () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-cli-sml-"));
	let pki: TestPki;
	let sml: StandInSml;

	async function registry(args: string[]): Promise<{ code: number; out: string; err: string }> {
		const [out, err] = [new Capture(), new Capture()];
		const io: CliIO = {
			stdin: Readable.from([""]),
			stdout: out,
			stderr: err,
			env: { ...process.env, ...networkEnv(pki, sml, null), DATA_DIR: dir, TRANSPORTER: "", LOG_LEVEL: "error" },
		};
		const code = await runRegistry(args, io);
		return { code, out: out.text, err: err.text };
	}

	beforeAll(async () => {
		pki = makeTestPki();
		sml = await new StandInSml(pki).start();
		sml.smp = { logicalAddress: "https://smp.registry.example", physicalAddress: "192.0.2.10" };
		// Pages of two: status reads the SML's list to its end.
		sml.pageSize = 2;
		expect((await registry(["seed", DEMO])).code).toBe(0);
	});
	afterAll(async () => {
		await sml.stop();
		fs.rmSync(dir, { recursive: true, force: true });
	});

	it("status shows the organizations the SML misses and its stray records, and changes nothing", async () => {
		sml.participants.add("0192:999999999");
		const calls = sml.calls.length;
		const run = await registry(["sml", "status", "--json"]);
		if (run.code !== 0) throw new Error(run.err);
		expect(run.code).toBe(0);
		const status = JSON.parse(run.out) as { missing: string[]; stray: string[]; registry: number; sml: number };
		expect(status.missing).toEqual(DEMO_ORGANIZATIONS);
		expect(status.stray).toEqual(["0192:999999999"]);
		expect([status.registry, status.sml]).toEqual([4, 1]);
		expect(sml.calls.slice(calls).every((call) => call.operation === "PageRequest")).toBe(true);
		expect([...sml.participants]).toEqual(["0192:999999999"]);
	});

	it("sync creates the missing and deletes the stray", async () => {
		const run = await registry(["sml", "sync"]);
		expect(run.code).toBe(0);
		expect(run.err).toContain("4 created, 1 deleted");
		expect([...sml.participants].sort()).toEqual(DEMO_ORGANIZATIONS);
	});

	it("sml lists no parked delivery when none is; replay says how many were due again", async () => {
		const listed = await registry(["sml", "parked", "--json"]);
		expect([listed.code, JSON.parse(listed.out)]).toEqual([0, []]);
		const replay = await registry(["sml", "replay"]);
		expect([replay.code, replay.err.trim()]).toEqual([0, "0 parked delivery(ies) due again"]);
		expect((await registry(["sml"])).err.trim()).toBe("(none)");
	});
});
