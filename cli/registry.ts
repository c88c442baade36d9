#!/usr/bin/env node
/**
 * The operator CLI: `npx registry …` (after `npm run build`) or `npm run registry -- …`.
 * Every command works against the configured store (offline: it starts the services that
 * own what it touches, on DATA_DIR or MONGO_URI) or, with TRANSPORTER set, joins that
 * running cluster and calls its services (cli/registry/connect.ts). docs/operations.md
 * "Operator CLI" lists the commands.
 *
 * Exit codes: 0 done, 1 refused or failed (the reason on stderr, no stack trace), 2 usage.
 * Everything for people goes to stderr; stdout carries only what a command answers (lists,
 * `export` without --out), so it can be piped.
 */
import fs from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { Presets, SingleBar } from "cli-progress";
import type { ServiceBroker } from "moleculer";
import { accountIdentifier, type AccountSummary } from "../services/accounts/accounts.service";
import type { AccessPoint, AccessPointProvider, ServiceProvider } from "../src/contract/model";
import { parseCertificate } from "../src/contract/certificates";
import type { Endpoint } from "../src/contract/endpoints";
import type { Page } from "../src/contract/paging";
import { importSeed } from "../src/exchange/seed";
import { ACCOUNT_ROLES, parseSeed } from "../src/exchange/seed-file";
import type { SeedCounts } from "../src/exchange/upserts";
import { joinsCluster, withRegistry, type RegistryAccess } from "./registry/connect";
import { CliFailure, describeError, EXIT, PROCESS_IO, table, UsageError, writeLine, type CliIO } from "./registry/io";
import { batchSize, exportRegistry, importRegistry, type Progress } from "./registry/ndjson";
import { readNewPassword } from "./registry/password";
import { asOperator } from "./registry/operator";

/** The services that own seed sections, and the lookup whose read model follows participants. */
const SEED_OWNERS = ["accessPoints", "accounts", "catalog", "participants"];
const REBUILD_TIMEOUT_MS = 30 * 60 * 1000;

function progressBar(io: CliIO, label: string): Progress {
	// cli-progress draws only on a terminal; elsewhere (pipes, tests) it stays silent.
	const bar = new SingleBar(
		{
			stream: io.stderr as NodeJS.WritableStream,
			format: `${label} [{bar}] {percentage}% | {value}/{total} records | {eta_formatted}`,
			hideCursor: true,
			etaBuffer: 50,
		},
		Presets.shades_classic,
	);
	let started = false;
	return {
		start(total) {
			bar.start(total, 0);
			started = true;
		},
		increment(by) {
			if (started) bar.increment(by);
		},
		stop() {
			if (started) bar.stop();
			started = false;
		},
	};
}

function describeCounts(name: string, counts: SeedCounts | undefined): string {
	const { created = 0, updated = 0, unchanged = 0 } = counts ?? {};
	return `  ${name}: ${created} created, ${updated} updated, ${unchanged} unchanged`;
}

function printJsonOrTable(io: CliIO, json: boolean, records: unknown[], rows: () => string[][]): void {
	if (json) {
		writeLine(io.stdout, JSON.stringify(records, null, 2));
		return;
	}
	const lines = rows();
	if (lines.length > 1) writeLine(io.stdout, table(lines));
	else writeLine(io.stderr, "(none)");
}

function readableFile(file: string): void {
	try {
		if (!fs.statSync(file).isFile()) throw new Error("not a file");
		fs.accessSync(file, fs.constants.R_OK);
	} catch (error) {
		throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
	}
}

// ---- commands -----------------------------------------------------------------------

const ACCOUNTS = { needs: ["accounts"], alsoOffline: ["accessPoints"] };

async function addAccount(
	io: CliIO,
	username: string,
	options: { role: string; serviceProvider?: string; accessPointProvider?: string },
): Promise<void> {
	const password = await readNewPassword(io, username);
	const summary = await withRegistry(io, ACCOUNTS, (broker) =>
		// The same action and body as POST /rest/api/accounts.
		broker.call<AccountSummary, object>(
			"accounts.addAccount",
			{
				body: {
					username,
					password,
					role: options.role,
					...(options.serviceProvider ? { serviceProvider: options.serviceProvider } : {}),
					...(options.accessPointProvider ? { accessPointProvider: options.accessPointProvider } : {}),
				},
			},
			asOperator(broker),
		),
	);
	writeLine(
		io.stderr,
		`account ${summary.username} added (${summary.role}${summary.serviceProvider ? `, service provider ${summary.serviceProvider}` : ""}${summary.accessPointProvider ? `, access point provider ${summary.accessPointProvider}` : ""})`,
	);
}

