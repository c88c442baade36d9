import {
	deleteDateViolations,
	isDue,
	organizationViolations,
	processChanges,
	processViolations,
	readParticipantQuery,
	type ProcessFacts,
	type ProcessRuleInput,
} from "../../services/participants/rules";
import { calendarDate } from "../../src/contract/dates";
import { applyChange, organizationAnswer, mergeParticipantSets } from "../../services/lookup/read-model";
import { KeyedMutex } from "../../src/platform/keyed-mutex";
import { CachedResolver } from "../../services/participants/resolver";
import type { Process } from "../../src/contract/model";

const BILLING = "00000000-0000-4000-8000-000000000001";
const ORDERING = "00000000-0000-4000-8000-000000000002";
const LEGACY = "00000000-0000-4000-8000-000000000003";
const NORWAY_ONLY = "00000000-0000-4000-8000-000000000004";
const UNKNOWN = "00000000-0000-4000-8000-0000000000ff";

function facts(identifier: string, extra: Partial<ProcessFacts> = {}): ProcessFacts {
	return { identifier, restricted: false, requiredICDs: [], dependencies: [], ...extra };
}

const KNOWN = new Map<string, ProcessFacts>([
	[BILLING, facts(BILLING)],
	[
		ORDERING,
		facts(ORDERING, { dependencies: [{ identifier: BILLING, qualifiedIdentifier: "cenbii-procid-ubl::billing" }] }),
	],
	[LEGACY, facts(LEGACY, { restricted: true })],
	[NORWAY_ONLY, facts(NORWAY_ONLY, { requiredICDs: ["0192"] })],
]);

function check(input: Partial<ProcessRuleInput>) {
	return processViolations({
		icd: "0192",
		requested: [],
		known: KNOWN,
		current: [],
		heldByOthers: new Set(),
		...input,
	});
}

describe("participant process rules (decisions §6)", () => {
	it("accepts known processes whose dependencies come along", () => {
		expect(check({ requested: [BILLING, ORDERING] })).toEqual([]);
	});

	it("an unknown process is an Exists violation on processes[i].identifier", () => {
		expect(check({ requested: [BILLING, UNKNOWN] })).toEqual([
			expect.objectContaining({
				field: "processes[1].identifier",
				code: "Exists",
				rejectedValue: UNKNOWN,
				bindingFailure: false,
			}),
		]);
	});

	it("a process listed twice is a Unique violation", () => {
		expect(check({ requested: [BILLING, BILLING] })).toEqual([
			expect.objectContaining({ field: "processes[1].identifier", code: "Unique" }),
		]);
	});

	it("a participant whose ICD is not in requiredICDs cannot add the process", () => {
		expect(check({ icd: "0007", requested: [NORWAY_ONLY] })).toEqual([
			expect.objectContaining({ field: "processes[0].identifier", code: "RequiredICD" }),
		]);
		expect(check({ icd: "0192", requested: [NORWAY_ONLY] })).toEqual([]);
	});

	it("a restricted process cannot be newly added, but one the participant holds may stay", () => {
		expect(check({ requested: [LEGACY] })).toEqual([
			expect.objectContaining({ field: "processes[0].identifier", code: "Restricted" }),
		]);
		expect(check({ requested: [LEGACY], current: [LEGACY] })).toEqual([]);
	});

	it("a missing dependency is a Dependency violation that names the dependency", () => {
		const [violation] = check({ requested: [ORDERING] });
		expect(violation).toEqual(
			expect.objectContaining({ field: "processes[0].identifier", code: "Dependency", rejectedValue: ORDERING }),
		);
		expect(violation.defaultMessage).toContain("cenbii-procid-ubl::billing");
	});

	it("a dependency held by another participant of the same organization satisfies the rule", () => {
		expect(check({ requested: [ORDERING], heldByOthers: new Set([BILLING]) })).toEqual([]);
	});
});

describe("organization identifiers (decisions §5)", () => {
	it("ICD 0192 needs a valid MOD11 organization number", () => {
		expect(organizationViolations("0192", "991825827")).toEqual([]);
		expect(organizationViolations("0192", "991825828")).toEqual([
			expect.objectContaining({ field: "organizationIdentifier", code: "OrganizationNumber" }),
		]);
		expect(organizationViolations("0192", "12345")).toHaveLength(1);
	});

	it("other ICDs are not checked beyond their length", () => {
		expect(organizationViolations("0007", "5560360793")).toEqual([]);
	});
});

