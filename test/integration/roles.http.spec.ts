/**
 * The role matrix (issue 8, spec "Endpoint table" and "Authentication", decisions §3–§4),
 * generated from the operations table: every row (extensions included) × every role, an
 * anonymous caller and wrong credentials, each with a valid request (path values, media
 * types, body). The answer is the row's success status exactly when its roles allow the
 * caller; otherwise 401 (anonymous on a row closed to ANONYMOUS; wrong credentials always)
 * or 403. Calls that change something get fresh records, so that success is possible.
 *
 * Then every provider-scoped operation against another provider's participant: 404 (finds:
 * absent), and not one byte of that participant's data in the answer.
 *
 * The registry runs with high failed-login limits, so the wrong-credential calls lock nobody.
 */
import { SERVICE_SCHEMAS, loadServiceSchema } from "../../services";
import { API_BASE, OPERATIONS, type Operation } from "../../src/contract/operations";
import type { Role } from "../../src/contract/model";
import { errorAnswerProblems, rawRequest, type RawAnswer, type RawRequest } from "../support/raw-http";
import {
	basic,
	demoAccount,
	demoAuth,
	demoSeed,
	REGISTRY_START_TIMEOUT_MS,
	startRegistry,
	type RunningRegistry,
} from "../support/registry";

// seed/demo.json (docs/demo-data.md)
const ACCESS_POINT = "33333333-0000-4000-8000-000000000001";
const DOCUMENT_TYPE = "66666666-0000-4000-8000-000000000001";
const BILLING = "55555555-0000-4000-8000-000000000001";
const ORDERING = "55555555-0000-4000-8000-000000000003";
const SP1_PARTICIPANT = "77777777-0000-4000-8000-000000000001";
const SMP_INVOICE =
	"busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1";
const SP1_QUALIFIED = "iso6523-actorid-upis::0192:991825827";
const FOREIGN_PARTICIPANT = "77777777-0000-4000-8000-000000000003"; // sp2's Havblikk Fiskeri AS
const FOREIGN_ORGANIZATION = "986252932";
const TRANSFER_TARGET = "11111111-0000-4000-8000-000000000003"; // a provider without account or participants