async function disableAccount(io: CliIO, username: string): Promise<void> {
	await withRegistry(io, ACCOUNTS, (broker) =>
		broker
			.call("accounts.disableAccount", { identifier: accountIdentifier(username) }, asOperator(broker))
			.catch((error: { code?: number }) => {
				throw error.code === 404 ? new CliFailure(`no account ${username}; nothing changed`) : error;
			}),
	);
	writeLine(io.stderr, `account ${username} disabled`);
}

async function resetPassword(io: CliIO, username: string): Promise<void> {
	// Refuse an unknown username before asking for a password.
	await withRegistry(io, ACCOUNTS, async (broker) => {
		const accounts = await broker.call<AccountSummary[]>("accounts.listAccounts");
		if (!accounts.some((account) => account.username === username))
			throw new CliFailure(`no account ${username}; nothing changed`);
		const password = await readNewPassword(io, username);
		await broker.call(
			"accounts.resetPassword",
			{ identifier: accountIdentifier(username), body: { password } },
			asOperator(broker),
		);
	});
	writeLine(io.stderr, `password of ${username} reset`);
}

/** `accounts set-oauth-client <username> <clientId>` / `--clear`: the same action and body as PUT /rest/api/accounts/{username}/oauth-client. */
async function setOAuthClient(
	io: CliIO,
	username: string,
	clientId: string | undefined,
	options: { clear?: boolean },
): Promise<void> {
	if ((clientId === undefined) === (options.clear !== true))
		throw new CliFailure("give either a client id or --clear");
	const summary = await withRegistry(io, ACCOUNTS, (broker) =>
		broker
			.call<AccountSummary, object>(
				"accounts.setOAuthClient",
				{ username, body: { oauthClientId: clientId ?? null } },
				asOperator(broker),
			)
			.catch((error: { code?: number; message?: string }) => {
				if (error.code === 404) throw new CliFailure(`no account ${username}; nothing changed`);
				if (error.code === 409) throw new CliFailure(`${error.message}; nothing changed`);
				throw error;
			}),
	);
	writeLine(
		io.stderr,
		summary.oauthClientId
			? `OAuth client ${summary.oauthClientId} now acts as ${username}`
			: `no OAuth client acts as ${username}`,
	);
}

async function listAccounts(io: CliIO, options: { json?: boolean }): Promise<void> {
	const accounts = await withRegistry(io, ACCOUNTS, (broker) =>
		broker.call<AccountSummary[]>("accounts.listAccounts"),
	);
	printJsonOrTable(io, options.json === true, accounts, () => [
		["USERNAME", "ROLE", "PROVIDER", "DISABLED"],
		...accounts.map((account) => [
			account.username,
			account.role,
			account.serviceProvider ?? account.accessPointProvider ?? "",
			account.disabled ? "yes" : "no",
		]),
	]);
}

async function addServiceProvider(io: CliIO, title: string, options: { identifier?: string }): Promise<void> {
	const provider = await withRegistry(io, { needs: ["accounts"] }, (broker) =>
		broker.call<ServiceProvider, object>(
			"accounts.addServiceProvider",
			{ body: { title, ...(options.identifier ? { identifier: options.identifier } : {}) } },
			asOperator(broker),
		),
	);
	writeLine(io.stdout, provider.identifier);
	writeLine(io.stderr, `service provider "${provider.title}" added`);
}

async function listServiceProviders(io: CliIO, options: { json?: boolean }): Promise<void> {
	const providers = await withRegistry(io, { needs: ["accounts"] }, (broker) =>
		broker.call<ServiceProvider[]>("accounts.listServiceProviders"),
	);
	printJsonOrTable(io, options.json === true, providers, () => [
		["IDENTIFIER", "TITLE", "ACCESS POINTS"],
		...providers.map((provider) => [
			provider.identifier,
			provider.title,
			(provider.accessPoints ?? []).map((accessPoint) => accessPoint.identifier).join(", "),
		]),
	]);
}

