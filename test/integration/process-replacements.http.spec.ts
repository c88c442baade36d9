/**
 * Bulk jobs (docs/decisions.md "Bulk jobs"): an operator replaces a deprecated process with its
 * successor for every participant holding it, first as a dry run, then for real, over HTTP against
 * the real gateway (and again against the cluster). Batches of two with a pause before each, so the
 * job can be watched while it runs: a second start meets the running one (409), and a participant
 * that drops the old process after its batch was read comes out UNCHANGED.
 */
import request from "supertest";
import { organizationNumberSource } from "../support/bulk";
import { demoAuth, REGISTRY_START_TIMEOUT_MS, startRegistry, type RunningRegistry } from "../support/registry";

const JOBS = "/rest/api/jobs/process-replacements";
const MEDIA = (resource: string, operation: string) => `application/vnd.registry.${resource}.${operation}.v1+json`;
const JOB_MEDIA = (operation: string) => MEDIA("jobs.process-replacements", operation);
const BILLING = "55555555-0000-4000-8000-000000000001";
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };
const refs = (...ids: string[]) => ids.map((identifier) => ({ identifier }));
const organizationNumber = organizationNumberSource(34_000_000);
const run = `${process.pid}-${Date.now()}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

interface Holder {
	identifier: string;
	qualifiedIdentifier: string;
	auth: string;
}

let registry: RunningRegistry;
let admin: string;
let authority: string;
let sp1: string;
let sp2: string;
let OLD: string;
let NEW: string;
/** The participants of the story, by role in it. */
const holders: Record<string, Holder> = {};

async function addProcess(title: string, extra: object = {}): Promise<string> {
	const answer = await request(registry.url)
		.post("/rest/api/processes")
		.set({ Authorization: admin, Accept: MEDIA("processes", "add"), "Content-Type": MEDIA("processes", "add") })
		.send({
			domain: "Jobs",
			title,
			qualifiedIdentifier: `cenbii-procid-ubl::${title}-${run}`,
			visible: true,
			...extra,
		});
	expect(answer.status).toBe(201);
	return answer.body.identifier;
}

async function addParticipant(
	auth: string,
	processes: string[],
	icd = "0192",
	organizationIdentifier = organizationNumber(),
): Promise<Holder> {
	const answer = await request(registry.url)
		.post("/rest/api/participants")
		.set({
			Authorization: auth,
			Accept: MEDIA("participants", "add"),
			"Content-Type": MEDIA("participants", "add"),
		})
		.send({
			icd,
			organizationIdentifier,
			name: `Jobbtest ${organizationIdentifier} AS`,
			processes: refs(...processes),
			contact,
		});
	expect(answer.status).toBe(201);
	return { identifier: answer.body.identifier, qualifiedIdentifier: answer.body.qualifiedIdentifier, auth };
}

function start(auth: string | null, body: object) {
	const req = request(registry.url)
		.post(JOBS)
		.set({ Accept: JOB_MEDIA("start"), "Content-Type": JOB_MEDIA("start") });
	return (auth ? req.set("Authorization", auth) : req).send(body);
}

function read(path: string, accept: string, auth: string | null = admin) {
	const req = request(registry.url).get(path).set({ Accept: accept });
	return auth ? req.set("Authorization", auth) : req;
}

async function participant(holder: Holder): Promise<Json> {
	const answer = await read(`/rest/api/participants/${holder.identifier}`, MEDIA("participants", "get"));
	expect(answer.status).toBe(200);
	return answer.body;
}

async function processIdsOf(holder: Holder): Promise<string[]> {
	return ((await participant(holder)).processes as Json[]).map((process) => process.identifier);
}

/** Polls the job until it is no longer RUNNING (no sleeps without a deadline). */
async function finished(identifier: string, timeoutMs = 30_000): Promise<Json> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const answer = await read(`${JOBS}/${identifier}`, JOB_MEDIA("get"), authority);
		expect(answer.status).toBe(200);
		if (answer.body.state !== "RUNNING") return answer.body;
		if (Date.now() > deadline) throw new Error(`job ${identifier} still running: ${JSON.stringify(answer.body)}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

