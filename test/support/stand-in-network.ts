/**
 * A stand-in SML and Peppol Directory that the tests start (decisions §14): HTTPS on 127.0.0.1
 * that demands a client certificate from a certificate authority made here with openssl, the
 * SOAP bodies checked against the busdox WSDLs' elements, namespaces and SOAPActions, faults
 * answered as the SML answers them, and the Directory's indexer, which fetches the business
 * card from the registry as soon as it is told, as the real one does.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { DOMParser, type Element } from "@xmldom/xmldom";
import { missingBinaries } from "./private-servers";

export const OPENSSL = process.env.TEST_OPENSSL ?? "/usr/bin/openssl";
export const missingOpenssl = (): string[] => missingBinaries(OPENSSL);

const SOAP = "http://schemas.xmlsoap.org/soap/envelope/";
const LOCATOR = "http://busdox.org/serviceMetadata/locator/1.0/";
const IDS = "http://busdox.org/transport/identifiers/1.0/";
const SMP_ACTION = "http://busdox.org/serviceMetadata/ManageServiceMetadataService/1.0/:";
const PARTICIPANT_ACTION = "http://busdox.org/serviceMetadata/ManageBusinessIdentifierService/1.0/         :";

/** SOAPAction → the body element the WSDL names for it (ManageBusinessIdentifierService and ManageServiceMetadataService). */
const OPERATIONS: Record<string, { endpoint: string; element: string }> = {
	[`${SMP_ACTION}readIn`]: { endpoint: "manageservicemetadata", element: "ReadServiceMetadataPublisherService" },
	[`${SMP_ACTION}createIn`]: { endpoint: "manageservicemetadata", element: "CreateServiceMetadataPublisherService" },
	[`${SMP_ACTION}updateIn`]: { endpoint: "manageservicemetadata", element: "UpdateServiceMetadataPublisherService" },
	[`${PARTICIPANT_ACTION}createIn`]: {
		endpoint: "manageparticipantidentifier",
		element: "CreateParticipantIdentifier",
	},
	[`${PARTICIPANT_ACTION}deleteIn`]: {
		endpoint: "manageparticipantidentifier",
		element: "DeleteParticipantIdentifier",
	},
	[`${PARTICIPANT_ACTION}createListIn`]: { endpoint: "manageparticipantidentifier", element: "CreateList" },
	[`${PARTICIPANT_ACTION}deleteListIn`]: { endpoint: "manageparticipantidentifier", element: "DeleteList" },
	[`${PARTICIPANT_ACTION}listIn`]: { endpoint: "manageparticipantidentifier", element: "PageRequest" },
};

