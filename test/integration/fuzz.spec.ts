/**
 * Bad input (issue 8): seeded fast-check properties over every operation of the table,
 * driven over real HTTP with node's http module (and a plain socket for bytes no client
 * sends), so that paths, query strings and headers arrive exactly as generated.
 *
 *   bodies    wrong JSON types in every field, deep nesting (up to 200 000 levels), huge
 *             strings and arrays under and over the 1 MiB limit, unicode and control
 *             characters, `$`-keys and dotted keys, `__proto__` / `constructor` /
 *             `prototype` keys, bodies that are not JSON
 *   paths     every path parameter replaced: invalid percent-encoding, encoded control
 *             characters and slashes, dot segments, unicode, long values, near-misses
 *   queries   duplicate parameters, bracket syntax (`query[$ne]=x`), prototype keys,
 *             regular-expression, FTS and SQL characters, bad numbers and sorts
 *   headers   Accept, Content-Type and Authorization values of every kind
 *   raw       control characters and high bytes in the request line and headers,
 *             malformed headers, chunked bodies with bad chunk sizes, smuggling shapes
 *
 * Every answer is 2xx (the random input happened to be valid) or 4xx, never 5xx; every
 * 4xx has the spec's error shape with the common headers and no stack trace; the stores
 * are unchanged by every request that did not succeed (and by every GET): after each
 * request a snapshot (counts and a SHA-256 over every participant, claim, process,
 * document type, capability, access point, provider and account, read through the
 * services' finds as ADMIN and from the owners' collections) is compared with the one
 * before. At the end the registry still answers /health/ready.
 *
 * A failure names the case as a compact recipe (big values are described, not inlined);
 * rerun with the printed seed and path to replay it.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import type { ServiceBroker } from "moleculer";
import { API_BASE, OPERATIONS, type Operation } from "../../src/contract/operations";
import { callerMeta } from "../../src/platform/caller-signature";
import { errorAnswerProblems, rawRequest, socketRequest, type RawAnswer, type RawRequest } from "../support/raw-http";
import { basic, demoAccount, demoAuth, demoSeed, startRegistry, type RunningRegistry } from "../support/registry";

const SEED = 20261122;
/** Runs per property; about 4 000 requests in all. */
const RUNS = { bodies: 1400, paths: 800, queries: 800, headers: 700, raw: 300 };

// seed/demo.json (docs/demo-data.md)
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
/** Peppol BIS Order Agreement 3.0: no demo participant holds it. */
const UNHELD_PROCESS = "55555555-0000-4000-8000-000000000009";
const SP2_IDENTIFIER = "11111111-0000-4000-8000-000000000002";
const UUIDS: Record<string, string[]> = {
	accessPoint: ["33333333-0000-4000-8000-000000000001", "33333333-0000-4000-8000-000000000003"],
	"document-types": ["66666666-0000-4000-8000-000000000001", "66666666-0000-4000-8000-000000000005"],
	processes: [BILLING, ORDERING, "55555555-0000-4000-8000-000000000010"],
	participants: [
		"77777777-0000-4000-8000-000000000001",
		"77777777-0000-4000-8000-000000000002",
		"77777777-0000-4000-8000-000000000003",
	],
	serviceProviderIdentifier: [
		"11111111-0000-4000-8000-000000000002",
		"11111111-0000-4000-8000-000000000003",
		"11111111-0000-4000-8000-000000000001",
	],
	"service-providers": ["11111111-0000-4000-8000-000000000003", "11111111-0000-4000-8000-000000000001"],
};
/** The demo production access point's certificate (base64 DER), a valid one to send. */
const DEMO_CERTIFICATE = (demoSeed().accessPoints as { endpoints: { certificate: string }[] }[])[0].endpoints[0]
	.certificate;
const QUALIFIED = [
	"iso6523-actorid-upis::0192:991825827",
	"iso6523-actorid-upis::0192:923609016",
	"iso6523-actorid-upis::0192:986252932",
	"ISO6523-ACTORID-UPIS::0088:fuzz",
];
const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };

const AUTH: Record<string, string> = {
	SERVICE_PROVIDER: demoAuth("SERVICE_PROVIDER"),
	ACCESS_POINT_PROVIDER: demoAuth("ACCESS_POINT_PROVIDER"),
	ADMIN: demoAuth("ADMIN"),
	NETWORK_AUTHORITY: demoAuth("NETWORK_AUTHORITY"),
};
const ADMIN_CALLER = { username: demoAccount("ADMIN").username, role: "ADMIN" } as const;

let registry: RunningRegistry;
let broker: ServiceBroker;
let counter = 0;
const statuses = new Map<number, number>();
/** Figures for docs/reliability.md: time spent in requests and in snapshots, the slowest requests. */
const timings = { requestMs: 0, snapshotMs: 0, slowest: [] as Array<{ ms: number; what: string }> };

beforeAll(async () => {
	// Generous failed-login limits: the header property sends wrong credentials on purpose.
	registry = await startRegistry({
		env: { AUTH_USER_MAX_FAILURES: "1000000", AUTH_ADDRESS_MAX_FAILURES: "1000000" },
	});
	broker = registry.broker;
	// Warm the credential cache so that each case costs one request, not one password hash.
	for (const authorization of Object.values(AUTH))
		await rawRequest(registry.url, {
			method: "GET",
			path: `${API_BASE}/processes`,
			headers: { Authorization: authorization },
		});
	baseline = await snapshot();
}, 120000);