/** `service-providers link-access-points`: the same action and body as PUT /rest/api/service-providers/{identifier}/access-points. */
async function linkAccessPoints(
	io: CliIO,
	serviceProvider: string,
	accessPoints: string[],
	options: { none?: boolean },
): Promise<void> {
	if (options.none ? accessPoints.length > 0 : accessPoints.length === 0)
		throw new UsageError("name the access points, or give --none to unlink them all");
	const provider = await withRegistry(io, { needs: ["accounts"], alsoOffline: ["accessPoints"] }, (broker) =>
		broker.call<ServiceProvider, object>(
			"accounts.setServiceProviderAccessPoints",
			{ identifier: serviceProvider, body: { accessPoints: accessPoints.map((identifier) => ({ identifier })) } },
			asOperator(broker),
		),
	);
	const count = provider.accessPoints?.length ?? 0;
	writeLine(io.stderr, `service provider "${provider.title}" receives through ${count} access point(s)`);
}

interface AccessPointOptions {
	provider: string;
	url: string;
	transportProfile: string;
	transportTitle?: string;
	certificateType: string[];
	identifier?: string;
}

async function addAccessPoint(io: CliIO, title: string, options: AccessPointOptions): Promise<void> {
	const endpoint = {
		url: options.url,
		transportProfile: {
			title: options.transportTitle ?? options.transportProfile,
			value: options.transportProfile,
			certificateTypes: options.certificateType,
		},
	};
	const accessPoint = await withRegistry(io, { needs: ["accessPoints"] }, (broker) =>
		broker.call<AccessPoint, object>("accessPoints.add", {
			title,
			provider: options.provider,
			endpoints: [endpoint],
			...(options.identifier ? { identifier: options.identifier } : {}),
		}),
	);
	writeLine(io.stdout, accessPoint.identifier);
	writeLine(io.stderr, `access point "${accessPoint.title}" of ${accessPoint.provider.title} added`);
}

interface EndpointOptions {
	file?: string;
	none?: boolean;
	url?: string;
	transportProfile?: string;
	transportTitle?: string;
	certificateType: string[];
	certificateFile?: string;
	activationDate?: string;
	expirationDate?: string;
	description?: string;
	technicalContactUrl?: string;
}

/** The endpoint list the options give: a JSON file (an array, or `{ "endpoints": [...] }`), one endpoint, or none. */
function endpointsOf(options: EndpointOptions): unknown[] {
	const ways = [options.file !== undefined, options.url !== undefined, options.none === true].filter(Boolean).length;
	if (ways !== 1) throw new UsageError("give --file, or --url and --transport-profile (one endpoint), or --none");
	if (options.none) return [];
	if (options.file !== undefined) {
		readableFile(options.file);
		let parsed: unknown;
		try {
			parsed = JSON.parse(fs.readFileSync(options.file, "utf8"));
		} catch (error) {
			throw new CliFailure(`${options.file} is not JSON: ${(error as Error).message}`);
		}
		const list = Array.isArray(parsed) ? parsed : (parsed as { endpoints?: unknown } | null)?.endpoints;
		if (!Array.isArray(list))
			throw new CliFailure(`${options.file} must hold an array of endpoints, or { "endpoints": [...] }`);
		return list;
	}
	if (options.transportProfile === undefined) throw new UsageError("--url needs --transport-profile");
	if (options.certificateFile !== undefined) readableFile(options.certificateFile);
	const optional = {
		certificate: options.certificateFile && fs.readFileSync(options.certificateFile, "utf8"),
		activationDate: options.activationDate,
		expirationDate: options.expirationDate,
		description: options.description,
		technicalContactUrl: options.technicalContactUrl,
	};
	return [
		{
			url: options.url,
			transportProfile: {
				title: options.transportTitle ?? options.transportProfile,
				value: options.transportProfile,
				certificateTypes: options.certificateType,
			},
			...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
		},
	];
}