export interface TestPki {
	dir: string;
	/** PEM files. */
	caFile: string;
	serverKey: string;
	serverCert: string;
	clientKey: string;
	clientCert: string;
	/** A client pair signed by another authority: the stand-ins refuse it. */
	strangerKey: string;
	strangerCert: string;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate it signed; a stranger's client pair from a second CA. */
export function makeTestPki(): TestPki {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-sml-pki-"));
	const openssl = (...args: string[]) => execFileSync(OPENSSL, args, { cwd: dir, stdio: "pipe" });
	const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
	const authority = (name: string) =>
		openssl(
			...["req", "-x509", ...ecKey, "-keyout", `${name}.key`, "-out", `${name}.pem`, "-days", "2"],
			...["-subj", `/CN=${name} test CA`, "-addext", "basicConstraints=critical,CA:TRUE"],
			...["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
		);
	const signed = (name: string, ca: string, subject: string, extensions: string) => {
		openssl("req", ...ecKey, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject);
		fs.writeFileSync(path.join(dir, `${name}.ext`), `${extensions}\nbasicConstraints=CA:FALSE\n`);
		openssl(
			...["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.pem`, "-CAkey", `${ca}.key`, "-CAcreateserial"],
			...["-out", `${name}.pem`, "-days", "2", "-extfile", `${name}.ext`],
		);
	};
	authority("sml-ca");
	authority("stranger-ca");
	signed(
		"server",
		"sml-ca",
		"/CN=127.0.0.1",
		"subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth",
	);
	signed("client", "sml-ca", "/CN=SMP test registry", "extendedKeyUsage=clientAuth");
	signed("stranger", "stranger-ca", "/CN=someone else", "extendedKeyUsage=clientAuth");
	const file = (name: string) => path.join(dir, name);
	return {
		dir,
		caFile: file("sml-ca.pem"),
		serverKey: file("server.key"),
		serverCert: file("server.pem"),
		clientKey: file("client.key"),
		clientCert: file("client.pem"),
		strangerKey: file("stranger.key"),
		strangerCert: file("stranger.pem"),
	};
}

/** The environment that points a registry at the stand-ins with the test's client pair. */
export function networkEnv(
	pki: TestPki,
	sml: StandInSml | null,
	directory: StandInDirectory | null,
): Record<string, string> {
	return {
		...(sml
			? {
					SML_URL: sml.url,
					SML_SMP_ID: sml.smpId,
					SML_PHYSICAL_ADDRESS: "192.0.2.10",
					SMP_PUBLIC_URL: "https://smp.registry.example",
				}
			: {}),
		...(directory ? { DIRECTORY_URL: directory.url } : {}),
		SML_CLIENT_KEY_FILE: pki.clientKey,
		SML_CLIENT_CERTIFICATE_FILE: pki.clientCert,
		SML_CA_FILE: pki.caFile,
	};
}

type Fault = "BadRequestFault" | "NotFoundFault" | "UnauthorizedFault" | "InternalErrorFault";

interface SmlCall {
	operation: string;
	values: string[];
}

function children(parent: Element): Element[] {
	const list: Element[] = [];
	for (let node = parent.firstChild; node; node = node.nextSibling)
		if (node.nodeType === 1) list.push(node as unknown as Element);
	return list;
}

class BadSoap extends Error {}

function serverOptions(pki: TestPki): https.ServerOptions {
	return {
		key: fs.readFileSync(pki.serverKey),
		cert: fs.readFileSync(pki.serverCert),
		ca: fs.readFileSync(pki.caFile),
		requestCert: true,
		rejectUnauthorized: true,
	};
}

async function listen(server: https.Server): Promise<number> {
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	return (server.address() as AddressInfo).port;
}

function readBody(request: import("node:http").IncomingMessage): Promise<string> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		request.on("data", (chunk: Buffer) => chunks.push(chunk));
		request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
		request.on("error", reject);
	});
}

export class StandInSml {
	readonly smpId = "TEST-REGISTRY-SMP";
	/** The SMP record the stand-in holds, as the SML keeps it. */
	smp: { logicalAddress: string; physicalAddress: string } | null = null;
	/** This SMP's participants in the SML: lower-case `<icd>:<id>`. */
	readonly participants = new Set<string>();
	readonly calls: SmlCall[] = [];
	/** Bodies the stand-in refused as not matching the WSDL (must stay empty). */
	readonly malformed: string[] = [];
	/** While true, every call fails at the connection (an outage). */
	down = false;
	/** Lists (CreateList, DeleteList) answered with a BadRequestFault: the client must fall back to single calls. */
	refuseLists = false;
	/** Participant values whose Create is refused with this fault. */
	readonly refused = new Map<string, { fault: Fault; message: string }>();
	pageSize = 100;
	url = "";
	private server: https.Server | null = null;

	constructor(private readonly pki: TestPki) {}

	async start(): Promise<this> {
		this.server = https.createServer(serverOptions(this.pki), (request, response) => {
			if (this.down) return request.socket.destroy();
			void readBody(request).then((body) => {
				const answer = (status: number, payload: string) => {
					response.writeHead(status, { "Content-Type": "text/xml;charset=UTF-8" });
					response.end(
						`<?xml version="1.0" encoding="UTF-8"?><S:Envelope xmlns:S="${SOAP}"><S:Body>${payload}</S:Body></S:Envelope>`,
					);
				};
				try {
					const { status, payload } = this.handle(
						request.url ?? "",
						String(request.headers.soapaction ?? ""),
						body,
					);
					answer(status, payload);
				} catch (error) {
					if (!(error instanceof BadSoap)) throw error;
					this.malformed.push(`${error.message}: ${body.slice(0, 300)}`);
					answer(500, this.fault("BadRequestFault", error.message));
				}
			});
		});
		const port = await listen(this.server);
		this.url = `https://127.0.0.1:${port}/edelivery-sml`;
		return this;
	}

	private fault(kind: Fault, message: string): string {
		return (
			`<S:Fault><faultcode>S:Server</faultcode><faultstring>${message}</faultstring>` +
			`<detail><${kind} xmlns="${LOCATOR}"><FaultMessage>${message}</FaultMessage></${kind}></detail></S:Fault>`
		);
	}