async function resultsOf(identifier: string, query = ""): Promise<Record<string, Json>> {
	const answer = await read(`${JOBS}/${identifier}/results?size=100${query}`, JOB_MEDIA("results"));
	expect(answer.status).toBe(200);
	expect(answer.headers["content-type"]).toBe(`${JOB_MEDIA("results")};charset=UTF-8`);
	const byRole: Record<string, Json> = {};
	for (const result of answer.body.content as Json[]) {
		const role = Object.keys(holders).find((name) => holders[name].identifier === result.participant.identifier);
		byRole[role ?? result.participant.identifier] = result;
	}
	return byRole;
}

async function until<T>(
	what: string,
	probe: () => Promise<T>,
	done: (value: T) => boolean,
	timeoutMs = 15_000,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (done(value)) return value;
		if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(value).slice(0, 2000)}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

beforeAll(async () => {
	registry = await startRegistry({
		env: { PROCESS_REPLACEMENT_BATCH_SIZE: "2", PROCESS_REPLACEMENT_BATCH_DELAY_MS: "1000" },
	});
	admin = demoAuth("ADMIN");
	authority = demoAuth("NETWORK_AUTHORITY");
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
	OLD = await addProcess("EHF Invoicing 2 (deprecated)");
	NEW = await addProcess("EHF Invoicing 3", { requiredICDs: ["0192"] });
	// Claims are worked on in organization order: 0088 first, then the 0192 numbers as handed out,
	// so the first batch of two is the refused ICD and `dropsOld`.
	holders.dropsOld = await addParticipant(sp1, [BILLING, OLD]);
	holders.onlyOld = await addParticipant(sp1, [OLD]);
	holders.withBilling = await addParticipant(sp1, [BILLING, OLD]);
	holders.otherProvider = await addParticipant(sp2, [OLD]);
	holders.holdsBoth = await addParticipant(sp2, [OLD, NEW]);
	holders.wrongIcd = await addParticipant(sp1, [OLD], "0088", `jobs-${run}`);
	// An organization both providers serve: sp2 holds the successor for it, so sp1 may not take it.
	const shared = organizationNumber();
	holders.claimedElsewhere = await addParticipant(sp1, [OLD], "0192", shared);
	holders.claimant = await addParticipant(sp2, [NEW], "0192", shared);
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

describe("refusals before any job starts", () => {
	test("from equal to to, and unknown processes, are validation errors in the spec's shape", async () => {
		const same = await start(admin, { from: OLD, to: OLD });
		expect(same.status).toBe(400);
		expect(same.body).toMatchObject({
			status: 400,
			exception: "MethodArgumentNotValidException",
			path: JOBS,
			message: "Validation failed for object='processReplacementFormDTO'. Error count: 1",
		});
		expect(same.body.errors).toEqual([
			expect.objectContaining({
				objectName: "processReplacementFormDTO",
				field: "to",
				code: "NotSelf",
				rejectedValue: OLD,
				bindingFailure: false,
			}),
		]);

		const unknown = "0f0f0f0f-0000-4000-8000-000000000000";
		const missing = await start(authority, { from: unknown, to: NEW });
		expect(missing.status).toBe(400);
		expect(missing.body.errors).toEqual([
			expect.objectContaining({ field: "from", code: "Exists", rejectedValue: unknown }),
		]);
		const both = await start(admin, { from: OLD, to: "not-a-uuid" });
		expect(both.status).toBe(400);
		expect(both.body.errors).toEqual([expect.objectContaining({ field: "to", code: "Pattern" })]);
		expect((await read(`${JOBS}?size=100`, JOB_MEDIA("find"))).body.totalElements).toBe(0);
	});

	test("a service provider is refused 403, an anonymous caller 401, on every job operation", async () => {
		const sp = await start(sp1, { from: OLD, to: NEW, dryRun: true });
		expect(sp.status).toBe(403);
		expect(sp.body).toMatchObject({ status: 403, exception: "AccessDeniedException" });
		expect((await start(null, { from: OLD, to: NEW, dryRun: true })).status).toBe(401);
		expect((await read(JOBS, JOB_MEDIA("find"), sp2)).status).toBe(403);
		expect((await read(JOBS, JOB_MEDIA("find"), null)).status).toBe(401);
		expect((await read(`${JOBS}/0f0f0f0f-0000-4000-8000-000000000000`, JOB_MEDIA("get"))).status).toBe(404);
	});
});

describe("replacing a deprecated process", () => {
	let dryRun: string;
	let realRun: string;

	test("a dry run says what would happen and changes no participant", async () => {
		const before = await Promise.all(Object.values(holders).map(participant));
		const answer = await start(admin, { from: OLD, to: NEW, dryRun: true });
		expect(answer.status).toBe(202);
		dryRun = answer.body.identifier;
		expect(answer.headers.location).toBe(`${JOBS}/${dryRun}`);
		expect(answer.headers["content-type"]).toBe(`${JOB_MEDIA("start")};charset=UTF-8`);
		expect(answer.body).toMatchObject({
			dryRun: true,
			state: "RUNNING",
			startedBy: "admin",
			from: { identifier: OLD, title: "EHF Invoicing 2 (deprecated)" },
			to: { identifier: NEW, title: "EHF Invoicing 3" },
			progress: { total: 7, done: 0 },
			counts: { replaced: 0, wouldReplace: 0, refused: 0, unchanged: 0 },
		});

		const job = await finished(dryRun);
		expect(job).toMatchObject({
			state: "SUCCEEDED",
			progress: { total: 7, done: 7 },
			counts: { replaced: 0, wouldReplace: 5, refused: 2, unchanged: 0 },
		});
		expect(job.finishedDate >= job.startedDate).toBe(true);
		const results = await resultsOf(dryRun);
		expect(Object.fromEntries(Object.entries(results).map(([role, result]) => [role, result.outcome]))).toEqual({
			dropsOld: "WOULD_REPLACE",
			onlyOld: "WOULD_REPLACE",
			withBilling: "WOULD_REPLACE",
			otherProvider: "WOULD_REPLACE",
			holdsBoth: "WOULD_REPLACE",
			wrongIcd: "REFUSED",
			claimedElsewhere: "REFUSED",
		});
		expect(await Promise.all(Object.values(holders).map(participant))).toEqual(before);
	});

	test("the real run replaces, refuses with the reason, and leaves alone who dropped the process meanwhile; one job at a time", async () => {
		const answer = await start(authority, { from: OLD, to: NEW });
		expect(answer.status).toBe(202);
		realRun = answer.body.identifier;
		expect(answer.body).toMatchObject({ dryRun: false, state: "RUNNING", startedBy: "authority" });

		// While it runs (its first batch is read, then it pauses a second): a second start is 409 ...
		const second = await start(admin, { from: OLD, to: NEW, dryRun: true });
		expect(second.status).toBe(409);
		expect(second.body).toMatchObject({
			status: 409,
			error: "Conflict",
			exception: "ConflictException",
			path: JOBS,
		});
		expect(second.body.message).toContain(realRun);
		// ... and a participant of the first batch drops the old process itself.
		const update = await request(registry.url)
			.put(`/rest/api/participants/${encodeURIComponent(holders.dropsOld.qualifiedIdentifier)}`)
			.set({
				Authorization: sp1,
				Accept: MEDIA("participants", "update"),
				"Content-Type": MEDIA("participants", "update"),
			})
			.send({ processes: refs(BILLING), contact });
		expect(update.status).toBe(200);
		const running = await read(`${JOBS}/${realRun}`, JOB_MEDIA("get"));
		expect(running.body.state).toBe("RUNNING");
		expect(running.headers.etag).toMatch(/^".+"$/);

		const job = await finished(realRun);
		expect(job).toMatchObject({
			state: "SUCCEEDED",
			progress: { total: 7, done: 7 },
			counts: { replaced: 4, wouldReplace: 0, refused: 2, unchanged: 1 },
		});
		expect(job).not.toHaveProperty("failure");
		const results = await resultsOf(realRun);
		expect(Object.fromEntries(Object.entries(results).map(([role, result]) => [role, result.outcome]))).toEqual({
			dropsOld: "UNCHANGED",
			onlyOld: "REPLACED",
			withBilling: "REPLACED",
			otherProvider: "REPLACED",
			holdsBoth: "REPLACED",
			wrongIcd: "REFUSED",
			claimedElsewhere: "REFUSED",
		});
		expect(results.wrongIcd.reason).toMatch(/RequiredICD .*ICD 0088 is not one of 0192/);
		expect(results.claimedElsewhere.reason).toMatch(
			/already registered for organization .* by another service provider/,
		);
		expect(results.dropsOld.reason).toMatch(/no longer holds/);
		expect(results.holdsBoth.reason).toMatch(/already/);
		expect(results.onlyOld).not.toHaveProperty("reason");
		expect(results.onlyOld.participant).toEqual({
			identifier: holders.onlyOld.identifier,
			qualifiedIdentifier: holders.onlyOld.qualifiedIdentifier,
			name: expect.stringMatching(/^Jobbtest /),
		});

		const refused = await resultsOf(realRun, "&outcome=REFUSED");
		expect(Object.keys(refused).sort()).toEqual(["claimedElsewhere", "wrongIcd"]);
		expect((await read(`${JOBS}/${realRun}/results?outcome=DONE`, JOB_MEDIA("results"))).status).toBe(400);

		expect(await processIdsOf(holders.onlyOld)).toEqual([NEW]);
		expect(await processIdsOf(holders.withBilling)).toEqual([BILLING, NEW]);
		expect(await processIdsOf(holders.otherProvider)).toEqual([NEW]);
		expect(await processIdsOf(holders.holdsBoth)).toEqual([NEW]);
		expect(await processIdsOf(holders.dropsOld)).toEqual([BILLING]);
		expect(await processIdsOf(holders.wrongIcd)).toEqual([OLD]);
		expect(await processIdsOf(holders.claimedElsewhere)).toEqual([OLD]);
	});

	test("the lookup answers the successor for the replaced participants' organizations", async () => {
		for (const holder of [holders.onlyOld, holders.otherProvider]) {
			const processes = await until(
				`the lookup of ${holder.qualifiedIdentifier}`,
				async () =>
					(
						(
							await read(
								`/rest/api/organizations/${holder.qualifiedIdentifier}/processes`,
								MEDIA("organizations", "processes"),
								null,
							)
						).body as Json[]
					).map((process) => process.identifier),
				(ids) => ids.includes(NEW),
			);
			expect(processes).toEqual([NEW]);
		}
	});

	test("every replacement is an audited replaceProcess change, in the audit trail and the change feed", async () => {
		const replaced = [holders.onlyOld, holders.withBilling, holders.otherProvider, holders.holdsBoth]
			.map((holder) => holder.identifier)
			.sort();
		const events = await until(
			"replaceProcess events",
			async () =>
				(await read("/rest/api/events?operation=replaceProcess&size=100", MEDIA("events", "find"))).body
					.content as Json[],
			(content) => content.length >= replaced.length,
		);
		expect(events.map((event) => event.resourceId).sort()).toEqual(replaced);
		for (const event of events)
			expect(event).toMatchObject({
				operation: "replaceProcess",
				resource: "participant",
				actor: { username: "authority", role: "NETWORK_AUTHORITY" },
			});
		// A service provider sees its own participants' replacements.
		const own = (await read("/rest/api/events?operation=replaceProcess&size=100", MEDIA("events", "find"), sp2))
			.body.content as Json[];
		expect(own.map((event) => event.resourceId).sort()).toEqual(
			[holders.otherProvider.identifier, holders.holdsBoth.identifier].sort(),
		);

		const changes = await until(
			"replaceProcess changes",
			async () =>
				(
					(await read("/rest/api/changes?after=0&limit=1000", MEDIA("changes", "find"))).body
						.changes as Json[]
				).filter((change) => change.operation === "replaceProcess"),
			(found) => found.length >= replaced.length,
		);
		expect(changes.map((change) => change.identifier).sort()).toEqual(replaced);
		const change = changes.find((candidate) => candidate.identifier === holders.withBilling.identifier) as Json;
		expect(change.record.processes).toEqual(refs(BILLING, NEW));
	});

	test("the jobs are listed newest first; a job read again with its ETag is 304", async () => {
		const page = await read(`${JOBS}?size=10`, JOB_MEDIA("find"));
		expect(page.status).toBe(200);
		expect((page.body.content as Json[]).map((job) => job.identifier)).toEqual([realRun, dryRun]);
		const first = await read(`${JOBS}/${realRun}`, JOB_MEDIA("get"));
		const again = await read(`${JOBS}/${realRun}`, JOB_MEDIA("get")).set("If-None-Match", first.headers.etag);
		expect(again.status).toBe(304);
	});

	test("started again, the job finds only the refused participants: the replaced ones no longer hold the old process", async () => {
		const answer = await start(admin, { from: OLD, to: NEW });
		expect(answer.status).toBe(202);
		expect(answer.body.progress.total).toBe(2);
		const job = await finished(answer.body.identifier);
		expect(job.counts).toEqual({ replaced: 0, wouldReplace: 0, refused: 2, unchanged: 0 });
	});
});