/** `access-points set-endpoints`: the same action and body as PUT /rest/api/accessPoints/{accessPoint}/endpoints. */
async function setAccessPointEndpoints(io: CliIO, accessPoint: string, options: EndpointOptions): Promise<void> {
	const endpoints = endpointsOf(options);
	const answer = await withRegistry(io, { needs: ["accessPoints"] }, (broker) =>
		broker.call<AccessPoint, object>(
			"accessPoints.setEndpoints",
			{ identifier: accessPoint, body: { endpoints } },
			asOperator(broker),
		),
	);
	writeLine(io.stderr, `access point "${answer.title}": ${answer.endpoints.length} endpoint(s) set`);
	for (const endpoint of answer.endpoints) writeLine(io.stderr, `  ${endpointText(endpoint)}`);
}

/** `url (profile), certificate CN=…, until YYYY-MM-DD`: what an operator checks after a change. */
function endpointText(endpoint: Endpoint): string {
	const certificate = endpoint.certificate ? parseCertificate(endpoint.certificate) : null;
	return `${endpoint.url} (${endpoint.transportProfile.value})${
		certificate
			? `, certificate ${certificate.subject} until ${certificate.notAfter.toISOString().slice(0, 10)}`
			: ""
	}`;
}

async function addAccessPointProvider(
	io: CliIO,
	title: string,
	options: { contactName: string; contactEmail: string; contactPhone: string; identifier?: string },
): Promise<void> {
	const provider = await withRegistry(io, { needs: ["accessPoints"] }, (broker) =>
		broker.call<AccessPointProvider, object>("accessPoints.addProvider", {
			title,
			contact: { name: options.contactName, email: options.contactEmail, phoneNumber: options.contactPhone },
			...(options.identifier ? { identifier: options.identifier } : {}),
		}),
	);
	writeLine(io.stdout, provider.identifier);
	writeLine(io.stderr, `access point provider "${provider.title}" added`);
}

async function listAccessPoints(io: CliIO, options: { json?: boolean }): Promise<void> {
	const accessPoints = await withRegistry(io, { needs: ["accessPoints"] }, async (broker) => {
		const all: AccessPoint[] = [];
		for (let page = 0; ; page++) {
			const pageRequest = { page, size: 1000, sort: [{ field: "title", direction: "asc" }] };
			const found = await broker.call<Page<AccessPoint>, object>(
				"accessPoints.find",
				{ pageRequest },
				asOperator(broker),
			);
			all.push(...found.content);
			if (found.last || found.content.length === 0) return all;
		}
	});
	printJsonOrTable(io, options.json === true, accessPoints, () => [
		["IDENTIFIER", "TITLE", "PROVIDER", "ENDPOINTS"],
		...accessPoints.map((accessPoint) => [
			accessPoint.identifier,
			accessPoint.title,
			accessPoint.provider.title,
			accessPoint.endpoints.map(endpointText).join("; "),
		]),
	]);
}

async function listAccessPointProviders(io: CliIO, options: { json?: boolean }): Promise<void> {
	const providers = await withRegistry(io, { needs: ["accessPoints"] }, (broker) =>
		broker.call<AccessPointProvider[]>("accessPoints.listProviders"),
	);
	printJsonOrTable(io, options.json === true, providers, () => [
		["IDENTIFIER", "TITLE", "CONTACT"],
		...providers.map((provider) => [
			provider.identifier,
			provider.title,
			`${provider.contact.name} <${provider.contact.email}> ${provider.contact.phoneNumber}`,
		]),
	]);
}

async function seed(io: CliIO, file: string): Promise<void> {
	readableFile(file);
	const parsed = parseSeed(fs.readFileSync(file, "utf8"));
	if (parsed.reasons.length)
		throw new CliFailure(
			`${file} refused, nothing changed`,
			parsed.reasons.map((reason) => `${reason.path || "(file)"}: ${reason.message}`),
		);
	const progress = progressBar(io, "seed");
	const result = await withRegistry(io, { needs: SEED_OWNERS, alsoOffline: ["lookup"] }, async (broker) => {
		try {
			return await importSeed(broker, parsed.seed, {
				onChecked: (records) => progress.start(records),
				onImported: (_action, records) => progress.increment(records),
			});
		} catch (error) {
			const { message, lines } = describeError(error);
			throw new CliFailure(`${file} refused, nothing changed: ${message}`, lines);
		} finally {
			progress.stop();
		}
	});
	writeLine(io.stderr, `${file} imported:`);
	for (const [section, counts] of Object.entries(result))
		writeLine(io.stderr, describeCounts(section, counts as SeedCounts));
}