const contact = { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" };

interface Caller {
	name: string;
	/** The role, or null for anonymous and for wrong credentials. */
	role: Role | null;
	authorization?: string;
	wrongCredentials?: boolean;
}

const CALLERS: Caller[] = [
	...(["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", "ADMIN", "NETWORK_AUTHORITY"] as Role[]).map((role) => ({
		name: role,
		role,
		authorization: demoAuth(role),
	})),
	{ name: "anonymous", role: null },
	{
		name: "wrong password of a known account",
		role: null,
		authorization: basic(demoAccount("ADMIN").username, "not-the-admin-password"),
		wrongCredentials: true,
	},
	{
		name: "unknown username",
		role: null,
		authorization: basic("nobody-by-that-name", "whatever-password"),
		wrongCredentials: true,
	},
];

function expectedStatus(operation: Operation, caller: Caller): number {
	if (caller.wrongCredentials) return 401;
	if (!caller.role) return operation.roles.includes("ANONYMOUS") ? operation.status : 401;
	return operation.roles.includes(caller.role) ? operation.status : 403;
}

/** Whether the table's action is implemented by a service this registry runs (extensions land one by one). */
function implemented(operation: Operation): boolean {
	const [service, action] = operation.action.split(".");
	if (!SERVICE_SCHEMAS[service]) return false;
	// Actions of the schema itself or of one of its mixins (participants' transfers come from one).
	const schema = loadServiceSchema(service) as {
		actions?: Record<string, unknown>;
		mixins?: { actions?: Record<string, unknown> }[];
	};
	return [schema, ...(schema.mixins ?? [])].some((part) => Boolean(part.actions?.[action]));
}

let registry: RunningRegistry;
let admin: string;
let sp1: string;
let sp2: string;
let counter = 0;

beforeAll(async () => {
	registry = await startRegistry({ env: { AUTH_USER_MAX_FAILURES: "100000", AUTH_ADDRESS_MAX_FAILURES: "100000" } });
	admin = demoAuth("ADMIN");
	sp1 = demoAuth("SERVICE_PROVIDER", 0);
	sp2 = demoAuth("SERVICE_PROVIDER", 1);
}, REGISTRY_START_TIMEOUT_MS);
afterAll(() => registry?.stop());

function send(request: RawRequest): Promise<RawAnswer> {
	return rawRequest(registry.url, request);
}

function json(
	request: Omit<RawRequest, "body" | "headers">,
	authorization: string | undefined,
	mediaType: string,
	body?: unknown,
): RawRequest {
	const headers: Record<string, string> = { Accept: mediaType };
	if (authorization) headers.Authorization = authorization;
	if (body !== undefined) headers["Content-Type"] = mediaType;
	return {
		...request,
		path: `${API_BASE}${request.path}`,
		headers,
		body: body === undefined ? undefined : JSON.stringify(body),
	};
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function created(request: RawRequest): Promise<Record<string, any>> {
	const answer = await send(request);
	if (answer.status !== 201)
		throw new Error(`fixture ${request.method} ${request.path}: ${answer.status} ${answer.text}`);
	return JSON.parse(answer.text);
}

const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

async function newDocumentType(): Promise<string> {
	const name = unique("roles-doctype");
	const body = { title: name, qualifiedIdentifier: `busdox-docid-qns::${name}`, visible: true };
	return (
		await created(
			json(
				{ method: "POST", path: "/document-types" },
				admin,
				"application/vnd.registry.document-types.add.v1+json",
				body,
			),
		)
	).identifier;
}

async function newAccount(): Promise<string> {
	const body = { username: unique("roles-account"), password: "roles-account-password", role: "NETWORK_AUTHORITY" };
	return (
		await created(
			json({ method: "POST", path: "/accounts" }, admin, "application/vnd.registry.accounts.add.v1+json", body),
		)
	).identifier;
}

async function newProcess(): Promise<string> {
	const name = unique("roles-process");
	const body = { domain: "Roles", title: name, qualifiedIdentifier: `cenbii-procid-ubl::${name}`, visible: true };
	return (
		await created(
			json({ method: "POST", path: "/processes" }, admin, "application/vnd.registry.processes.add.v1+json", body),
		)
	).identifier;
}

/** A participant of sp1 for a new organization. */
async function newParticipant(): Promise<{ identifier: string; qualifiedIdentifier: string }> {
	const body = {
		icd: "0088",
		organizationIdentifier: unique("roles"),
		name: "Roles Test AS",
		processes: [{ identifier: BILLING }],
		contact,
	};
	const participant = await created(
		json({ method: "POST", path: "/participants" }, sp1, "application/vnd.registry.participants.add.v1+json", body),
	);
	return { identifier: participant.identifier, qualifiedIdentifier: participant.qualifiedIdentifier };
}

/** A pending transfer of a new participant of `sender`'s to `receiver`, with its key. */
async function newTransfer(sender: string, receiver: string): Promise<{ identifier: string; key: string }> {
	const owner = await created(
		json({ method: "POST", path: "/participants" }, sender, "application/vnd.registry.participants.add.v1+json", {
			icd: "0088",
			organizationIdentifier: unique("roles-transfer"),
			processes: [{ identifier: BILLING }],
			contact,
		}),
	);
	const body = { participant: owner.identifier, serviceProviderIdentifier: receiver };
	const transfer = await created(
		json({ method: "POST", path: "/transfers" }, sender, "application/vnd.registry.transfers.start.v1+json", body),
	);
	return { identifier: transfer.identifier, key: transfer.key };
}

const JOBS = "/jobs/process-replacements";
const jobMedia = (operation: string) => `application/vnd.registry.jobs.process-replacements.${operation}.v1+json`;

/** Waits until no process replacement job runs (one runs at a time; the ones started here hold nobody and end at once). */
async function jobsIdle(): Promise<void> {
	const deadline = Date.now() + 10000;
	while (Date.now() < deadline) {
		const answer = await send(json({ method: "GET", path: `${JOBS}?size=5` }, admin, jobMedia("find")));
		if (!(JSON.parse(answer.text).content as { state: string }[]).some((job) => job.state === "RUNNING")) return;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	throw new Error("a process replacement job is still running");
}

/** A start request: a dry run from a new process (nobody holds it) to another. */
async function startJobRequest(authorization: string | undefined): Promise<RawRequest> {
	const [from, to] = [await newProcess(), await newProcess()];
	await jobsIdle();
	return json({ method: "POST", path: JOBS }, authorization, jobMedia("start"), { from, to, dryRun: true });
}

/** A finished job to read. */
async function newJob(): Promise<string> {
	const answer = await send(await startJobRequest(admin));
	if (answer.status !== 202) throw new Error(`fixture POST ${JOBS}: ${answer.status} ${answer.text}`);
	const identifier = JSON.parse(answer.text).identifier as string;
	await jobsIdle();
	return identifier;
}

/**
 * A valid request of each operation. `fresh`: the call may change something, so it gets
 * its own new record; otherwise (a caller that will be refused) a shared one will do.
 */
type Builder = (authorization: string | undefined, fresh: boolean) => Promise<RawRequest>;

function sharedOr<T>(make: () => Promise<T>): (fresh: boolean) => Promise<T> {
	let shared: Promise<T> | undefined;
	return (fresh) => (fresh ? make() : (shared ??= make()));
}

function builders(): Record<string, Builder> {
	const documentType = sharedOr(newDocumentType);
	const process = sharedOr(newProcess);
	const participant = sharedOr(newParticipant);
	// SERVICE_PROVIDER is sp1: it sends the transfers it reads and cancels, and receives the ones it completes.
	const sent = sharedOr(() => newTransfer(sp1, demoAccount("SERVICE_PROVIDER", 1).serviceProvider as string));
	const received = sharedOr(() => newTransfer(sp2, demoAccount("SERVICE_PROVIDER", 0).serviceProvider as string));
	const job = sharedOr(newJob);
	const account = sharedOr(newAccount);
	const mediaOf = (id: string) => (OPERATIONS.find((operation) => operation.id === id) as Operation).mediaTypes[0];
	const get = (id: string, path: string) => async (authorization: string | undefined) =>
		json({ method: "GET", path }, authorization, mediaOf(id));
	return {
		findAccessPoints: get("findAccessPoints", "/accessPoints?size=5"),
		getAccessPoint: get("getAccessPoint", `/accessPoints/${ACCESS_POINT}`),
		setAccessPointEndpoints: async (authorization) =>
			json(
				{ method: "PUT", path: `/accessPoints/${ACCESS_POINT}/endpoints` },
				authorization,
				mediaOf("setAccessPointEndpoints"),
				{
					endpoints: [
						{
							url: "https://as4.nordlys-ap.example/as4",
							transportProfile: {
								title: "Peppol AS4 profile v2",
								value: "peppol-transport-as4-v2_0",
								certificateTypes: ["Peppol AP"],
							},
						},
					],
				},
			),
		findDocumentTypes: get("findDocumentTypes", "/document-types?sort=title"),
		getDocumentType: get("getDocumentType", `/document-types/${DOCUMENT_TYPE}`),
		addDocumentType: async (authorization) => {
			const name = unique("roles-new-doctype");
			return json({ method: "POST", path: "/document-types" }, authorization, mediaOf("addDocumentType"), {
				title: name,
				qualifiedIdentifier: `busdox-docid-qns::${name}`,
				visible: true,
				processes: [{ identifier: BILLING }],
			});
		},
		updateDocumentType: async (authorization, fresh) =>
			json(
				{ method: "PUT", path: `/document-types/${await documentType(fresh)}` },
				authorization,
				mediaOf("updateDocumentType"),
				{ title: "Updated by the role matrix", visible: false },
			),
		deleteDocumentType: async (authorization, fresh) =>
			json(
				{ method: "DELETE", path: `/document-types/${await documentType(fresh)}` },
				authorization,
				mediaOf("deleteDocumentType"),
			),
		findOrganizationProcesses: get("findOrganizationProcesses", `/organizations/${SP1_QUALIFIED}/processes`),
		...Object.fromEntries(
			(["peppol", "bdxr"] as const).flatMap((format) => {
				const root = format === "peppol" ? "" : "/bdxr-smp-2";
				const smp = (path: string) => async (authorization: string | undefined) => ({
					method: "GET",
					path: `${root}/${encodeURIComponent(SP1_QUALIFIED)}${path}`,
					headers: { Accept: "text/xml", ...(authorization ? { Authorization: authorization } : {}) },
				});
				return [
					...(format === "peppol"
						? [
								[
									"businessCard",
									async (authorization: string | undefined) => ({
										method: "GET",
										path: `/businesscard/${encodeURIComponent(SP1_QUALIFIED)}`,
										headers: {
											Accept: "text/xml",
											...(authorization ? { Authorization: authorization } : {}),
										},
									}),
								],
							]
						: []),
					[`${format}ServiceGroup`, smp("")],
					[`${format}ServiceMetadata`, smp(`/services/${encodeURIComponent(SMP_INVOICE)}`)],
				];
			}),
		),
		getNetworkState: get("getNetworkState", `/network/${SP1_QUALIFIED}`),
		streamParticipants: get("streamParticipants", "/participants?processes=true"),
		findParticipants: get("findParticipants", "/participants?sort=name&size=5"),
		getParticipantByQualifiedIdentifier: get(
			"getParticipantByQualifiedIdentifier",
			`/participants/${SP1_QUALIFIED}`,
		),
		getParticipant: get("getParticipant", `/participants/${SP1_PARTICIPANT}`),
		addParticipant: async (authorization) =>
			json({ method: "POST", path: "/participants" }, authorization, mediaOf("addParticipant"), {
				icd: "0088",
				organizationIdentifier: unique("roles-add"),
				name: "Roles Add AS",
				processes: [{ identifier: BILLING }],
				contact,
			}),
		updateParticipant: async (authorization, fresh) =>
			json(
				{ method: "PUT", path: `/participants/${(await participant(fresh)).qualifiedIdentifier}` },
				authorization,
				mediaOf("updateParticipant"),
				{
					processes: [{ identifier: BILLING }, { identifier: ORDERING }],
					contact: { ...contact, name: "Ola Nordmann" },
				},
			),
		deleteParticipantByQualifiedIdentifier: async (authorization, fresh) =>
			json(
				{ method: "DELETE", path: `/participants/${(await participant(fresh)).qualifiedIdentifier}` },
				authorization,
				mediaOf("deleteParticipantByQualifiedIdentifier"),
			),
		deleteParticipant: async (authorization, fresh) =>
			json(
				{ method: "DELETE", path: `/participants/${(await participant(fresh)).identifier}` },
				authorization,
				mediaOf("deleteParticipant"),
			),
		getParticipantProcessesByQualifiedIdentifier: get(
			"getParticipantProcessesByQualifiedIdentifier",
			`/participants/${SP1_QUALIFIED}/processes`,
		),
		getParticipantProcesses: get("getParticipantProcesses", `/participants/${SP1_PARTICIPANT}/processes`),
		transferParticipant: async (authorization, fresh) =>
			json(
				{
					method: "PUT",
					path: `/participants/${(await participant(fresh)).qualifiedIdentifier}/transfer/${TRANSFER_TARGET}`,
				},
				authorization,
				mediaOf("transferParticipant"),
			),
		streamProcesses: get("streamProcesses", "/processes"),
		findProcesses: get("findProcesses", "/processes?sort=title,DESC"),
		getProcess: get("getProcess", `/processes/${BILLING}`),
		addProcess: async (authorization) => {
			const name = unique("roles-new-process");
			return json({ method: "POST", path: "/processes" }, authorization, mediaOf("addProcess"), {
				domain: "Roles",
				title: name,
				qualifiedIdentifier: `cenbii-procid-ubl::${name}`,
				requiredICDs: ["0192"],
			});
		},
		updateProcess: async (authorization, fresh) =>
			json(
				{ method: "PUT", path: `/processes/${await process(fresh)}` },
				authorization,
				mediaOf("updateProcess"),
				{ domain: "Roles", title: "Updated by the role matrix", visible: true },
			),
		deleteProcess: async (authorization, fresh) =>
			json(
				{ method: "DELETE", path: `/processes/${await process(fresh)}` },
				authorization,
				mediaOf("deleteProcess"),
			),
		findEvents: get("findEvents", "/events?size=5"),
		exportParticipants: get("exportParticipants", "/exports/participants"),
		findChanges: get("findChanges", "/changes?limit=5"),
		followChanges: get("followChanges", "/changes"),
		startTransfer: async (authorization, fresh) =>
			json({ method: "POST", path: "/transfers" }, authorization, mediaOf("startTransfer"), {
				participant: (await participant(fresh)).identifier,
				serviceProviderIdentifier: TRANSFER_TARGET,
			}),
		findTransfers: get("findTransfers", "/transfers?size=5&state=PENDING"),
		getTransfer: async (authorization) =>
			json(
				{ method: "GET", path: `/transfers/${(await sent(false)).identifier}` },
				authorization,
				mediaOf("getTransfer"),
			),
		completeTransfer: async (authorization, fresh) => {
			const transfer = await received(fresh);
			return json(
				{ method: "POST", path: `/transfers/${transfer.identifier}/complete` },
				authorization,
				mediaOf("completeTransfer"),
				{ key: transfer.key },
			);
		},
		cancelTransfer: async (authorization, fresh) =>
			json(
				{ method: "POST", path: `/transfers/${(await sent(fresh)).identifier}/cancel` },
				authorization,
				mediaOf("cancelTransfer"),
			),
		startProcessReplacement: async (authorization) => startJobRequest(authorization),
		findProcessReplacements: get("findProcessReplacements", `${JOBS}?sort=state&size=5`),
		getProcessReplacement: async (authorization) =>
			json(
				{ method: "GET", path: `${JOBS}/${await job(false)}` },
				authorization,
				mediaOf("getProcessReplacement"),
			),
		findProcessReplacementResults: async (authorization) =>
			json(
				{ method: "GET", path: `${JOBS}/${await job(false)}/results?outcome=REFUSED` },
				authorization,
				mediaOf("findProcessReplacementResults"),
			),
		getOwnAccount: get("getOwnAccount", "/account"),
		findAccounts: get("findAccounts", "/accounts?sort=username&size=5"),
		getAccount: async (authorization) =>
			json({ method: "GET", path: `/accounts/${await account(false)}` }, authorization, mediaOf("getAccount")),
		addAccount: async (authorization) =>
			json({ method: "POST", path: "/accounts" }, authorization, mediaOf("addAccount"), {
				username: unique("roles-add-account"),
				password: "roles-account-password",
				role: "ADMIN",
			}),
		disableAccount: async (authorization, fresh) =>
			json(
				{ method: "POST", path: `/accounts/${await account(fresh)}/disable` },
				authorization,
				mediaOf("disableAccount"),
			),
		resetPassword: async (authorization, fresh) =>
			json(
				{ method: "PUT", path: `/accounts/${await account(fresh)}/password` },
				authorization,
				mediaOf("resetPassword"),
				{ password: "another-roles-password" },
			),
		// Clearing the OAuth client of a demo account nobody maps: the same answer each time.
		setOAuthClient: async (authorization) =>
			json({ method: "PUT", path: "/accounts/app1/oauth-client" }, authorization, mediaOf("setOAuthClient"), {
				oauthClientId: null,
			}),
		findServiceProviders: get("findServiceProviders", "/service-providers?sort=title"),
		getServiceProvider: get("getServiceProvider", `/service-providers/${TRANSFER_TARGET}`),
		setServiceProviderAccessPoints: async (authorization) =>
			json(
				{ method: "PUT", path: `/service-providers/${TRANSFER_TARGET}/access-points` },
				authorization,
				mediaOf("setServiceProviderAccessPoints"),
				{ accessPoints: [{ identifier: ACCESS_POINT }] },
			),
		addServiceProvider: async (authorization) =>
			json({ method: "POST", path: "/service-providers" }, authorization, mediaOf("addServiceProvider"), {
				title: unique("Roles provider"),
			}),
	};
}

const BUILDERS = builders();

test("every row of the operations table has a request here", () => {
	expect(OPERATIONS.map((operation) => operation.id).filter((id) => !BUILDERS[id])).toEqual([]);
});

describe.each(
	OPERATIONS.map(
		(operation) =>
			[
				`${operation.method} ${operation.path} (${operation.id}${operation.extension ? ", extension" : ""})`,
				operation,
			] as const,
	),
)("%s", (_title, operation) => {
	const build = BUILDERS[operation.id];
	for (const caller of CALLERS) {
		const expected = expectedStatus(operation, caller);
		const name = `${caller.name} → ${expected}`;
		if (!build) continue;
		if (expected < 400 && !implemented(operation)) {
			test.todo(`${name} (${operation.action} is not implemented by any service yet)`);
			continue;
		}
		test(name, async () => {
			const request = await build(caller.authorization, expected < 400);
			const answer = await send(request);
			expect({
				status: answer.status,
				body: answer.status === expected ? "" : answer.text.slice(0, 500),
			}).toEqual({ status: expected, body: "" });
			if (expected >= 400) {
				expect(errorAnswerProblems(answer)).toEqual([]);
				expect(JSON.parse(answer.text).exception).toBe(
					expected === 401 ? "AuthenticationException" : "AccessDeniedException",
				);
			} else if (expected === 204) {
				expect(answer.text).toBe("");
			}
		});
	}
});

describe("another provider's participant: 404 or absent, and not one byte of it", () => {
	interface Foreign {
		identifier: string;
		qualifiedIdentifier: string;
		organizationIdentifier: string;
		name: string;
		contact: { name: string; email: string; phoneNumber: string };
	}
	let foreign: Foreign;
	/** An organization both providers serve: sp1's own participant answers, sp2's must not show. */
	let shared: { qualifiedIdentifier: string; mine: string; theirs: Foreign };
	let foreignBefore: string;

	/** The values of `record` an answer must not hold, minus what the request itself sent (paths and messages echo it). */
	function leaks(answer: RawAnswer, record: Foreign, request: RawRequest): string[] {
		const sent = [request.path, decodeURIComponent(request.path)];
		let text = answer.text;
		for (const value of sent) text = text.split(value).join("");
		const pathValues = decodeURIComponent(request.path)
			.split(/[/?&=]/)
			.filter((part) => part.length > 3);
		for (const value of pathValues) text = text.split(value).join("");
		const secrets = [
			record.identifier,
			record.name,
			record.contact.name,
			record.contact.email,
			record.contact.phoneNumber,
			record.organizationIdentifier,
		];
		const lower = text.toLowerCase();
		return secrets.filter((secret) => lower.includes(secret.toLowerCase()));
	}

	async function foreignState(): Promise<string> {
		const answer = await send(
			json(
				{ method: "GET", path: `/participants/${foreign.identifier}` },
				admin,
				"application/vnd.registry.participants.get.v1+json",
			),
		);
		expect(answer.status).toBe(200);
		return answer.text;
	}

	beforeAll(async () => {
		const seeded = (demoSeed().participants as Array<Foreign & { serviceProvider: string; icd: string }>).find(
			(participant) => participant.identifier === FOREIGN_PARTICIPANT,
		) as Foreign & {
			icd: string;
		};
		foreign = {
			...seeded,
			qualifiedIdentifier: `iso6523-actorid-upis::${seeded.icd}:${seeded.organizationIdentifier}`,
		};
		expect(foreign.organizationIdentifier).toBe(FOREIGN_ORGANIZATION);
		const organization = unique("roles-shared");
		const theirs = await created(
			json({ method: "POST", path: "/participants" }, sp2, "application/vnd.registry.participants.add.v1+json", {
				icd: "0088",
				organizationIdentifier: organization,
				name: "Fremmed Leverandør Kunde AS",
				processes: [{ identifier: BILLING }],
				contact: {
					name: "Fremmed Kontaktperson",
					email: "fremmed@sp2-kunde.example",
					phoneNumber: "+47 41 98 76 54",
				},
			}),
		);
		const mine = await created(
			json({ method: "POST", path: "/participants" }, sp1, "application/vnd.registry.participants.add.v1+json", {
				icd: "0088",
				organizationIdentifier: organization,
				name: "Egen Kunde AS",
				processes: [{ identifier: ORDERING }],
				contact,
			}),
		);
		shared = {
			qualifiedIdentifier: mine.qualifiedIdentifier,
			mine: mine.identifier,
			theirs: { ...theirs, organizationIdentifier: `${organization}-not-secret` } as Foreign,
		};
		foreignBefore = await foreignState();
	});

	const GET = "application/vnd.registry.participants.get.v1+json";
	const PROCESSES = "application/vnd.registry.participants.processes.v1+json";
	const scoped: Array<[string, () => RawRequest]> = [
		[
			"get by qualified identifier",
			() => json({ method: "GET", path: `/participants/${foreign.qualifiedIdentifier}` }, sp1, GET),
		],
		["get by UUID", () => json({ method: "GET", path: `/participants/${foreign.identifier}` }, sp1, GET)],
		[
			"get by UUID in upper case",
			() => json({ method: "GET", path: `/participants/${foreign.identifier.toUpperCase()}` }, sp1, GET),
		],
		[
			"processes by qualified identifier",
			() =>
				json({ method: "GET", path: `/participants/${foreign.qualifiedIdentifier}/processes` }, sp1, PROCESSES),
		],
		[
			"processes by UUID",
			() => json({ method: "GET", path: `/participants/${foreign.identifier}/processes` }, sp1, PROCESSES),
		],
		[
			"update by qualified identifier",
			() =>
				json(
					{ method: "PUT", path: `/participants/${encodeURIComponent(foreign.qualifiedIdentifier)}` },
					sp1,
					"application/vnd.registry.participants.update.v1+json",
					{
						processes: [{ identifier: BILLING }],
						contact,
					},
				),
		],
		[
			"transfer by qualified identifier",
			() =>
				json(
					{ method: "PUT", path: `/participants/${foreign.qualifiedIdentifier}/transfer/${TRANSFER_TARGET}` },
					sp1,
					"application/vnd.registry.participants.transfer.v1+json",
				),
		],
		[
			"delete by qualified identifier",
			() =>
				json(
					{ method: "DELETE", path: `/participants/${foreign.qualifiedIdentifier}` },
					sp1,
					"application/vnd.registry.participants.delete.v1+json",
				),
		],
		[
			"delete by UUID",
			() =>
				json(
					{ method: "DELETE", path: `/participants/${foreign.identifier}` },
					sp1,
					"application/vnd.registry.participants.delete.v1+json",
				),
		],
	];

	test.each(scoped)("%s: 404, nothing of it in the answer, the record unchanged", async (_name, build) => {
		const request = build();
		const answer = await send(request);
		expect({ status: answer.status, exception: JSON.parse(answer.text).exception }).toEqual({
			status: 404,
			exception: "NotFoundException",
		});
		expect(errorAnswerProblems(answer)).toEqual([]);
		expect(leaks(answer, foreign, request)).toEqual([]);
		expect(await foreignState()).toBe(foreignBefore);
	});

	const finds: Array<[string, string, string]> = [
		["stream, no query", "/participants?processes=true", "application/vnd.registry.participants.stream.v1+json"],
		[
			"paged, no query",
			"/participants?size=1000&processes=true",
			"application/vnd.registry.participants.find.v1+json",
		],
		[
			"stream, its organization number",
			`/participants?query=${FOREIGN_ORGANIZATION}`,
			"application/vnd.registry.participants.stream.v1+json",
		],
		[
			"paged, its icd:organization number",
			`/participants?query=0192:${FOREIGN_ORGANIZATION}`,
			"application/vnd.registry.participants.find.v1+json",
		],
		[
			"paged, its name words",
			"/participants?query=Havblikk+Fiskeri",
			"application/vnd.registry.participants.find.v1+json",
		],
		["stream, a name prefix", "/participants?query=Hav", "application/vnd.registry.participants.stream.v1+json"],
	];

	test.each(finds)("find (%s): the other provider's participant is absent", async (_name, path, mediaType) => {
		const request = json({ method: "GET", path }, sp1, mediaType);
		const answer = await send(request);
		expect(answer.status).toBe(200);
		const body = JSON.parse(answer.text);
		const items: Array<{ identifier: string; provider?: { identifier: string } }> = Array.isArray(body)
			? body
			: body.content;
		expect(items.map((item) => item.identifier)).not.toContain(foreign.identifier);
		for (const item of items)
			expect(item.provider?.identifier).toBe(demoAccount("SERVICE_PROVIDER", 0).serviceProvider);
		expect(leaks(answer, foreign, request)).toEqual([]);
		expect(leaks(answer, shared.theirs, request)).toEqual([]);
	});

	test("audit events filtered on its participant show nothing of it", async () => {
		const operation = OPERATIONS.find((candidate) => candidate.id === "findEvents");
		if (!operation || !implemented(operation)) return;
		const request = json(
			{ method: "GET", path: `/events?participant=${foreign.identifier}` },
			sp1,
			operation.mediaTypes[0],
		);
		const answer = await send(request);
		expect([200, 404]).toContain(answer.status);
		if (answer.status === 200) expect(JSON.parse(answer.text).content).toEqual([]);
		expect(leaks(answer, foreign, request)).toEqual([]);
	});

	test("an organization both serve: the qualified identifier paths answer the caller's own participant and nothing of the other's", async () => {
		const requests = [
			json({ method: "GET", path: `/participants/${shared.qualifiedIdentifier}` }, sp1, GET),
			json({ method: "GET", path: `/participants/${shared.qualifiedIdentifier}/processes` }, sp1, PROCESSES),
			json(
				{
					method: "GET",
					path: `/participants?query=${encodeURIComponent(shared.qualifiedIdentifier.split("::")[1])}`,
				},
				sp1,
				"application/vnd.registry.participants.stream.v1+json",
			),
			json(
				{ method: "PUT", path: `/participants/${shared.qualifiedIdentifier}` },
				sp1,
				"application/vnd.registry.participants.update.v1+json",
				{
					processes: [{ identifier: ORDERING }],
					contact,
				},
			),
		];
		for (const request of requests) {
			const answer = await send(request);
			expect({ path: request.path, status: answer.status }).toEqual({ path: request.path, status: 200 });
			expect(answer.text).toContain(
				request.method === "GET" && request.path.endsWith("/processes") ? ORDERING : shared.mine,
			);
			expect(answer.text).not.toContain(BILLING);
			expect(leaks(answer, shared.theirs, request)).toEqual([]);
		}
		// The other's participant is untouched by sp1's update of its own.
		const theirs = await send(json({ method: "GET", path: `/participants/${shared.theirs.identifier}` }, sp2, GET));
		expect(JSON.parse(theirs.text)).toMatchObject({
			name: "Fremmed Leverandør Kunde AS",
			processes: [{ identifier: BILLING }],
		});
	});
});