describe("dates", () => {
	it("answers UTC calendar dates", () => {
		expect(calendarDate("2026-11-22T23:59:59.999Z")).toBe("2026-11-22");
		expect(calendarDate(new Date("2026-01-01T00:00:00Z"))).toBe("2026-01-01");
	});

	it("a deleteDate must be a real calendar date after today; null clears it", () => {
		expect(deleteDateViolations(null, "2026-11-22")).toEqual([]);
		expect(deleteDateViolations(undefined, "2026-11-22")).toEqual([]);
		expect(deleteDateViolations("2026-11-23", "2026-11-22")).toEqual([]);
		expect(deleteDateViolations("2026-11-22", "2026-11-22")).toEqual([
			expect.objectContaining({ field: "deleteDate", code: "Future" }),
		]);
		expect(deleteDateViolations("2026-02-30", "2026-01-01")).toEqual([
			expect.objectContaining({ field: "deleteDate", code: "Pattern" }),
		]);
	});

	it("a participant is due for the sweeper once its deleteDate has arrived", () => {
		expect(isDue("2026-11-22", "2026-11-22")).toBe(true);
		expect(isDue("2026-11-23", "2026-11-22")).toBe(false);
		expect(isDue(null, "2026-11-22")).toBe(false);
	});
});

describe("participant query (decisions §7)", () => {
	it("icd:organizationIdentifier is read as an organization key, case-folded", () => {
		expect(readParticipantQuery("0192:ABC123")).toEqual(
			expect.objectContaining({ organizationKey: "0192:abc123" }),
		);
	});

	it("a single value may be an organization identifier, and is also kept as a name word", () => {
		expect(readParticipantQuery("991825827")).toEqual({
			organizationIdentifier: "991825827",
			words: ["991825827"],
		});
	});

	it("words split on + and spaces", () => {
		expect(readParticipantQuery("Acme+Nordic  Trading")).toEqual({ words: ["Acme", "Nordic", "Trading"] });
		expect(readParticipantQuery("Acme+Nordic")).toEqual({
			organizationIdentifier: "Acme+Nordic",
			words: ["Acme", "Nordic"],
		});
		expect(readParticipantQuery("Acme Nordic")).toEqual({ words: ["Acme", "Nordic"] });
	});

	it("an empty query matches everything", () => {
		expect(readParticipantQuery(undefined)).toBeNull();
		expect(readParticipantQuery("  ")).toBeNull();
	});

	it("pattern characters are kept as data", () => {
		expect(readParticipantQuery(".* (a|b)")?.words).toEqual([".*", "(a|b)"]);
	});
});

describe("process changes of an update", () => {
	it("lists the claims to take and to release", () => {
		expect(processChanges([BILLING, LEGACY], [BILLING, ORDERING])).toEqual({
			added: [ORDERING],
			removed: [LEGACY],
		});
	});
});

describe("lookup read model", () => {
	const change = (participant: string, version: number, processes: string[], deleted = false) => ({
		participant,
		organizationKey: "0192:991825827",
		processes,
		version,
		deleted,
	});

	/** The processes the model answers (every one in the catalog, all visible). */
	const processIdsOf = (doc: Parameters<typeof organizationAnswer>[0]) =>
		organizationAnswer(
			doc,
			new Proxy(new Map(), {
				get: (map, key) =>
					key === "get"
						? (id: string) => ({ identifier: id, qualifiedIdentifier: id })
						: Reflect.get(map, key),
			}) as never,
			false,
		)?.map((process) => process.identifier) ?? null;

	it("keeps only the latest version per participant, so a redelivered or late change is a no-op", () => {
		const first = applyChange(null, change("p1", 2, [BILLING]));
		expect(first).not.toBeNull();
		expect(applyChange(first, change("p1", 2, [BILLING]))).toBeNull();
		expect(applyChange(first, change("p1", 1, [ORDERING]))).toBeNull();
		expect(processIdsOf(applyChange(first, change("p1", 3, [ORDERING])))).toEqual([ORDERING]);
	});

	it("a delete leaves a tombstone: the organization has no participant, and an older change cannot revive it", () => {
		const live = applyChange(null, change("p1", 1, [BILLING]))!;
		const gone = applyChange(live, change("p1", 2, [], true))!;
		expect(processIdsOf(gone)).toBeNull();
		expect(applyChange(gone, change("p1", 1, [BILLING]))).toBeNull();
	});

	it("answers the union of every participant's processes", () => {
		const one = applyChange(null, change("p1", 1, [BILLING]))!;
		const two = applyChange(one, change("p2", 1, [BILLING, ORDERING]))!;
		expect(processIdsOf(two)).toEqual([BILLING, ORDERING].sort());
	});

	it("a rebuild's read merges at each participant's newer version, and removes only those the participants no longer have", () => {
		const model = applyChange(applyChange(null, change("p1", 3, [ORDERING]))!, change("p2", 1, [BILLING]))!;
		const merged = mergeParticipantSets(model, "0192:991825827", [
			{ participant: "p1", organizationKey: "0192:991825827", processes: [BILLING], version: 2 },
			{ participant: "p3", organizationKey: "0192:991825827", processes: [BILLING], version: 1 },
		])!;
		// p1's change applied meanwhile (version 3) is kept; p2 is gone; p3 is new.
		expect(merged.holders.p1).toEqual({ processes: [ORDERING], version: 3 });
		expect(merged.holders.p2).toEqual({ processes: [], version: 2, deleted: true });
		expect(merged.holders.p3).toEqual({ processes: [BILLING], version: 1 });
		expect(
			mergeParticipantSets(merged, "0192:991825827", [
				{ participant: "p1", organizationKey: "0192:991825827", processes: [ORDERING], version: 3 },
				{ participant: "p3", organizationKey: "0192:991825827", processes: [BILLING], version: 1 },
			]),
		).toBeNull();
	});

	it("hides invisible processes, and hidden nested records, from anonymous callers", () => {
		const process = (identifier: string, visible: boolean, qualifiedIdentifier: string): Process => ({
			identifier,
			qualifiedIdentifier,
			domain: "d",
			restricted: false,
			visible,
			capabilities: [],
			documentTypes: [
				{ identifier: "dt1", title: "shown", visible: true },
				{ identifier: "dt2", title: "hidden", visible: false },
			],
			dependencies: [],
			requiredICDs: [],
		});
		const catalog = new Map([
			[BILLING, process(BILLING, true, "b")],
			[ORDERING, process(ORDERING, false, "a")],
		]);
		const holding = (ids: string[]) => applyChange(null, change("p1", 1, ids));
		expect(
			organizationAnswer(holding([BILLING, ORDERING, UNKNOWN]), catalog, false)?.map((p) => p.identifier),
		).toEqual([ORDERING, BILLING]);
		const anonymous = organizationAnswer(holding([BILLING, ORDERING]), catalog, true)!;
		expect(anonymous.map((p) => p.identifier)).toEqual([BILLING]);
		expect(anonymous[0].documentTypes.map((documentType) => documentType.identifier)).toEqual(["dt1"]);
	});
});