async function rebuildLookup(io: CliIO): Promise<void> {
	const result = await withRegistry(
		io,
		{ needs: ["lookup", "participants"], alsoOffline: ["catalog", "accounts"] },
		(broker) =>
			broker.call<{ organizations: number; participants: number }, object>(
				"lookup.rebuild",
				{},
				{ timeout: REBUILD_TIMEOUT_MS },
			),
	);
	writeLine(
		io.stderr,
		`lookup rebuilt: ${result.organizations} organization(s) from ${result.participants} participant(s)`,
	);
}

/** The lookup's parked changes are in its store: offline, the lookup runs here on it (its catalog copy needs the catalog). */
const LOOKUP_STORE: RegistryAccess = { needs: ["lookup"], alsoOffline: ["catalog", "participants", "accounts"] };

interface ParkedChange {
	identifier: string;
	at: string;
	change: unknown;
	error: string;
}

async function listParked(io: CliIO, options: { json?: boolean }): Promise<void> {
	const parked = await withRegistry(io, LOOKUP_STORE, (broker) =>
		broker.call<ParkedChange[], object>("lookup.parkedChanges", { limit: 1000 }),
	);
	printJsonOrTable(io, options.json === true, parked, () => [
		["ID", "PARKED AT", "ERROR", "CHANGE"],
		...parked.map((entry) => [entry.identifier, entry.at, entry.error, JSON.stringify(entry.change)]),
	]);
}

async function replayParked(io: CliIO): Promise<void> {
	const result = await withRegistry(io, LOOKUP_STORE, (broker) =>
		broker.call<{ replayed: number; failed: number }, object>(
			"lookup.replayParked",
			{},
			{ timeout: REBUILD_TIMEOUT_MS },
		),
	);
	writeLine(io.stderr, `${result.replayed} parked change(s) applied, ${result.failed} still failing`);
	if (result.failed > 0) throw new CliFailure(`${result.failed} parked change(s) still fail: see the lookup's log`);
}

async function dropParked(io: CliIO, identifier: string): Promise<void> {
	const { dropped } = await withRegistry(io, LOOKUP_STORE, (broker) =>
		broker.call<{ dropped: boolean }, object>("lookup.dropParked", { identifier }),
	);
	if (!dropped) throw new CliFailure(`no parked change ${identifier}`);
	writeLine(io.stderr, `parked change ${identifier} dropped`);
}

/**
 * The network service runs here on its store when offline (its deliveries read the participants,
 * the Directory's also the lookup's card); as an operator tool it makes no calls of its own.
 */
const NETWORK_STORE: RegistryAccess = {
	needs: ["network"],
	alsoOffline: ["participants", "lookup", "catalog", "accounts", "accessPoints"],
};

interface ParkedDelivery {
	organization: string;
	target: string;
	attempts: number;
	failingSince: string | null;
	message: string | null;
}

async function listParkedDeliveries(io: CliIO, options: { json?: boolean }): Promise<void> {
	const parked = await withRegistry(io, NETWORK_STORE, (broker) =>
		broker.call<ParkedDelivery[], object>("network.parked", { limit: 1000 }),
	);
	printJsonOrTable(io, options.json === true, parked, () => [
		["ORGANIZATION", "TARGET", "FAILING SINCE", "ATTEMPTS", "MESSAGE"],
		...parked.map((entry) => [
			entry.organization,
			entry.target,
			entry.failingSince ?? "",
			String(entry.attempts),
			entry.message ?? "",
		]),
	]);
}

async function replayParkedDeliveries(io: CliIO): Promise<void> {
	const { replayed } = await withRegistry(io, NETWORK_STORE, async (broker) => {
		const result = await broker.call<{ replayed: number }, object>("network.replayParked", {});
		await broker.call("network.deliverNow", {}, { timeout: REBUILD_TIMEOUT_MS });
		return result;
	});
	writeLine(io.stderr, `${replayed} parked delivery(ies) due again`);
}

interface SmlDifferences {
	registry: number;
	sml: number;
	missing: string[];
	stray: string[];
}