	private handle(url: string, soapAction: string, body: string): { status: number; payload: string } {
		const action = soapAction.replace(/^"|"$/g, "");
		const operation = OPERATIONS[action];
		if (!operation) throw new BadSoap(`unknown SOAPAction ${JSON.stringify(soapAction)}`);
		if (url !== `/edelivery-sml/${operation.endpoint}`) throw new BadSoap(`${operation.element} sent to ${url}`);
		const errors: string[] = [];
		const document = new DOMParser({
			onError: (level, message) => void (level !== "warning" && errors.push(message)),
		}).parseFromString(body, "text/xml");
		const envelope = document.documentElement;
		if (errors.length || !envelope || envelope.localName !== "Envelope" || envelope.namespaceURI !== SOAP)
			throw new BadSoap("not a SOAP 1.1 envelope");
		const soapBody = children(envelope).find((child) => child.localName === "Body" && child.namespaceURI === SOAP);
		const request = soapBody && children(soapBody)[0];
		if (!request || request.localName !== operation.element || request.namespaceURI !== LOCATOR)
			throw new BadSoap(`expected {${LOCATOR}}${operation.element}`);
		const parts = children(request);
		for (const part of parts)
			if (part.namespaceURI !== (part.localName === "ParticipantIdentifier" ? IDS : LOCATOR))
				throw new BadSoap(`${part.localName} in namespace ${part.namespaceURI}`);
		const text = (name: string) => parts.find((part) => part.localName === name)?.textContent ?? undefined;
		const values = parts
			.filter((part) => part.localName === "ParticipantIdentifier")
			.map((part) => {
				if (part.getAttribute("scheme") !== "iso6523-actorid-upis")
					throw new BadSoap("ParticipantIdentifier without its scheme");
				return (part.textContent ?? "").trim();
			});
		const smpId = text("ServiceMetadataPublisherID");
		this.calls.push({ operation: operation.element, values });
		const ok = (payload = "") => ({ status: 200, payload });
		const fault = (kind: Fault, message: string) => ({ status: 500, payload: this.fault(kind, message) });
		switch (operation.element) {
			case "ReadServiceMetadataPublisherService":
				if (smpId !== this.smpId || !this.smp)
					return fault("NotFoundFault", `The SMP '${smpId}' does not exist`);
				return ok(
					`<ServiceMetadataPublisherService xmlns="${LOCATOR}"><PublisherEndpoint><LogicalAddress>${this.smp.logicalAddress}</LogicalAddress>` +
						`<PhysicalAddress>${this.smp.physicalAddress}</PhysicalAddress></PublisherEndpoint>` +
						`<ServiceMetadataPublisherID>${this.smpId}</ServiceMetadataPublisherID></ServiceMetadataPublisherService>`,
				);
			case "CreateServiceMetadataPublisherService":
			case "UpdateServiceMetadataPublisherService": {
				const endpoint = parts.find((part) => part.localName === "PublisherEndpoint");
				const field = (name: string) =>
					endpoint ? children(endpoint).find((c) => c.localName === name)?.textContent : null;
				if (parts[0]?.localName !== "PublisherEndpoint" || smpId !== this.smpId)
					throw new BadSoap("PublisherEndpoint, then ServiceMetadataPublisherID");
				this.smp = {
					logicalAddress: field("LogicalAddress") ?? "",
					physicalAddress: field("PhysicalAddress") ?? "",
				};
				return ok();
			}
			case "CreateParticipantIdentifier":
			case "DeleteParticipantIdentifier": {
				if (parts[0]?.localName !== "ServiceMetadataPublisherID" || values.length !== 1)
					throw new BadSoap("ServiceMetadataPublisherID, then one ParticipantIdentifier");
				if (!this.smp) return fault("UnauthorizedFault", "The SMP is not registered");
				const [value] = values;
				if (operation.element === "DeleteParticipantIdentifier") {
					if (!this.participants.delete(value))
						return fault("NotFoundFault", `The participant identifier '${value}' doesn't exist`);
					return ok();
				}
				const refusal = this.refused.get(value);
				if (refusal) return fault(refusal.fault, refusal.message);
				if (this.participants.has(value))
					return fault("BadRequestFault", `The participant identifier '${value}' already exist`);
				this.participants.add(value);
				return ok();
			}
			case "CreateList":
			case "DeleteList": {
				if (!this.smp) return fault("UnauthorizedFault", "The SMP is not registered");
				if (this.refuseLists) return fault("BadRequestFault", "lists are refused here");
				const create = operation.element === "CreateList";
				// As the SML: a list is all or nothing.
				for (const value of values) {
					if (create && (this.participants.has(value) || this.refused.has(value)))
						return fault("BadRequestFault", `The participant identifier '${value}' already exist`);
					if (!create && !this.participants.has(value))
						return fault("NotFoundFault", `The participant identifier '${value}' doesn't exist`);
				}
				for (const value of values) {
					if (create) this.participants.add(value);
					else this.participants.delete(value);
				}
				return ok();
			}
			default: {
				if (smpId !== this.smpId) return fault("UnauthorizedFault", "another SMP's list");
				const sorted = [...this.participants].sort();
				const start = Number(text("NextPageIdentifier") ?? 0);
				const page = sorted.slice(start, start + this.pageSize);
				const next =
					start + this.pageSize < sorted.length
						? `<NextPageIdentifier>${start + this.pageSize}</NextPageIdentifier>`
						: "";
				return ok(
					`<ParticipantIdentifierPage xmlns="${LOCATOR}" xmlns:ids="${IDS}">` +
						page
							.map(
								(value) =>
									`<ids:ParticipantIdentifier scheme="iso6523-actorid-upis">${value}</ids:ParticipantIdentifier>`,
							)
							.join("") +
						`<ServiceMetadataPublisherID>${this.smpId}</ServiceMetadataPublisherID>${next}</ParticipantIdentifierPage>`,
				);
			}
		}
	}