afterAll(async () => {
	// eslint-disable-next-line no-console
	console.log(
		`fuzz: ${[...statuses.values()].reduce((a, b) => a + b, 0)} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
	);
	// eslint-disable-next-line no-console
	console.log(
		`fuzz timings: requests ${timings.requestMs} ms, snapshots ${timings.snapshotMs} ms; slowest:\n${timings.slowest.map((entry) => `  ${entry.ms} ms ${entry.what}`).join("\n")}`,
	);
	await registry?.stop();
});

// ---------------------------------------------------------------------------------------
// The store snapshot
// ---------------------------------------------------------------------------------------

interface Snapshot {
	counts: Record<string, number>;
	digests: Record<string, string>;
}

let baseline: Snapshot;

const OWNED: Record<string, string[]> = {
	// Process replacement jobs are left out: a job's own documents change after its 202.
	participants: ["participants", "processClaims", "transfers"],
	catalog: ["processes", "documentTypes", "capabilities"],
	accessPoints: ["accessPoints", "accessPointProviders"],
	accounts: ["accounts", "serviceProviders"],
};

const sha = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("base64");

async function snapshot(): Promise<Snapshot> {
	const asAdmin = { meta: callerMeta(broker, ADMIN_CALLER) };
	const all = { page: 0, size: 1000, sort: [] };
	const [participants, sets, processes, documentTypes, accessPoints] = await Promise.all([
		broker.call<unknown[], object>("participants.stream", { processes: true }, asAdmin),
		broker.call<unknown[], object>("participants.organizationProcessSets", {}),
		broker.call<unknown[], object>("catalog.streamProcesses", {}, asAdmin),
		broker.call<{ content: unknown[]; totalElements: number }, object>(
			"catalog.findDocumentTypes",
			{ pageRequest: all },
			asAdmin,
		),
		broker.call<{ content: unknown[]; totalElements: number }, object>(
			"accessPoints.find",
			{ pageRequest: all },
			asAdmin,
		),
	]);
	const counts: Record<string, number> = {
		participants: participants.length,
		processes: processes.length,
		documentTypes: documentTypes.totalElements,
		accessPoints: accessPoints.totalElements,
	};
	const digests: Record<string, string> = {
		participants: sha(participants),
		participantVersions: sha(sets),
		processes: sha(processes),
		documentTypes: sha(documentTypes),
		accessPoints: sha(accessPoints),
	};
	for (const [service, names] of Object.entries(OWNED)) {
		const collections = (
			broker.getLocalService(service) as unknown as {
				collections: Record<string, { find(query: object): Promise<unknown[]> }>;
			}
		).collections;
		for (const name of names) {
			const docs = await collections[name].find({});
			counts[`${service}.${name}`] = docs.length;
			digests[`${service}.${name}`] = sha(docs);
		}
	}
	return { counts, digests };
}

function changed(before: Snapshot, after: Snapshot): string[] {
	return Object.keys(after.digests)
		.filter((key) => before.digests[key] !== after.digests[key])
		.map((key) => `${key} (count ${before.counts[key] ?? "-"} → ${after.counts[key] ?? "-"})`);
}

// ---------------------------------------------------------------------------------------
// Checking one answer
// ---------------------------------------------------------------------------------------

const WRITES = new Set(["POST", "PUT", "DELETE", "PATCH"]);

/** The checks of every case; returns the problems (fast-check reports them with the recipe). */
async function check(method: string, answer: RawAnswer): Promise<string[]> {
	statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
	const problems: string[] = [];
	if (answer.status >= 500 || answer.status < 200)
		problems.push(`answered ${answer.status}: ${answer.text.slice(0, 300)}`);
	else if (answer.status >= 400) problems.push(...errorAnswerProblems(answer));
	const started = Date.now();
	const after = await snapshot();
	timings.snapshotMs += Date.now() - started;
	if (answer.status < 300 && WRITES.has(method.toUpperCase())) baseline = after;
	else {
		const differences = changed(baseline, after);
		if (differences.length > 0)
			problems.push(`a ${answer.status} ${method} changed the store: ${differences.join(", ")}`);
		baseline = after;
	}
	return problems;
}

/** What node's client accepts in a request target: bytes outside visible ASCII percent-encoded (the raw property sends those). */
function onTheWire(path: string): string {
	return path.replace(/[^\x21-\x7e]/gu, (char) =>
		Buffer.from(char).toString("hex").replace(/../g, "%$&").toUpperCase(),
	);
}

async function sendAndCheck(request: RawRequest): Promise<void> {
	let answer: RawAnswer;
	request = { ...request, path: onTheWire(request.path) };
	try {
		const started = Date.now();
		answer = await rawRequest(registry.url, { ...request, timeoutMs: 20000 });
		const ms = Date.now() - started;
		timings.requestMs += ms;
		timings.slowest = [...timings.slowest, { ms, what: `${answer.status} ${summary(request).slice(0, 160)}` }]
			.sort((a, b) => b.ms - a.ms)
			.slice(0, 5);
	} catch (error) {
		throw new Error(`no answer (${(error as Error).message}) to ${summary(request)}`);
	}
	const problems = await check(request.method, answer);
	if (problems.length > 0) throw new Error(`${summary(request)}\n  → ${answer.status}\n  ${problems.join("\n  ")}`);
}

function summary(request: RawRequest): string {
	const body =
		request.body === undefined
			? ""
			: ` body(${Buffer.byteLength(request.body)} bytes): ${String(request.body).slice(0, 200)}`;
	return `${request.method} ${request.path.slice(0, 300)} headers ${JSON.stringify(request.headers).slice(0, 400)}${body}`;
}

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

const BODY_OPERATIONS = OPERATIONS.filter((operation) => operation.body);
const PATH_OPERATIONS = OPERATIONS.filter((operation) => Object.keys(operation.pathParams).length > 0);
const QUERY_OPERATIONS = OPERATIONS.filter((operation) => operation.method === "GET");

const operationOf = (operations: Operation[]) =>
	fc.nat({ max: operations.length - 1 }).map((index) => operations[index]);

/** The Authorization of a caller the row allows (the first role that is not ANONYMOUS). */
function allowedAuthorization(operation: Operation): string | undefined {
	const role = operation.roles.find((candidate) => candidate !== "ANONYMOUS");
	return role ? AUTH[role] : undefined;
}

const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

/** A valid body for each form; the properties break it. Unique values, so that it may succeed. */
function validBody(objectName: string): Record<string, unknown> {
	switch (objectName) {
		case "documentTypeFormDTO":
			return {
				title: unique("Fuzz document type"),
				qualifiedIdentifier: `busdox-docid-qns::${unique("fuzz")}`,
				visible: true,
				processes: [{ identifier: BILLING }],
			};
		case "processFormDTO":
			return {
				domain: "Fuzz",
				title: unique("Fuzz process"),
				alias: "fuzz",
				qualifiedIdentifier: `cenbii-procid-ubl::${unique("fuzz")}`,
				restricted: false,
				visible: true,
				requiredICDs: ["0192"],
			};
		case "addParticipantFormDTO":
			return {
				icd: "0088",
				organizationIdentifier: unique("fuzz"),
				name: "Fuzz Organisasjon AS",
				processes: [{ identifier: BILLING }],
				contact,
			};
		case "updateParticipantFormDTO":
			return { processes: [{ identifier: BILLING }, { identifier: ORDERING }], contact };
		case "startTransferFormDTO":
			return { participant: QUALIFIED[0], serviceProviderIdentifier: SP2_IDENTIFIER, validDays: 7 };
		case "completeTransferFormDTO":
			return { key: "ABCDE-FGHJK-MNPQR-STVWX" };
		case "processReplacementFormDTO":
			// A process nobody holds: the job ends at once and changes no participant after its 202.
			return { from: UNHELD_PROCESS, to: ORDERING, dryRun: true };
		case "accountFormDTO":
			return {
				username: unique("fuzz-account"),
				password: "fuzz-password-long-enough",
				role: "NETWORK_AUTHORITY",
			};
		case "oauthClientFormDTO":
			return { oauthClientId: unique("fuzz-client") };
		case "passwordFormDTO":
			return { password: "fuzz-password-long-enough" };
		case "serviceProviderFormDTO":
			return { title: unique("Fuzz service provider") };
		case "accessPointEndpointsFormDTO":
			return {
				endpoints: [
					{
						url: "https://as4.nordlys-ap.example/as4",
						transportProfile: {
							title: "Peppol AS4 profile v2",
							value: "peppol-transport-as4-v2_0",
							certificateTypes: ["Peppol AP"],
						},
						certificate: DEMO_CERTIFICATE,
						activationDate: "2026-01-01",
						expirationDate: "2099-12-31T23:59:59Z",
						description: unique("Fuzz endpoint"),
						technicalContactUrl: "https://nordlys-ap.example/support",
					},
				],
			};
		case "serviceProviderAccessPointsFormDTO":
			return { accessPoints: [{ identifier: UUIDS.accessPoint[0] }, { identifier: UUIDS.accessPoint[1] }] };
		default:
			throw new Error(`no valid body for ${objectName}`);
	}
}

const FIELDS: Record<string, string[]> = {
	documentTypeFormDTO: [
		"title",
		"qualifiedIdentifier",
		"visible",
		"processes",
		"processes.0",
		"processes.0.identifier",
	],
	processFormDTO: [
		"domain",
		"title",
		"alias",
		"qualifiedIdentifier",
		"restricted",
		"visible",
		"capabilities",
		"documentTypes",
		"dependencies",
		"dependencies.0",
		"requiredICDs",
		"requiredICDs.0",
	],
	addParticipantFormDTO: [
		"icd",
		"organizationIdentifier",
		"name",
		"processes",
		"processes.0",
		"processes.0.identifier",
		"contact",
		"contact.name",
		"contact.email",
		"contact.phoneNumber",
	],
	updateParticipantFormDTO: [
		"processes",
		"processes.1",
		"processes.0.identifier",
		"contact",
		"contact.name",
		"contact.email",
		"contact.phoneNumber",
		"deleteDate",
	],
	startTransferFormDTO: ["participant", "serviceProviderIdentifier", "effectiveDate", "validDays"],
	completeTransferFormDTO: ["key"],
	processReplacementFormDTO: ["from", "to", "dryRun"],
	accountFormDTO: ["username", "password", "role", "serviceProvider", "accessPointProvider"],
	oauthClientFormDTO: ["oauthClientId"],
	passwordFormDTO: ["password"],
	serviceProviderFormDTO: ["title", "identifier"],
	accessPointEndpointsFormDTO: [
		"endpoints",
		"endpoints.0",
		"endpoints.0.url",
		"endpoints.0.transportProfile",
		"endpoints.0.transportProfile.value",
		"endpoints.0.transportProfile.certificateTypes",
		"endpoints.0.certificate",
		"endpoints.0.activationDate",
		"endpoints.0.expirationDate",
		"endpoints.0.technicalContactUrl",
	],
	serviceProviderAccessPointsFormDTO: [
		"accessPoints",
		"accessPoints.0",
		"accessPoints.0.identifier",
		"accessPoints.1",
	],
};
const EXTRA_KEYS = [
	"$set",
	"$where",
	"$ne",
	"a.b",
	"contact.email",
	"processes.0.identifier",
	"constructor",
	"prototype",
	"toString",
	"hasOwnProperty",
	"valueOf",
	"identifier",
	"version",
	"serviceProvider",
	"provider",
	"registrationDate",
	"_id",
	"body",
	"_rid",
];

const controlChar = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code));
const weirdString = fc.oneof(
	fc.string({ unit: "binary", maxLength: 40 }),
	fc.string({ unit: "grapheme", maxLength: 40 }),
	fc.string({ unit: controlChar, maxLength: 10 }),
	fc.constantFrom(
		"",
		" ",
		"\u0000",
		"\uFEFF",
		"\u202E",
		"\uD800",
		"\uDFFF",
		"𝕏",
		"e\u0301",
		"%",
		"%zz",
		".*",
		"' OR 1=1 --",
		'"',
		"\\",
		"NEAR(a b)",
		"a OR b",
		"*",
		"^",
		"{$ne: null}",
		"../../etc/passwd",
		"<script>alert(1)</script>",
		"null",
		"undefined",
		"NaN",
		"Infinity",
	),
);
const operatorObject = fc.constantFrom<unknown>(
	{ $ne: null },
	{ $gt: "" },
	{ $regex: ".*" },
	{ $where: "1" },
	{ in: [] },
	{ lte: "9999" },
	{ "a.b": 1 },
	[{ $ne: null }],
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
	{ weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
	{ weight: 3, arbitrary: weirdString },
	{ weight: 1, arbitrary: operatorObject },
	{
		weight: 1,
		arbitrary: fc.constantFrom<unknown>(
			null,
			true,
			false,
			0,
			-1,
			1e308,
			-0,
			2 ** 53 + 1,
			[],
			{},
			[null],
			[[]],
			["0192"],
			[{ identifier: BILLING }],
			[{ identifier: "not-a-uuid" }],
			"2999-01-01",
			"2000-01-01",
			"0192",
			"9999",
		),
	},
);

type BodyRecipe =
	| { kind: "none" }
	| { kind: "valid" }
	| { kind: "override"; edits: Array<{ field: string; value: unknown; remove: boolean }> }
	| { kind: "extraKeys"; keys: Array<{ key: string; value: unknown; where: "top" | "contact" | "process" }> }
	| {
			kind: "prototypeKeys";
			key: "__proto__" | "constructor" | "prototype";
			where: "top" | "contact" | "process";
			value: unknown;
	  }
	| { kind: "deep"; depth: number; container: "array" | "object"; field: string | null }
	| { kind: "hugeString"; bytes: number; char: string; field: string }
	| { kind: "hugeArray"; length: number; item: "uuid" | "reference" | "string" | "number" | "nested"; field: string }
	| { kind: "json"; value: unknown }
	| { kind: "text"; text: string };

function bodyRecipe(objectName: string): fc.Arbitrary<BodyRecipe> {
	const field = fc.constantFrom(...FIELDS[objectName]);
	const where = fc.constantFrom<"top" | "contact" | "process">("top", "contact", "process");
	return fc.oneof(
		{ weight: 1, arbitrary: fc.constant<BodyRecipe>({ kind: "valid" }) },
		{ weight: 1, arbitrary: fc.constant<BodyRecipe>({ kind: "none" }) },
		{
			weight: 12,
			arbitrary: fc
				.array(fc.record({ field, value: anyValue, remove: fc.constantFrom(false, false, false, true) }), {
					minLength: 1,
					maxLength: 3,
				})
				.map((edits): BodyRecipe => ({ kind: "override", edits })),
		},
		{
			weight: 3,
			arbitrary: fc
				.array(
					fc.record({
						key: fc.oneof(
							fc.constantFrom(...EXTRA_KEYS),
							fc.string({ maxLength: 8 }).map((key) => `$${key}`),
							fc.string({ maxLength: 8 }).map((key) => `${key}.${key}`),
						),
						value: anyValue,
						where,
					}),
					{ minLength: 1, maxLength: 4 },
				)
				.map((keys): BodyRecipe => ({ kind: "extraKeys", keys })),
		},
		{
			weight: 3,
			arbitrary: fc
				.record({
					key: fc.constantFrom<"__proto__" | "constructor" | "prototype">(
						"__proto__",
						"constructor",
						"prototype",
					),
					where,
					value: fc.oneof(
						anyValue,
						fc.constantFrom<unknown>(
							{ polluted: "yes", isAdmin: true, role: "ADMIN" },
							{ prototype: { polluted: "yes" } },
							{ toString: 1 },
						),
					),
				})
				.map((recipe): BodyRecipe => ({ kind: "prototypeKeys", ...recipe })),
		},
		{
			weight: 2,
			arbitrary: fc
				.record({
					depth: fc.oneof(fc.integer({ min: 60, max: 70 }), fc.constantFrom(1000, 10000, 100000, 200000)),
					container: fc.constantFrom<"array" | "object">("array", "object"),
					field: fc.option(field, { nil: null }),
				})
				.map((recipe): BodyRecipe => ({ kind: "deep", ...recipe })),
		},
		{
			weight: 2,
			arbitrary: fc
				.record({
					bytes: fc.constantFrom(10_000, 500_000, 1_040_000, 1_048_000, 1_049_000, 1_100_000, 2_500_000),
					char: fc.constantFrom("a", "é", "\u0000", "😀", "\\"),
					field,
				})
				.map((recipe): BodyRecipe => ({ kind: "hugeString", ...recipe })),
		},
		{
			weight: 2,
			arbitrary: fc
				.record({
					length: fc.constantFrom(1_000, 15_000, 40_000, 100_000),
					item: fc.constantFrom<"uuid" | "reference" | "string" | "number" | "nested">(
						"uuid",
						"reference",
						"string",
						"number",
						"nested",
					),
					field,
				})
				.map((recipe): BodyRecipe => ({ kind: "hugeArray", ...recipe })),
		},
		{ weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value): BodyRecipe => ({ kind: "json", value })) },
		{
			weight: 2,
			arbitrary: fc
				.oneof(
					fc.string({ maxLength: 60 }),
					fc.string({ unit: "binary", maxLength: 60 }),
					fc.constantFrom(
						"{",
						"[",
						'{"title":',
						"{'title':'x'}",
						'{"title":"x",}',
						"NaN",
						"1e999",
						"-",
						'"\\ud800"',
						"\uFEFF{}",
						"{}\u0000",
						'{"a":1}{"b":2}',
						'{"title":"a","title":1}',
						"null",
						"true",
						"[]",
						"0",
						"",
						" ",
						'{"__proto__":null}',
						'{"constructor":{"prototype":{"x":1}}}',
					),
				)
				.map((text): BodyRecipe => ({ kind: "text", text })),
		},
	);
}

/** Sets a dotted path (`processes.0.identifier`) in a JSON object, creating what is missing. */
function setPath(target: Record<string, unknown>, path: string, value: unknown, remove: boolean): void {
	const parts = path.split(".");
	let node: Record<string, unknown> = target;
	for (const part of parts.slice(0, -1)) {
		if (node[part] === null || typeof node[part] !== "object")
			node[part] = /^\d+$/.test(parts[parts.indexOf(part) + 1] ?? "") ? [] : {};
		node = node[part] as Record<string, unknown>;
	}
	const last = parts[parts.length - 1];
	if (remove) delete node[last];
	else node[last] = value;
}

const PLACEHOLDER = "\u0000fuzz-placeholder\u0000";

/** A JSON text with `raw` (text) at a field of the valid body (or as the whole body when field is null). */
function withRawAt(objectName: string, field: string | null, raw: string): string {
	if (field === null) return raw;
	const body = validBody(objectName);
	setPath(body, field, PLACEHOLDER, false);
	return JSON.stringify(body).replace(JSON.stringify(PLACEHOLDER), () => raw);
}

/** Inserts `"key": value` (raw text) into the top-level object, the contact, or the first process reference of a JSON text. */
function injectKey(text: string, where: "top" | "contact" | "process", key: string, valueJson: string): string {
	const entry = `${JSON.stringify(key)}:${valueJson},`;
	if (where === "contact" && text.includes('"contact":{'))
		return text.replace('"contact":{', () => `"contact":{${entry}`);
	if (where === "process" && text.includes('"processes":[{'))
		return text.replace('"processes":[{', () => `"processes":[{${entry}`);
	return `{${entry}${text.slice(1)}`;
}

function materializeBody(objectName: string | undefined, recipe: BodyRecipe): string | undefined {
	const name = objectName ?? "documentTypeFormDTO";
	switch (recipe.kind) {
		case "none":
			return undefined;
		case "valid":
			return JSON.stringify(validBody(name));
		case "override": {
			const body = validBody(name);
			for (const edit of recipe.edits) setPath(body, edit.field, edit.value, edit.remove);
			return JSON.stringify(body);
		}
		case "extraKeys": {
			let text = JSON.stringify(validBody(name));
			for (const { key, value, where } of recipe.keys)
				text = injectKey(text, where, key, JSON.stringify(value ?? null));
			return text;
		}
		case "prototypeKeys":
			return injectKey(
				JSON.stringify(validBody(name)),
				recipe.where,
				recipe.key,
				JSON.stringify(recipe.value ?? null),
			);
		case "deep": {
			const inner =
				recipe.container === "array"
					? "[".repeat(recipe.depth) + "]".repeat(recipe.depth)
					: '{"a":'.repeat(recipe.depth) + "1" + "}".repeat(recipe.depth);
			return withRawAt(name, recipe.field, inner);
		}
		case "hugeString": {
			const unit = JSON.stringify(recipe.char).slice(1, -1);
			const count = Math.max(1, Math.floor(recipe.bytes / Buffer.byteLength(unit)));
			return withRawAt(name, recipe.field, `"${unit.repeat(count)}"`);
		}
		case "hugeArray": {
			const item =
				recipe.item === "uuid"
					? JSON.stringify("55555555-0000-4000-8000-000000000099")
					: recipe.item === "reference"
						? JSON.stringify({ identifier: "55555555-0000-4000-8000-000000000099" })
						: recipe.item === "string"
							? '"0192"'
							: recipe.item === "number"
								? "7"
								: "[[]]";
			return withRawAt(name, recipe.field, `[${new Array(recipe.length).fill(item).join(",")}]`);
		}
		case "json":
			return JSON.stringify(recipe.value);
		case "text":
			return recipe.text;
	}
}

/** A path parameter value: valid for its kind, or broken. Returned as it goes on the wire. */
function pathValue(kind: string, name: string, resource: string): fc.Arbitrary<string> {
	const valid =
		kind === "uuid"
			? fc.constantFrom(...(UUIDS[name] ?? UUIDS[resource] ?? UUIDS.processes))
			: kind === "username"
				? fc.constantFrom("app1", "authority", "sp2")
				: fc.constantFrom(...QUALIFIED);
	return fc.oneof(
		{ weight: 3, arbitrary: valid },
		{ weight: 1, arbitrary: valid.map((value) => value.toUpperCase()) },
		{ weight: 1, arbitrary: valid.map(encodeURIComponent) },
		{ weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 30 }).map(encodeURIComponent) },
		{ weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(..."abcXYZ019-._~:@!$&'()*+,;="), maxLength: 30 }) },
		{
			weight: 2,
			arbitrary: fc.constantFrom(
				"%",
				"%z",
				"%zz",
				"%E0%A4%A",
				"%C0%AF",
				"%ED%A0%80",
				"%FF",
				"%%",
				"%2",
				"a%2Fb",
				"%00",
				"%0A",
				"%0D%0A",
				"%2e%2e",
				"..",
				".",
				"%20",
				"+",
				"%u0041",
				"%F0%9F%98",
			),
		},
		{
			weight: 1,
			arbitrary: fc
				.tuple(valid, fc.constantFrom("%00", "%zz", "x", "%0A", "/../x", "%2F..%2F", ";a=b", "%3B"))
				.map(([value, tail]) => value + tail),
		},
		{ weight: 1, arbitrary: fc.integer({ min: 100, max: 8000 }).map((length) => "x".repeat(length)) },
		{
			weight: 1,
			arbitrary: fc
				.string({ unit: fc.constantFrom("0", "1", "9", "a"), minLength: 1, maxLength: 40 })
				.map((value) => `iso6523-actorid-upis::${value.slice(0, 5)}:${value}`),
		},
		{
			weight: 1,
			arbitrary: fc.constantFrom(
				"{55555555-0000-4000-8000-000000000001}",
				"55555555000040008000000000000001",
				"55555555-0000-4000-8000-00000000000",
				"iso6523-actorid-upis::",
				"iso6523-actorid-upis::0192:",
				"::0192:991825827",
				"iso6523-actorid-upis::01920:1",
				"iso6523-actorid-upis::0192:" + "9".repeat(36),
			),
		},
	);
}

function pathArbitrary(operation: Operation): fc.Arbitrary<string> {
	const resource = operation.path.split("/")[1];
	const entries = Object.entries(operation.pathParams);
	return fc
		.tuple(
			fc.tuple(...entries.map(([name, kind]) => pathValue(kind, name, resource))),
			fc.constantFrom("", "", "", "/", "//"),
		)
		.map(([values, suffix]) => {
			let path = operation.path;
			entries.forEach(([name], index) => {
				path = path.replace(`:${name}`, () => values[index]);
			});
			return `${API_BASE}${path}${suffix}`;
		});
}

const QUERY_KEYS = ["page", "size", "sort", "query", "processes", "participant", "operation", "from", "to"];
const queryKey = fc.oneof(
	{ weight: 6, arbitrary: fc.constantFrom(...QUERY_KEYS) },
	{
		weight: 2,
		arbitrary: fc.constantFrom(
			"query[$ne]",
			"query[]",
			"query[0]",
			"page[0]",
			"sort[]",
			"sort[0][field]",
			"size[$gt]",
			"processes[$ne]",
			"__proto__",
			"__proto__[admin]",
			"constructor[prototype][admin]",
			"prototype",
			"$where",
			"a.b",
			"query.$ne",
			"query%5B%24ne%5D",
			"%zz",
			"",
		),
	},
	{ weight: 1, arbitrary: fc.string({ maxLength: 10 }).map(encodeURIComponent) },
);
const queryValue = fc.oneof(
	fc.constantFrom(
		"0",
		"1",
		"-1",
		"1000",
		"1001",
		"99999999999",
		"1e3",
		"0x10",
		" 5 ",
		"2.5",
		"",
		"true",
		"false",
		"TRUE",
		"yes",
	),
	fc.constantFrom(
		"name",
		"name,DESC",
		"title,asc",
		"qualifiedIdentifier.value",
		"registrationDate,desc",
		"nonexistent",
		",",
		"name,,DESC",
		"DESC",
		"name,title,DESC",
		"__proto__",
		"constructor",
		"toString",
	),
	fc.constantFrom(
		"%zz",
		"%",
		"%E0%A4%A",
		"x%00y",
		".*",
		"(",
		"[",
		"%5C",
		"%25",
		"_",
		"%22",
		"'%20OR%201=1%20--",
		"*",
		"NEAR(",
		"a+OR+b",
		"^",
		"-a",
		"Havblikk+Fiskeri",
		"0192:986252932",
		"986252932",
		"%2B%2B%2B",
		"+++",
		"a%20b",
	),
	fc.string({ unit: "grapheme", maxLength: 20 }).map(encodeURIComponent),
	fc.string({ unit: fc.constantFrom(..."abc019-._~!$'()*,;:@/?"), maxLength: 20 }),
);
const queryArbitrary = fc
	.array(fc.tuple(queryKey, queryValue, fc.boolean()), { maxLength: 8 })
	.chain((pairs) =>
		// Duplicates on purpose: repeat some pairs' keys with other values.
		fc
			.array(fc.tuple(fc.nat({ max: Math.max(0, pairs.length - 1) }), queryValue), {
				maxLength: pairs.length > 0 ? 3 : 0,
			})
			.map((repeats) => [
				...pairs.map(([key, value, bare]) => (bare ? key : `${key}=${value}`)),
				...repeats.map(([index, value]) => `${pairs[index][0]}=${value}`),
			]),
	)
	.map((parts) => (parts.length > 0 ? `?${parts.join("&")}` : ""));

/** Visible ASCII (what a header value may hold on the wire, as node's client checks). */
const headerText = (maxLength: number) =>
	fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength });

function acceptArbitrary(operation: Operation): fc.Arbitrary<string | undefined> {
	const own = operation.mediaTypes[0];
	return fc.oneof(
		{ weight: 5, arbitrary: fc.constant(own) },
		{ weight: 1, arbitrary: fc.constant(undefined) },
		{
			weight: 3,
			arbitrary: fc.constantFrom(
				"*/*",
				"application/json",
				"application/*",
				"text/html",
				"application/xml",
				`${own};charset=UTF-8`,
				`${own};q=0`,
				`${own};q=abc`,
				`${own};q=0.5, */*;q=0.1`,
				`text/html, ${own}`,
				"application/vnd.registry.participants.get.v2+json",
				`${own.toUpperCase()}`,
				",,,",
				";",
				"*/*;q=-1",
				"application/vnd.registry.processes.stream.v1+json, application/vnd.registry.processes.find.v1+json",
				"a/b/c",
				`${"x".repeat(3000)}/${own}`,
			),
		},
		{ weight: 2, arbitrary: headerText(60) },
	);
}

function contentTypeArbitrary(operation: Operation): fc.Arbitrary<string | undefined> {
	const own = operation.mediaTypes[0];
	return fc.oneof(
		{ weight: 5, arbitrary: fc.constantFrom(own, "application/json") },
		{ weight: 1, arbitrary: fc.constant(undefined) },
		{
			weight: 3,
			arbitrary: fc.constantFrom(
				"application/json; charset=utf-8",
				"application/json;charset=UTF-8",
				"application/json; charset=latin1",
				"application/json; charset=utf-16",
				"application/json; charset=bogus",
				"application/json; charset=",
				"text/plain",
				"application/x-www-form-urlencoded",
				"multipart/form-data; boundary=x",
				"application/xml",
				`${own}; charset=iso-8859-1`,
				"APPLICATION/JSON",
				"application/json, text/plain",
				"application/vnd.registry.processes.add.v1+json",
				";",
				"",
			),
		},
		{ weight: 2, arbitrary: headerText(60) },
	);
}

const authorizationArbitrary = (operation: Operation): fc.Arbitrary<string | undefined> =>
	fc.oneof(
		{ weight: 60, arbitrary: fc.constant(allowedAuthorization(operation)) },
		{ weight: 20, arbitrary: fc.constantFrom(undefined, ...Object.values(AUTH)) },
		{
			weight: 12,
			arbitrary: fc.constantFrom(
				"Basic",
				"Basic ",
				"Basic =",
				"Basic ====",
				"Basic !!!",
				"Bearer abc",
				"basic " + Buffer.from("admin").toString("base64"),
				"Digest username=admin",
				"Basic " + "A".repeat(5000),
			),
		},
		{ weight: 5, arbitrary: headerText(80) },
		// Well-formed but wrong (a password hash each, so rare): an empty pair, NULs, a wrong password.
		{
			weight: 1,
			arbitrary: fc.constantFrom(
				"Basic " + Buffer.from(":").toString("base64"),
				"Basic " + Buffer.from("\u0000:\u0000").toString("base64"),
			),
		},
		{
			weight: 2,
			arbitrary: fc
				.string({ unit: "grapheme", maxLength: 12 })
				.map((password) => basic(demoAccount("ADMIN").username, `x${password}`)),
		},
	);

function headers(
	accept: string | undefined,
	contentType: string | undefined,
	authorization: string | undefined,
): Record<string, string> {
	const out: Record<string, string> = {};
	if (accept !== undefined) out.Accept = accept;
	if (contentType !== undefined) out["Content-Type"] = contentType;
	if (authorization !== undefined) out.Authorization = authorization;
	return out;
}

const PARAMETERS = (runs: number) => ({ seed: SEED, numRuns: runs, endOnFailure: true });

// ---------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------

describe(`fuzz (fast-check seed ${SEED})`, () => {
	test(`bodies: ${RUNS.bodies} requests with broken, deep, huge, hostile and non-JSON bodies`, async () => {
		const arbitrary = operationOf(BODY_OPERATIONS).chain((operation) =>
			fc.record({
				operation: fc.constant(operation),
				path: fc.oneof(
					{ weight: 4, arbitrary: pathArbitrary(operation) },
					{ weight: 1, arbitrary: fc.constant(null) },
				),
				body: bodyRecipe((operation.body as { objectName: string }).objectName),
				contentType: fc.oneof(
					{
						weight: 6,
						arbitrary: fc.constantFrom(
							operation.mediaTypes[0],
							"application/json",
							"application/json; charset=utf-8",
						),
					},
					{ weight: 1, arbitrary: contentTypeArbitrary(operation) },
				),
			}),
		);
		await fc.assert(
			fc.asyncProperty(arbitrary, async ({ operation, path, body, contentType }) => {
				const validPath =
					Object.keys(operation.pathParams).length === 0
						? `${API_BASE}${operation.path}`
						: (path ??
							`${API_BASE}${operation.path.replace(/:participant/, QUALIFIED[0]).replace(/:identifier/, operation.path.startsWith("/processes") ? BILLING : UUIDS["document-types"][0])}`);
				await sendAndCheck({
					method: operation.method,
					path: validPath,
					headers: headers(operation.mediaTypes[0], contentType, allowedAuthorization(operation)),
					body: materializeBody(operation.body?.objectName, body),
				});
			}),
			PARAMETERS(RUNS.bodies),
		);
	}, 240000);

	test(`paths: ${RUNS.paths} requests with every path parameter broken`, async () => {
		const arbitrary = operationOf(PATH_OPERATIONS).chain((operation) =>
			fc.record({
				operation: fc.constant(operation),
				path: pathArbitrary(operation),
				method: fc.oneof(
					{ weight: 8, arbitrary: fc.constant(operation.method) },
					{ weight: 1, arbitrary: fc.constantFrom("GET", "PUT", "DELETE", "POST", "PATCH", "OPTIONS") },
				),
				authorization: authorizationArbitrary(operation),
			}),
		);
		await fc.assert(
			fc.asyncProperty(arbitrary, async ({ operation, path, method, authorization }) => {
				const body = operation.body ? JSON.stringify(validBody(operation.body.objectName)) : undefined;
				await sendAndCheck({
					method,
					path,
					headers: headers(
						operation.mediaTypes[0],
						operation.body ? "application/json" : undefined,
						authorization,
					),
					body,
				});
			}),
			PARAMETERS(RUNS.paths),
		);
	}, 240000);

	test(`query strings: ${RUNS.queries} requests with duplicate, bracketed, hostile and malformed parameters`, async () => {
		const arbitrary = operationOf(QUERY_OPERATIONS).chain((operation) =>
			fc.record({
				operation: fc.constant(operation),
				path: pathArbitrary(operation),
				query: queryArbitrary,
				authorization: authorizationArbitrary(operation),
				valid: fc.boolean(),
			}),
		);
		await fc.assert(
			fc.asyncProperty(arbitrary, async ({ operation, path, query, authorization, valid }) => {
				const plain = `${API_BASE}${operation.path
					.replace(/:participant/, QUALIFIED[0])
					.replace(/:qualifiedIdentifier/, QUALIFIED[0])
					.replace(
						/:identifier/,
						operation.path.startsWith("/processes") ? BILLING : UUIDS["document-types"][0],
					)
					.replace(/:accessPoint/, UUIDS.accessPoint[0])}`;
				await sendAndCheck({
					method: "GET",
					path: `${valid ? plain : path}${query}`,
					headers: headers(operation.mediaTypes[0], undefined, authorization),
				});
			}),
			PARAMETERS(RUNS.queries),
		);
	}, 240000);

	test(`headers: ${RUNS.headers} requests with every kind of Accept, Content-Type and Authorization`, async () => {
		const arbitrary = operationOf(OPERATIONS).chain((operation) =>
			fc.record({
				operation: fc.constant(operation),
				accept: acceptArbitrary(operation),
				contentType: contentTypeArbitrary(operation),
				authorization: authorizationArbitrary(operation),
				body: fc.oneof(
					fc.constant<BodyRecipe>({ kind: "valid" }),
					fc.constant<BodyRecipe>({ kind: "none" }),
					fc.constant<BodyRecipe>({ kind: "text", text: "{" }),
				),
			}),
		);
		await fc.assert(
			fc.asyncProperty(arbitrary, async ({ operation, accept, contentType, authorization, body }) => {
				const path = `${API_BASE}${operation.path
					.replace(/:participant/, QUALIFIED[1])
					.replace(/:qualifiedIdentifier/, QUALIFIED[1])
					.replace(/:serviceProviderIdentifier/, UUIDS.serviceProviderIdentifier[1])
					.replace(/:identifier/, "5b0f5a3c-0000-4000-8000-000000000000")
					.replace(/:accessPoint/, UUIDS.accessPoint[0])}`;
				await sendAndCheck({
					method: operation.method,
					path,
					headers: headers(accept, contentType, authorization),
					body: materializeBody(operation.body?.objectName, body),
				});
			}),
			PARAMETERS(RUNS.headers),
		);
	}, 240000);

	test(`raw bytes: ${RUNS.raw} requests no HTTP client would send`, async () => {
		const target = fc.constantFrom(...OPERATIONS).map((operation) => ({
			method: operation.method,
			path: `${API_BASE}${operation.path
				.replace(/:participant/, QUALIFIED[0])
				.replace(/:qualifiedIdentifier/, QUALIFIED[0])
				.replace(/:[A-Za-z]+/g, BILLING)}`,
		}));
		const badByte = fc.oneof(
			controlChar.filter((char) => char !== "\r" && char !== "\n"),
			fc.constantFrom("\u007f", "\u0080", "\u00ff", " ", "\t", "\u00e9"),
		);
		const shape = fc.oneof(
			fc.record({ kind: fc.constant("request line" as const), byte: badByte, at: fc.nat({ max: 40 }) }),
			fc.record({
				kind: fc.constant("header value" as const),
				byte: badByte,
				name: fc.constantFrom("Accept", "Authorization", "Content-Type", "X-Forwarded-For", "Host"),
			}),
			fc.record({
				kind: fc.constant("header name" as const),
				name: fc.constantFrom("Acc ept", "Accept\u0001", "(Accept)", "Accept:", "", "Ä", "X\u007f"),
			}),
			fc.record({
				kind: fc.constant("malformed" as const),
				text: fc.constantFrom(
					"No-Colon-Header",
					" folded: continuation",
					"Content-Length: abc",
					"Content-Length: -1",
					"Content-Length: 1\r\nContent-Length: 2",
					"Transfer-Encoding: chunked\r\nContent-Length: 3",
					"Transfer-Encoding: gzip",
					"Transfer-Encoding: chunked, identity",
					"Host: a\r\nHost: b",
					`X-Big: ${"y".repeat(20000)}`,
				),
			}),
			fc.record({
				kind: fc.constant("chunked" as const),
				chunks: fc.constantFrom(
					"zz\r\n{}\r\n0\r\n\r\n",
					"2\r\n{}\r\n0\r\n\r\n",
					"-1\r\n\r\n",
					"ffffffffffffffff\r\n{}\r\n0\r\n\r\n",
					"2;ext=1\r\n{}\r\n0\r\n\r\n",
					"2\r\n{}0\r\n\r\n",
				),
			}),
			fc.record({
				kind: fc.constant("version" as const),
				line: fc.constantFrom("HTTP/1.0", "HTTP/2.0", "HTTP/1.2", "HTTP/0.9", "http/1.1", "HTTP/1.1 extra", ""),
			}),
		);
		await fc.assert(
			fc.asyncProperty(target, shape, async (request, recipe) => {
				let requestLine = `${request.method} ${request.path} HTTP/1.1`;
				const lines = ["Host: 127.0.0.1", "Connection: close", `Authorization: ${AUTH.ADMIN}`];
				let body = "";
				switch (recipe.kind) {
					case "request line": {
						const at = Math.min(recipe.at, request.path.length);
						requestLine = `${request.method} ${request.path.slice(0, at)}${recipe.byte}${request.path.slice(at)} HTTP/1.1`;
						break;
					}
					case "header value":
						lines.push(`${recipe.name}: a${recipe.byte}b`);
						break;
					case "header name":
						lines.push(`${recipe.name}: x`);
						break;
					case "malformed":
						lines.push(recipe.text);
						break;
					case "chunked":
						lines.push("Transfer-Encoding: chunked", "Content-Type: application/json");
						body = recipe.chunks;
						break;
					case "version":
						requestLine = `${request.method} ${request.path} ${recipe.line}`.trimEnd();
						break;
				}
				const bytes = Buffer.from(`${requestLine}\r\n${lines.join("\r\n")}\r\n\r\n${body}`, "latin1");
				let answer: RawAnswer;
				try {
					answer = await socketRequest(registry.url, bytes, 10000);
				} catch (error) {
					throw new Error(
						`no answer (${(error as Error).message}) to ${JSON.stringify(bytes.toString("latin1").slice(0, 300))}`,
					);
				}
				const problems = await check(request.method, answer);
				if (problems.length > 0)
					throw new Error(
						`${JSON.stringify(bytes.toString("latin1").slice(0, 300))}\n  → ${answer.status}\n  ${problems.join("\n  ")}`,
					);
			}),
			PARAMETERS(RUNS.raw),
		);
	}, 240000);

	test("the regressions the fuzzing found stay fixed", async () => {
		const admin = AUTH.ADMIN;
		const cases: Array<[RawRequest, number, string]> = [
			[{ method: "GET", path: `${API_BASE}/processes/%zz` }, 400, "MethodArgumentTypeMismatchException"],
			[
				{ method: "GET", path: `${API_BASE}/participants/%E0%A4%A`, headers: { Authorization: admin } },
				400,
				"MethodArgumentTypeMismatchException",
			],
			[
				{
					method: "POST",
					path: `${API_BASE}/processes`,
					headers: { Authorization: admin, "Content-Type": "application/json" },
					body: `{"domain":${"[".repeat(10000)}${"]".repeat(10000)}}`,
				},
				400,
				"HttpMessageNotReadableException",
			],
			[
				{
					method: "POST",
					path: `${API_BASE}/document-types`,
					headers: { Authorization: admin, "Content-Type": "application/json" },
					body: `{"title":${'{"a":'.repeat(100000)}1${"}".repeat(100000)}}`,
				},
				400,
				"HttpMessageNotReadableException",
			],
		];
		for (const [request, status, exception] of cases) {
			const answer = await rawRequest(registry.url, request);
			expect({
				path: request.path.slice(0, 40),
				status: answer.status,
				exception: JSON.parse(answer.text).exception,
			}).toEqual({ path: request.path.slice(0, 40), status, exception });
			expect(errorAnswerProblems(answer)).toEqual([]);
		}
		// Amplification: an array too long is one Size violation; many wrong items list 100 of them.
		const longArray = await rawRequest(registry.url, {
			method: "POST",
			path: `${API_BASE}/processes`,
			headers: { Authorization: admin, "Content-Type": "application/json" },
			body: JSON.stringify({ domain: "x", requiredICDs: new Array(100000).fill(7) }),
		});
		expect({
			status: longArray.status,
			errors: JSON.parse(longArray.text).errors.map(
				(error: { field: string; code: string }) => `${error.code} ${error.field}`,
			),
		}).toEqual({
			status: 400,
			errors: ["Size requiredICDs"],
		});
		const manyWrong = await rawRequest(registry.url, {
			method: "POST",
			path: `${API_BASE}/processes`,
			headers: { Authorization: admin, "Content-Type": "application/json" },
			body: JSON.stringify({ domain: "x", requiredICDs: new Array(900).fill("x") }),
		});
		expect({
			status: manyWrong.status,
			message: JSON.parse(manyWrong.text).message,
			listed: JSON.parse(manyWrong.text).errors.length,
		}).toEqual({
			status: 400,
			message: "Validation failed for object='processFormDTO'. Error count: 900",
			listed: 100,
		});
		const raw = await socketRequest(
			registry.url,
			`GET ${API_BASE}/processes/\u0001 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
		);
		expect(raw.status).toBe(400);
		expect(errorAnswerProblems(raw)).toEqual([]);
		const tooLarge = await rawRequest(registry.url, {
			method: "GET",
			path: `${API_BASE}/processes?${"a=1&".repeat(5000)}`,
			headers: { "X-Big": "y".repeat(20000) },
		});
		expect(tooLarge.status).toBe(431);
		expect(errorAnswerProblems(tooLarge)).toEqual([]);
	});

	test("afterwards the registry is ready, answers, and nothing was polluted", async () => {
		const ready = await rawRequest(registry.url, { method: "GET", path: "/health/ready" });
		expect(ready.status).toBe(200);
		const processes = await rawRequest(registry.url, { method: "GET", path: `${API_BASE}/processes/${BILLING}` });
		expect(processes.status).toBe(200);
		const probe: Record<string, unknown> = {};
		for (const key of ["polluted", "isAdmin", "role", "x", "admin"]) expect(probe[key]).toBeUndefined();
		expect(Object.prototype).not.toHaveProperty("polluted");
	});
});
