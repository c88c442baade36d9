/**
 * Business cards in the tests (test/unit/business-card.spec.ts, test/integration/businesscard.http.spec.ts):
 * Debian's xmllint (libxml2-utils) validates each against the BusinessCard V3 schema written from
 * peppol-reference.md (test/fixtures/business-card-v3.xsd), and the card read back with @xmldom/xmldom.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseXml } from "./smp";

export const BUSINESS_CARD = "http://www.peppol.eu/schema/pd/businesscard/20180621/";
export const BUSINESS_CARD_SCHEMA = path.join(__dirname, "..", "fixtures", "business-card-v3.xsd");

export const XMLLINT = process.env.TEST_XMLLINT ?? "/usr/bin/xmllint";
const xmllintMissing = !fs.existsSync(XMLLINT);
if (xmllintMissing && process.env.CI === "true")
	throw new Error(`CI=true and ${XMLLINT} missing: install Debian's libxml2-utils package (.ci/run)`);
// eslint-disable-next-line no-console
if (xmllintMissing) console.warn(`xmllint checks skipped: ${XMLLINT} not installed (Debian package libxml2-utils)`);
export const withXmllint = xmllintMissing ? test.skip : test;
export const xmllintAvailable = !xmllintMissing;

/** `xmllint --noout --schema` on the card: status 0 when it validates, with what xmllint said. */
export function validateCard(xml: string): { status: number | null; output: string } {
	const result = spawnSync(XMLLINT, ["--noout", "--schema", BUSINESS_CARD_SCHEMA, "-"], {
		input: xml,
		encoding: "utf8",
		timeout: 30_000,
	});
	return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

export interface CardEntity {
	name: string;
	countryCode: string;
	identifiers: string[];
	registrationDate: string | null;
}

/** The card as data: its participant (`scheme::value`) and its entities in document order. */
export function readCard(xml: string): { participant: string; entities: CardEntity[] } {
	const document = parseXml(xml);
	const root = document.documentElement;
	if (!root || root.namespaceURI !== BUSINESS_CARD || root.localName !== "BusinessCard")
		throw new Error(`not a BusinessCard V3: ${xml.slice(0, 200)}`);
	const [participant] = Array.from(root.getElementsByTagNameNS(BUSINESS_CARD, "ParticipantIdentifier"));
	const entities = Array.from(root.getElementsByTagNameNS(BUSINESS_CARD, "BusinessEntity")).map((entity) => {
		const text = (name: string) =>
			Array.from(entity.getElementsByTagNameNS(BUSINESS_CARD, name)).map((element) => element.textContent ?? "");
		return {
			name: text("Name").join("|"),
			countryCode: text("CountryCode").join("|"),
			identifiers: Array.from(entity.getElementsByTagNameNS(BUSINESS_CARD, "Identifier")).map(
				(element) => `${element.getAttribute("scheme")}::${element.textContent}`,
			),
			registrationDate: entity.getAttribute("registrationDate"),
		};
	});
	return { participant: `${participant.getAttribute("scheme")}::${participant.textContent}`, entities };
}