function printDifferences(io: CliIO, json: boolean, differences: SmlDifferences & Record<string, unknown>): void {
	if (json) return writeLine(io.stdout, JSON.stringify(differences, null, 2));
	writeLine(io.stdout, `registry: ${differences.registry} organization(s); SML: ${differences.sml}`);
	for (const key of ["smpRecord", "pending", "failing", "parked"])
		if (key in differences) writeLine(io.stdout, `${key}: ${JSON.stringify(differences[key])}`);
	writeLine(io.stdout, `missing from the SML (${differences.missing.length}): ${differences.missing.join(" ")}`);
	writeLine(
		io.stdout,
		`in the SML without a participant here (${differences.stray.length}): ${differences.stray.join(" ")}`,
	);
}

async function smlStatus(io: CliIO, options: { json?: boolean }): Promise<void> {
	const status = await withRegistry(io, NETWORK_STORE, (broker) =>
		broker.call<SmlDifferences & Record<string, unknown>, object>(
			"network.status",
			{},
			{ timeout: REBUILD_TIMEOUT_MS },
		),
	);
	if (!("missing" in status)) throw new CliFailure("SML_URL is not set: there is no SML to compare with");
	printDifferences(io, options.json === true, status);
}

async function smlSync(io: CliIO, options: { json?: boolean }): Promise<void> {
	const differences = await withRegistry(io, NETWORK_STORE, (broker) =>
		broker.call<SmlDifferences & Record<string, unknown>, object>(
			"network.sync",
			{},
			{ timeout: REBUILD_TIMEOUT_MS },
		),
	);
	printDifferences(io, options.json === true, differences);
	writeLine(
		io.stderr,
		`${differences.missing.length} created, ${differences.stray.length} deleted (or due, where the SML refused)`,
	);
}

async function exportCommand(io: CliIO, options: { out?: string }): Promise<void> {
	const out = options.out ? fs.createWriteStream(options.out, { flags: "wx" }) : io.stdout;
	if (options.out) {
		await new Promise<void>((resolve, reject) => {
			(out as fs.WriteStream).once("open", () => resolve());
			(out as fs.WriteStream).once("error", (error) =>
				reject(new UsageError(`cannot write ${options.out}: ${error.message}`)),
			);
		});
	}
	let done = false;
	try {
		const counts = await withRegistry(
			io,
			{ needs: ["accounts", "accessPoints", "catalog", "participants"] },
			(broker: ServiceBroker) =>
				exportRegistry(broker, out, progressBar(io, "export"), batchSize(joinsCluster(io))),
		);
		if (options.out)
			await new Promise<void>((resolve, reject) =>
				(out as fs.WriteStream).end((error?: Error | null) => (error ? reject(error) : resolve())),
			);
		done = true;
		writeLine(
			io.stderr,
			`exported ${Object.values(counts).reduce((sum, count) => sum + count, 0)} record(s)${options.out ? ` to ${options.out}` : ""}:`,
		);
		for (const [type, count] of Object.entries(counts)) if (count) writeLine(io.stderr, `  ${type}: ${count}`);
	} finally {
		if (options.out && !done) {
			(out as fs.WriteStream).destroy();
			fs.rmSync(options.out, { force: true });
		}
	}
}

async function importCommand(io: CliIO, file: string): Promise<void> {
	readableFile(file);
	const outcome = await withRegistry(io, { needs: SEED_OWNERS, alsoOffline: ["lookup"] }, (broker) =>
		importRegistry(broker, file, io, progressBar(io, "import"), batchSize(joinsCluster(io))),
	);
	writeLine(io.stderr, `${file} imported (${outcome.records} record(s)):`);
	for (const [type, counts] of Object.entries(outcome.counts)) writeLine(io.stderr, describeCounts(type, counts));
	if (outcome.disabledAccounts)
		writeLine(io.stderr, `  ${outcome.disabledAccounts} account(s) disabled as in the file`);
}

// ---- the program ----------------------------------------------------------------------

function collect(value: string, previous: string[]): string[] {
	return [...previous, value];
}