	/** How many calls of one operation (e.g. "CreateList") the registry made. */
	count(operation: string): number {
		return this.calls.filter((call) => call.operation === operation).length;
	}

	async stop(): Promise<void> {
		this.server?.closeAllConnections();
		await new Promise((resolve) => this.server?.close(resolve));
	}
}

/** What the stand-in Directory was told, and the card it fetched at that moment. */
export interface DirectoryNotice {
	method: "PUT" | "DELETE";
	participant: string;
	/** PUT: the card the registry answered when the Directory fetched it (null: it answered 404). */
	card: string | null;
}

export class StandInDirectory {
	readonly notices: DirectoryNotice[] = [];
	readonly malformed: string[] = [];
	down = false;
	url = "";
	/** Where it fetches cards: the registry's base URL (set by the test once the registry runs). */
	smpUrl = "";
	private server: https.Server | null = null;

	constructor(private readonly pki: TestPki) {}

	async start(): Promise<this> {
		this.server = https.createServer(serverOptions(this.pki), (request, response) => {
			if (this.down) return request.socket.destroy();
			void readBody(request).then(async (body) => {
				const url = request.url ?? "";
				let participant: string | null = null;
				if (
					request.method === "PUT" &&
					url === "/indexer/1.0/" &&
					/^text\/plain/.test(String(request.headers["content-type"]))
				)
					participant = body.trim();
				else if (request.method === "DELETE" && url.startsWith("/indexer/1.0/"))
					participant = decodeURIComponent(url.slice("/indexer/1.0/".length));
				if (!participant || !/^iso6523-actorid-upis::\d{4}:\S+$/.test(participant)) {
					this.malformed.push(`${request.method} ${url} ${body.slice(0, 100)}`);
					response.writeHead(400).end();
					return;
				}
				let card: string | null = null;
				if (request.method === "PUT") {
					const answer = await fetch(`${this.smpUrl}/businesscard/${encodeURIComponent(participant)}`);
					card = answer.status === 200 ? await answer.text() : null;
				}
				this.notices.push({ method: request.method as "PUT" | "DELETE", participant, card });
				response.writeHead(204).end();
			});
		});
		this.url = `https://127.0.0.1:${await listen(this.server)}`;
		return this;
	}

	/** The notices about one participant (`iso6523-actorid-upis::<icd>:<id>`). */
	about(participant: string): DirectoryNotice[] {
		return this.notices.filter((notice) => notice.participant === participant);
	}

	async stop(): Promise<void> {
		this.server?.closeAllConnections();
		await new Promise((resolve) => this.server?.close(resolve));
	}
}