describe("cached resolver", () => {
	it("does not keep what a fetch returned after the cache was dropped", async () => {
		let release: () => void = () => undefined;
		let calls = 0;
		const resolver = new CachedResolver<{ identifier: string; title: string }>(async (ids) => {
			calls++;
			if (calls === 1) await new Promise<void>((resolve) => (release = resolve));
			return ids.map((identifier) => ({ identifier, title: `v${calls}` }));
		}, 60_000);
		const pending = resolver.resolve(["x"]);
		await Promise.resolve();
		resolver.clear();
		release();
		expect((await pending).get("x")?.title).toBe("v1");
		expect((await resolver.resolve(["x"])).get("x")?.title).toBe("v2");
		expect((await resolver.resolve(["x"])).get("x")?.title).toBe("v2");
		expect(calls).toBe(2);
	});
});

describe("CachedResolver.known", () => {
	it("answers only when every record is held, and never after a clear()", async () => {
		const resolver = new CachedResolver<{ identifier: string }>(
			async (ids) => ids.map((identifier) => ({ identifier })),
			60_000,
		);
		expect(resolver.known(["a"])).toBeNull();
		await resolver.resolve(["a", "b"]);
		expect([...(resolver.known(["a", "b", "a"]) ?? new Map()).keys()]).toEqual(["a", "b"]);
		expect(resolver.known(["a", "c"])).toBeNull();
		resolver.clear();
		expect(resolver.known(["a"])).toBeNull();
	});
});

describe("CachedResolver's age", () => {
	it("fetches a record again once it is older than its maximum age (an owner's event this node missed)", async () => {
		let calls = 0;
		const resolver = new CachedResolver<{ identifier: string; title: string }>(async (ids) => {
			calls++;
			return ids.map((identifier) => ({ identifier, title: `v${calls}` }));
		}, 50);
		expect((await resolver.resolve(["x"])).get("x")?.title).toBe("v1");
		expect(resolver.known(["x"])?.get("x")?.title).toBe("v1");
		const deadline = Date.now() + 5000;
		while (resolver.known(["x"]) !== null && Date.now() < deadline)
			await new Promise((resolve) => setTimeout(resolve, 10));
		expect((await resolver.resolve(["x"])).get("x")?.title).toBe("v2");
	});
});

describe("keyed mutex", () => {
	it("runs tasks of one key one at a time, in order, and keeps going after a failure", async () => {
		const mutex = new KeyedMutex();
		const log: string[] = [];
		const task =
			(name: string, fail = false) =>
			async () => {
				log.push(`start ${name}`);
				await Promise.resolve();
				log.push(`end ${name}`);
				if (fail) throw new Error(name);
				return name;
			};
		const results = await Promise.allSettled([
			mutex.run("k", task("a", true)),
			mutex.run("k", task("b")),
			mutex.run("other", task("c")),
		]);
		expect(results.map((result) => result.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
		expect(log.indexOf("end a")).toBeLessThan(log.indexOf("start b"));
	});
});
