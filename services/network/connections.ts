/**
 * How this registry reaches the SML and the Peppol Directory (decisions §14): their addresses
 * and the client TLS pairs from the environment, checked at start (a missing or unreadable
 * file, or a required value left out, stops the start with a message naming it), and one
 * HTTPS call that gives back the answer's status and text.
 */
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import { env, envNumber, registryCountry } from "../../src/config/settings";
import type { SmpRecord } from "./sml-soap";

export interface TlsPair {
	key: Buffer;
	cert: Buffer;
	ca?: Buffer;
}

export interface NetworkConfig {
	sml: { url: string; record: SmpRecord; tls: TlsPair } | null;
	directory: { url: string; tls: TlsPair } | null;
	zone: string;
	country: string;
	/** Seconds between reconciliations; 0: only at start and by hand. */
	syncIntervalSeconds: number;
}

function readFile(variable: string, source: NodeJS.ProcessEnv): Buffer {
	const file = env(variable, source);
	if (!file) throw new Error(`${variable} is required with SML_URL or DIRECTORY_URL (client TLS, decisions §14)`);
	try {
		return fs.readFileSync(file);
	} catch (error) {
		throw new Error(
			`${variable} (${file}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
		);
	}
}

function httpsUrl(variable: string, source: NodeJS.ProcessEnv): string {
	const value = env(variable, source).replace(/\/+$/, "");
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		throw new Error(`${variable} is not a URL: ${value}`);
	}
	if (url.protocol !== "https:") throw new Error(`${variable} must be an https:// address (client TLS)`);
	return value;
}

function required(variable: string, why: string, source: NodeJS.ProcessEnv): string {
	const value = env(variable, source);
	if (!value) throw new Error(`${variable} is required with SML_URL (${why})`);
	return value;
}

/** The configuration, or an Error naming what is wrong. Neither URL set: both off. */
export function networkConfig(source: NodeJS.ProcessEnv = process.env): NetworkConfig {
	const zone = env("SML_ZONE", source);
	const country = registryCountry(source);
	const syncIntervalSeconds = envNumber("SML_SYNC_INTERVAL", source);
	if (syncIntervalSeconds < 0) throw new Error("SML_SYNC_INTERVAL must be 0 or more seconds");
	const ca = env("SML_CA_FILE", source) ? readFile("SML_CA_FILE", source) : undefined;
	let smlPair: TlsPair | null = null;
	const smlTls = () =>
		(smlPair ??= {
			key: readFile("SML_CLIENT_KEY_FILE", source),
			cert: readFile("SML_CLIENT_CERTIFICATE_FILE", source),
			ca,
		});
	let sml: NetworkConfig["sml"] = null;
	if (env("SML_URL", source)) {
		const physicalAddress = required("SML_PHYSICAL_ADDRESS", "the SMP's IPv4 address", source);
		if (!net.isIPv4(physicalAddress))
			throw new Error(`SML_PHYSICAL_ADDRESS must be an IPv4 address: ${physicalAddress}`);
		const record = {
			smpId: required("SML_SMP_ID", "this SMP's identifier in the SML", source),
			logicalAddress: required("SMP_PUBLIC_URL", "the SMP's logical address", source),
			physicalAddress,
		};
		sml = { url: httpsUrl("SML_URL", source), record, tls: smlTls() };
	}
	let directory: NetworkConfig["directory"] = null;
	if (env("DIRECTORY_URL", source)) {
		const own = env("DIRECTORY_CLIENT_KEY_FILE", source) || env("DIRECTORY_CLIENT_CERTIFICATE_FILE", source);
		const tls = own
			? {
					key: readFile("DIRECTORY_CLIENT_KEY_FILE", source),
					cert: readFile("DIRECTORY_CLIENT_CERTIFICATE_FILE", source),
					ca,
				}
			: smlTls();
		directory = { url: httpsUrl("DIRECTORY_URL", source), tls };
	}
	return { sml, directory, zone, country, syncIntervalSeconds };
}

export interface HttpAnswer {
	status: number;
	text: string;
}

/** Fails a call that hangs: the delivery retries it with back-off. */
const CALL_TIMEOUT_MS = 30_000;

/** One HTTPS request with the client certificate; any status is an answer, a broken connection an Error. */
export function httpsCall(
	agent: https.Agent,
	url: string,
	method: string,
	headers: Record<string, string>,
	body?: string,
): Promise<HttpAnswer> {
	return new Promise((resolve, reject) => {
		const request = https.request(url, { method, agent, headers, timeout: CALL_TIMEOUT_MS }, (response) => {
			const chunks: Buffer[] = [];
			response.on("data", (chunk: Buffer) => chunks.push(chunk));
			response.on("end", () =>
				resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
			);
			response.on("error", reject);
		});
		request.on("timeout", () =>
			request.destroy(new Error(`no answer from ${new URL(url).host} within ${CALL_TIMEOUT_MS / 1000} s`)),
		);
		request.on("error", reject);
		request.end(body);
	});
}

/** A keep-alive agent that presents the pair and checks the server against its CA (else the system's). */
export function clientAgent(tls: TlsPair): https.Agent {
	return new https.Agent({
		keepAlive: true,
		maxSockets: 4,
		key: tls.key,
		cert: tls.cert,
		...(tls.ca ? { ca: tls.ca } : {}),
	});
}
