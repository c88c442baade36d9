/**
 * Data survives a restart (issue 2): written through the API, the process stopped, started
 * again on the same DATA_DIR, and everything is still there, participants and lookup included.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { demoAuth, startRegistry } from "../support/registry";

const DOCUMENT_TYPES = "/rest/api/document-types";

test("a document type and a participant written before a restart are there after it", async () => {
	const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-restart-"));
	try {
		const first = await startRegistry({ env: { DATA_DIR: dataDir } });
		const created = await request(first.url)
			.post(DOCUMENT_TYPES)
			.set("Authorization", demoAuth("ADMIN"))
			.set("Content-Type", "application/json")
			.send({ title: "Survives restarts", qualifiedIdentifier: "busdox-docid-qns::restart-test", visible: true });
		expect(created.status).toBe(201);
		const participant = await request(first.url)
			.post("/rest/api/participants")
			.set("Authorization", demoAuth("SERVICE_PROVIDER"))
			.set("Content-Type", "application/json")
			.send({
				icd: "0192",
				organizationIdentifier: "974760673",
				name: "Restart Test AS",
				processes: [{ identifier: "55555555-0000-4000-8000-000000000003" }],
				contact: { name: "Kari", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" },
			});
		expect(participant.status).toBe(201);
		await first.stop();
		expect(fs.readdirSync(dataDir).some((file) => file.endsWith(".db"))).toBe(true);

		const second = await startRegistry({ env: { DATA_DIR: dataDir }, seed: false });
		try {
			const read = await request(second.url).get(`${DOCUMENT_TYPES}/${created.body.identifier}`);
			expect(read.status).toBe(200);
			expect(read.body).toMatchObject({
				title: "Survives restarts",
				qualifiedIdentifier: "busdox-docid-qns::restart-test",
			});
			const again = await request(second.url)
				.get("/rest/api/participants/iso6523-actorid-upis::0192:974760673")
				.set("Authorization", demoAuth("SERVICE_PROVIDER"));
			expect(again.status).toBe(200);
			expect(again.body).toMatchObject({ identifier: participant.body.identifier, name: "Restart Test AS" });
			const lookup = await request(second.url).get(
				"/rest/api/organizations/iso6523-actorid-upis::0192:974760673/processes",
			);
			expect(lookup.status).toBe(200);
			expect(lookup.body.map((process: { identifier: string }) => process.identifier)).toEqual([
				"55555555-0000-4000-8000-000000000003",
			]);
		} finally {
			await second.stop();
		}
	} finally {
		fs.rmSync(dataDir, { recursive: true, force: true });
	}
});
