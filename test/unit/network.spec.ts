/**
 * The network service's pure parts (decisions §14): the participants' DNS names with the examples
 * of peppol-reference.md, the SML's SOAP bodies and answers, how a delivery's outcome is recorded
 * (back-off, parking), and the configuration's refusals at start.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DOMParser } from "@xmldom/xmldom";
import { networkConfig } from "../../services/network/connections";
import { isGone, retryDelayMs, settle, stateOf, type RetryPolicy } from "../../services/network/delivery";
import { participantDnsNames } from "../../services/network/dns-names";
import { newOrganizationDoc } from "../../services/network/model";
import {
	answerOf,
	IDENTIFIERS_NS,
	LOCATOR_NS,
	participantPageOf,
	smlCalls,
	SmlFault,
	smpRecordOf,
} from "../../services/network/sml-soap";

describe("the DNS names the SML publishes", () => {
	const zone = "participant.sml.prod.tech.peppol.org";

	it("0088:1234567890123 gives the NAPTR label of peppol-commons' tests", () => {
		expect(participantDnsNames("0088:1234567890123", zone).naptr).toBe(
			`sjsyvccmqyjxk3weuapffq4x3umcrf4qryherj4vovhmonh7gccq.iso6523-actorid-upis.${zone}`,
		);
	});

	it("0088:123abc gives the NAPTR and legacy CNAME labels of peppol-commons' tests", () => {
		expect(participantDnsNames("0088:123abc", zone)).toEqual({
			naptr: `y7dzfxaf3d4cjz4kcgrxtec6twvcga4ky7zwa5boif6mswd4tdrq.iso6523-actorid-upis.${zone}`,
			cname: `B-f5e78500450d37de5aabe6648ac3bb70.iso6523-actorid-upis.${zone}`,
		});
	});

	it("the value is lower-cased, and a zone written with its trailing dot is joined with one dot and none after", () => {
		expect(participantDnsNames("0088:123ABC", `${zone}.`)).toEqual(participantDnsNames("0088:123abc", zone));
	});
});

describe("the SML's SOAP messages", () => {
	const parse = (xml: string) => new DOMParser().parseFromString(xml, "text/xml");

	it("CreateParticipantIdentifier: the SMP identifier, then the participant with its scheme, in the WSDL's namespaces", () => {
		const call = smlCalls.create("SMP-1", "0192:991825827");
		expect(call.endpoint).toBe("manageparticipantidentifier");
		expect(call.action).toBe(
			"http://busdox.org/serviceMetadata/ManageBusinessIdentifierService/1.0/         :createIn",
		);
		const body = parse(call.body).getElementsByTagNameNS(LOCATOR_NS, "CreateParticipantIdentifier")[0];
		const id = body.getElementsByTagNameNS(IDENTIFIERS_NS, "ParticipantIdentifier")[0];
		expect(id.getAttribute("scheme")).toBe("iso6523-actorid-upis");
		expect(id.textContent).toBe("0192:991825827");
		expect(body.getElementsByTagNameNS(LOCATOR_NS, "ServiceMetadataPublisherID")[0].textContent).toBe("SMP-1");
	});

	it("CreateList holds every participant and the SMP identifier; values are escaped", () => {
		const call = smlCalls.createList("SMP-1", ["0192:1", "0088:a<b"]);
		const body = parse(call.body).getElementsByTagNameNS(LOCATOR_NS, "CreateList")[0];
		const values = Array.from(body.getElementsByTagNameNS(IDENTIFIERS_NS, "ParticipantIdentifier")).map(
			(element) => element.textContent,
		);
		expect(values).toEqual(["0192:1", "0088:a<b"]);
	});

	it("a typed fault is read with its message; a create's 'already exists' and a delete's NotFound are done", () => {
		const fault = (kind: string, message: string) =>
			`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><S:Fault><faultcode>S:Server</faultcode>` +
			`<faultstring>${message}</faultstring><detail><${kind} xmlns="${LOCATOR_NS}"><FaultMessage>${message}</FaultMessage>` +
			`</${kind}></detail></S:Fault></S:Body></S:Envelope>`;
		const thrown = (xml: string) => {
			try {
				answerOf(xml);
			} catch (error) {
				return error as SmlFault;
			}
			throw new Error("no fault");
		};
		const exists = thrown(fault("BadRequestFault", "The participant identifier '0192:1' already exist"));
		expect(exists).toBeInstanceOf(SmlFault);
		expect([exists.kind, exists.alreadyExists, exists.doesNotExist]).toEqual(["BadRequestFault", true, false]);
		expect(thrown(fault("NotFoundFault", "doesn't exist")).doesNotExist).toBe(true);
		expect(thrown(fault("UnauthorizedFault", "not yours")).alreadyExists).toBe(false);
		expect(() => answerOf("<html>gateway timeout</html>")).toThrow(/not a SOAP 1.1 envelope/);
	});

	it("a Read answer gives the SMP record; a List page its values and next page", () => {
		const envelope = (payload: string) =>
			`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>${payload}</S:Body></S:Envelope>`;
		expect(
			smpRecordOf(
				answerOf(
					envelope(
						`<ServiceMetadataPublisherService xmlns="${LOCATOR_NS}"><PublisherEndpoint><LogicalAddress>https://smp</LogicalAddress>` +
							`<PhysicalAddress>192.0.2.1</PhysicalAddress></PublisherEndpoint><ServiceMetadataPublisherID>SMP-1</ServiceMetadataPublisherID></ServiceMetadataPublisherService>`,
					),
				),
			),
		).toEqual({ smpId: "SMP-1", logicalAddress: "https://smp", physicalAddress: "192.0.2.1" });
		const page = participantPageOf(
			answerOf(
				envelope(
					`<ParticipantIdentifierPage xmlns="${LOCATOR_NS}" xmlns:ids="${IDENTIFIERS_NS}">` +
						`<ids:ParticipantIdentifier scheme="iso6523-actorid-upis">0192:991825827</ids:ParticipantIdentifier>` +
						`<ids:ParticipantIdentifier scheme="other-scheme">x</ids:ParticipantIdentifier>` +
						`<NextPageIdentifier>2</NextPageIdentifier></ParticipantIdentifierPage>`,
				),
			),
		);
		expect(page).toEqual({ values: ["0192:991825827"], nextPage: "2" });
	});
});

describe("recording a delivery's outcome", () => {
	const policy: RetryPolicy = { firstDelayMs: 1000, maxDelayMs: 60_000, parkAfterMs: 24 * 3600_000, waitMs: 250 };
	const now = new Date("2026-12-04T10:00:00.000Z");
	const due = "2026-12-04T09:59:00.000Z";
	const claimed = { ...newOrganizationDoc("0192:991825827"), smlDue: due };

	it("done: registered, nothing due; a newer change that came meanwhile stays due", () => {
		const done = settle(claimed, "sml", { kind: "done", present: true }, due, now, policy);
		expect([done.smlDue, done.smlFailing, stateOf(done, "sml", true)]).toEqual([null, false, "registered"]);
		const askedAgain = { ...claimed, smlDue: now.toISOString() };
		expect(settle(askedAgain, "sml", { kind: "done", present: true }, due, now, policy).smlDue).toBe(
			now.toISOString(),
		);
	});

	it("failed: retried after a doubling wait up to the longest, failing with the message; parked after the patience", () => {
		expect([1, 2, 3, 10].map((attempts) => retryDelayMs(attempts, policy))).toEqual([1000, 2000, 4000, 60_000]);
		const failed = settle(claimed, "sml", { kind: "failed", message: "SML down" }, due, now, policy);
		expect(failed.smlDue).toBe("2026-12-04T10:00:01.000Z");
		expect([failed.smlFailing, failed.smlParked, failed.sml.message, stateOf(failed, "sml", true)]).toEqual([
			true,
			false,
			"SML down",
			"failing",
		]);
		const aDayLater = new Date(now.getTime() + policy.parkAfterMs);
		const parked = settle(failed, "sml", { kind: "failed", message: "still" }, failed.smlDue, aDayLater, policy);
		expect([parked.smlParked, parked.smlDue, parked.sml.failingSince]).toEqual([true, null, now.toISOString()]);
	});

	it("an organization neither target holds, with nothing due, is gone; off targets show off", () => {
		const deleted = settle(claimed, "sml", { kind: "done", present: false }, due, now, policy);
		expect(isGone(deleted)).toBe(true);
		expect(stateOf(deleted, "directory", false)).toBe("off");
	});
});

describe("the configuration at start", () => {
	const saved = { ...process.env };
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-network-config-"));
	const pem = path.join(dir, "client.pem");
	fs.writeFileSync(pem, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
	const complete = {
		SML_URL: "https://sml.example/edelivery-sml",
		SML_SMP_ID: "SMP-1",
		SMP_PUBLIC_URL: "https://smp.example",
		SML_PHYSICAL_ADDRESS: "192.0.2.1",
		SML_CLIENT_KEY_FILE: pem,
		SML_CLIENT_CERTIFICATE_FILE: pem,
	};
	const withEnv = (values: Record<string, string>) => {
		for (const key of Object.keys(complete)) delete process.env[key];
		Object.assign(process.env, values);
		return () => networkConfig();
	};
	afterEach(() => {
		for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
		Object.assign(process.env, saved);
	});
	afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

	it("nothing set: both off", () => {
		const config = withEnv({})();
		expect([config.sml, config.directory, config.zone]).toEqual([
			null,
			null,
			"participant.sml.prod.tech.peppol.org",
		]);
	});

	it("every refusal names what is wrong", () => {
		expect(withEnv(complete)().sml?.record).toEqual({
			smpId: "SMP-1",
			logicalAddress: "https://smp.example",
			physicalAddress: "192.0.2.1",
		});
		expect(withEnv({ ...complete, SML_SMP_ID: "" })).toThrow(/SML_SMP_ID is required/);
		expect(withEnv({ ...complete, SMP_PUBLIC_URL: "" })).toThrow(/SMP_PUBLIC_URL is required/);
		expect(withEnv({ ...complete, SML_PHYSICAL_ADDRESS: "smp.example" })).toThrow(/IPv4/);
		expect(withEnv({ ...complete, SML_URL: "http://sml.example" })).toThrow(/https/);
		expect(withEnv({ ...complete, SML_CLIENT_KEY_FILE: path.join(dir, "missing.pem") })).toThrow(
			/SML_CLIENT_KEY_FILE \(.*missing\.pem\) cannot be read: ENOENT/,
		);
		expect(withEnv({ ...complete, SML_CLIENT_CERTIFICATE_FILE: "" })).toThrow(
			/SML_CLIENT_CERTIFICATE_FILE is required/,
		);
		expect(withEnv({ DIRECTORY_URL: "https://directory.example" })).toThrow(/SML_CLIENT_KEY_FILE is required/);
	});
});