export function buildProgram(io: CliIO, run: (work: () => Promise<void>) => Promise<void>): Command {
	const program = new Command("registry")
		.description(
			"Operator tools of the participant registry. Works on the configured store (DATA_DIR / MONGO_URI), or joins the running cluster when TRANSPORTER (and NAMESPACE) are set.",
		)
		.exitOverride()
		.configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
		.showHelpAfterError("(registry --help lists the commands)")
		.helpCommand(true);

	const accounts = program.command("accounts").description("accounts that may call the registry");
	accounts
		.command("add <username>")
		.description(
			"add an account; the password is asked twice without echo (or read from the first line of stdin when it is not a terminal)",
		)
		.addOption(new Option("--role <role>", "the account's role").choices(ACCOUNT_ROLES).makeOptionMandatory())
		.option("--service-provider <uuid>", "the service provider (role SERVICE_PROVIDER)")
		.option("--access-point-provider <uuid>", "the access point provider (role ACCESS_POINT_PROVIDER)")
		.action((username: string, options) => run(() => addAccount(io, username, options)));
	accounts
		.command("disable <username>")
		.description("disable an account: its credentials stop working at once")
		.action((username: string) => run(() => disableAccount(io, username)));
	accounts
		.command("reset-password <username>")
		.description("set a new password (asked twice without echo, or the first line of stdin)")
		.action((username: string) => run(() => resetPassword(io, username)));
	accounts
		.command("set-oauth-client <username> [clientId]")
		.description("the OAuth client whose access tokens act as the account (its client_id); --clear removes it")
		.option("--clear", "no client acts as the account any more")
		.action((username: string, clientId: string | undefined, options) =>
			run(() => setOAuthClient(io, username, clientId, options)),
		);
	accounts
		.command("list")
		.description("every account (never a password or hash)")
		.option("--json", "as JSON")
		.action((options) => run(() => listAccounts(io, options)));

	const serviceProviders = program
		.command("service-providers")
		.description("service providers, for whom SERVICE_PROVIDER accounts act");
	serviceProviders
		.command("add <title>")
		.description("add a service provider; prints its identifier")
		.option("--identifier <uuid>", "its identifier (default: a new one)")
		.action((title: string, options) => run(() => addServiceProvider(io, title, options)));
	serviceProviders
		.command("list")
		.description("every service provider")
		.option("--json", "as JSON")
		.action((options) => run(() => listServiceProviders(io, options)));
	serviceProviders
		.command("link-access-points <serviceProvider> [accessPoints...]")
		.description(
			"set the access points (UUIDs) the provider's participants receive through, replacing the list (SMP publishing)",
		)
		.option("--none", "unlink them all")
		.action((serviceProvider: string, accessPoints: string[], options) =>
			run(() => linkAccessPoints(io, serviceProvider, accessPoints, options)),
		);

	const accessPoints = program.command("access-points").description("access points and their providers");
	accessPoints
		.command("add <title>")
		.description("add an access point with one endpoint; prints its identifier")
		.requiredOption("--provider <uuid>", "its access point provider")
		.requiredOption("--url <url>", "the endpoint URL")
		.requiredOption("--transport-profile <value>", "the transport profile value, e.g. peppol-transport-as4-v2_0")
		.option("--transport-title <title>", "the transport profile title (default: the value)")
		.option("--certificate-type <type>", "a certificate type (repeatable)", collect, [])
		.option("--identifier <uuid>", "its identifier (default: a new one)")
		.action((title: string, options) => run(() => addAccessPoint(io, title, options)));
	accessPoints
		.command("set-endpoints <accessPoint>")
		.description(
			"replace an access point's endpoints (SMP publishing): from a JSON file, or one endpoint from the options, or none",
		)
		.option(
			"--file <endpoints.json>",
			"an array of endpoints as the API takes them (certificate: PEM or base64 DER)",
		)
		.option("--none", "no endpoints at all")
		.option("--url <url>", "one endpoint: its URL")
		.option("--transport-profile <value>", "its transport profile value, e.g. peppol-transport-as4-v2_0")
		.option("--transport-title <title>", "its transport profile title (default: the value)")
		.option("--certificate-type <type>", "a certificate type (repeatable)", collect, [])
		.option("--certificate-file <pem>", "its X.509 certificate, PEM or base64 DER")
		.option("--activation-date <date>", "ISO 8601 date or date-time from which it is used")
		.option("--expiration-date <date>", "ISO 8601 date or date-time after which it is not used")
		.option("--description <text>", "a description")
		.option("--technical-contact-url <url>", "where its technical contact is found")
		.action((accessPoint: string, options) => run(() => setAccessPointEndpoints(io, accessPoint, options)));
	accessPoints
		.command("add-provider <title>")
		.description("add an access point provider; prints its identifier")
		.requiredOption("--contact-name <name>", "contact name")
		.requiredOption("--contact-email <email>", "contact e-mail")
		.requiredOption("--contact-phone <phone>", "contact phone number")
		.option("--identifier <uuid>", "its identifier (default: a new one)")
		.action((title: string, options) => run(() => addAccessPointProvider(io, title, options)));
	accessPoints
		.command("list")
		.description("every access point")
		.option("--json", "as JSON")
		.action((options) => run(() => listAccessPoints(io, options)));
	accessPoints
		.command("providers")
		.description("every access point provider")
		.option("--json", "as JSON")
		.action((options) => run(() => listAccessPointProviders(io, options)));

	program
		.command("seed <file>")
		.description("import a seed file (decisions §9): checked whole first, idempotent upserts, with a progress bar")
		.action((file: string) => run(() => seed(io, file)));

	const lookup = program.command("lookup").description("the organization lookup's read model");
	lookup
		.command("rebuild")
		.description("rebuild the read model from the participants")
		.action(() => run(() => rebuildLookup(io)));
	lookup
		.command("parked")
		.description("participant changes the lookup parked after their retries (docs/operations.md)")
		.option("--json", "as JSON")
		.action((options) => run(() => listParked(io, options)));
	lookup
		.command("replay")
		.description("applies the parked changes again; those that apply are removed")
		.action(() => run(() => replayParked(io)));
	lookup
		.command("drop <id>")
		.description("removes a parked change dealt with otherwise")
		.action((identifier: string) => run(() => dropParked(io, identifier)));

	const sml = program
		.command("sml")
		.description("the SML and the Peppol Directory (decisions §14): parked deliveries, differences, reconciliation")
		.action(() => run(() => listParkedDeliveries(io, {})));
	sml.command("parked")
		.description("deliveries refused for a day and parked (what `registry sml` alone lists)")
		.option("--json", "as JSON")
		.action((options) => run(() => listParkedDeliveries(io, options)));
	sml.command("replay")
		.description("delivers the parked organizations again")
		.action(() => run(() => replayParkedDeliveries(io)));
	sml.command("status")
		.description("the SMP record, and what differs between the SML's list and the registry's; changes nothing")
		.option("--json", "as JSON")
		.action((options) => run(() => smlStatus(io, options)));
	sml.command("sync")
		.description("reconciles now: creates what the SML misses, deletes what it has without a participant here")
		.option("--json", "as JSON")
		.action((options) => run(() => smlSync(io, options)));

	program
		.command("export")
		.description("write the whole registry as NDJSON, streamed (to stdout, or --out)")
		.option("--out <file>", "write to this new file instead of stdout")
		.action((options) => run(() => exportCommand(io, options)));
	program
		.command("import <file>")
		.description(
			"import an export file: checked whole first (every bad line listed, nothing changed), then upserted in batches",
		)
		.action((file: string) => run(() => importCommand(io, file)));
	return program;
}

/** The whole CLI; answers the exit code (kept apart from process.exit for tests). */
export async function runRegistry(args: string[], io: CliIO = PROCESS_IO): Promise<number> {
	let code: number = EXIT.ok;
	const run = async (work: () => Promise<void>) => {
		try {
			await work();
		} catch (error) {
			const { message, lines } = describeError(error);
			writeLine(io.stderr, `registry: ${message}`);
			for (const line of lines) writeLine(io.stderr, `  ${line}`);
			code = error instanceof CliFailure ? error.exitCode : EXIT.failed;
		}
	};
	try {
		await buildProgram(io, run).parseAsync(args, { from: "user" });
	} catch (error) {
		if (error instanceof CommanderError)
			return error.code === "commander.helpDisplayed" || error.code === "commander.version"
				? EXIT.ok
				: EXIT.usage;
		throw error;
	}
	return code;
}

if (require.main === module) {
	runRegistry(process.argv.slice(2)).then(
		(code) => process.exit(code),
		(error) => {
			process.stderr.write(`registry: ${(error as Error).message ?? error}\n`);
			process.exit(EXIT.failed);
		},
	);
}
