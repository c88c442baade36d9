/**
 * The business card builder (src/contract/business-card.ts, decisions §14) and what the lookup's
 * read model keeps for it (services/lookup/read-model.ts): BusinessCard V3 as Debian's xmllint
 * judges it against the schema written from peppol-reference.md, the same bytes for the same
 * entities in any order, every text escaped; REGISTRY_COUNTRY checked at start.
 */
import { businessCardXml, type BusinessEntity } from "../../src/contract/business-card";
import { registryCountry } from "../../src/config/settings";
import type { ParticipantChange } from "../../src/platform/channels";
import {
	applyChange,
	businessEntitiesOf,
	mergeParticipantSets,
	type OrganizationProcessesDoc,
} from "../../services/lookup/read-model";
import { readCard, validateCard, withXmllint } from "../support/business-card";

const NORDLYS: BusinessEntity = {
	name: "Nordlys Regnskap AS",
	registrationDate: "2024-03-01",
	icd: "0192",
	organizationIdentifier: "991825827",
};
const SECOND: BusinessEntity = {
	...NORDLYS,
	name: "Nordlys Regnskap, avdeling Tromsø",
	registrationDate: "2024-05-17",
};

describe("businessCardXml", () => {
	test("writes the participant and one BusinessEntity with name, country, identifier under its ICD and registration date", () => {
		const xml = businessCardXml("0192:991825827", [NORDLYS], "NO");
		expect(xml).toBe(
			'<?xml version="1.0" encoding="UTF-8"?>' +
				'<BusinessCard xmlns="http://www.peppol.eu/schema/pd/businesscard/20180621/">' +
				'<ParticipantIdentifier scheme="iso6523-actorid-upis">0192:991825827</ParticipantIdentifier>' +
				'<BusinessEntity registrationDate="2024-03-01"><Name>Nordlys Regnskap AS</Name><CountryCode>NO</CountryCode>' +
				'<Identifier scheme="0192">991825827</Identifier></BusinessEntity></BusinessCard>',
		);
	});

	test("the same entities in any order give the same bytes, sorted by registration date, then name, then identifier", () => {
		const third = { ...NORDLYS, name: "Aaa", registrationDate: "2024-05-17" };
		const fourth = { ...third, organizationIdentifier: "991825827X" };
		const orders = [
			[NORDLYS, SECOND, third, fourth],
			[fourth, third, SECOND, NORDLYS],
			[SECOND, fourth, NORDLYS, third],
		];
		const cards = orders.map((entities) => businessCardXml("0192:991825827", entities, "NO"));
		expect(new Set(cards).size).toBe(1);
		expect(
			readCard(cards[0]).entities.map((entity) => [entity.registrationDate, entity.name, entity.identifiers]),
		).toEqual([
			["2024-03-01", "Nordlys Regnskap AS", ["0192::991825827"]],
			["2024-05-17", "Aaa", ["0192::991825827"]],
			["2024-05-17", "Aaa", ["0192::991825827X"]],
			["2024-05-17", "Nordlys Regnskap, avdeling Tromsø", ["0192::991825827"]],
		]);
	});

	test("escapes every text and attribute: markup, quotes, line breaks, characters XML cannot carry", () => {
		const name = `A&B <"Fisk"> 'AS'\n\tx\u0001y`;
		const xml = businessCardXml(
			"0088:a&b<c>",
			[{ ...NORDLYS, name, icd: '0"88', organizationIdentifier: "a&b<c>" }],
			"NO",
		);
		expect(xml).not.toContain("\u0001");
		expect(xml).toContain("A&amp;B &lt;&quot;Fisk&quot;&gt; 'AS'&#10;&#9;x\uFFFDy");
		const card = readCard(xml);
		expect(card.participant).toBe("iso6523-actorid-upis::0088:a&b<c>");
		expect(card.entities[0].name).toBe(`A&B <"Fisk"> 'AS'\n\tx\uFFFDy`);
		expect(card.entities[0].identifiers).toEqual(['0"88::a&b<c>']);
	});

	test("a participant without a name shows its organization identifier (the Directory wants a name)", () => {
		const card = readCard(
			businessCardXml(
				"0192:991825827",
				[
					{ ...NORDLYS, name: "" },
					{ ...SECOND, name: "  " },
				],
				"SE",
			),
		);
		expect(card.entities.map((entity) => [entity.name, entity.countryCode])).toEqual([
			["991825827", "SE"],
			["991825827", "SE"],
		]);
	});

	withXmllint("xmllint validates each card against BusinessCard V3: none, one and two entities, awkward text", () => {
		const cards = [
			businessCardXml("0192:991825827", [], "NO"),
			businessCardXml("0192:991825827", [NORDLYS], "NO"),
			businessCardXml("0192:991825827", [NORDLYS, SECOND], "NO"),
			businessCardXml(
				"0088:a&b<c>",
				[{ ...NORDLYS, name: `&<>"'\u0000\r\n`, organizationIdentifier: "a&b<c>" }],
				"NO",
			),
			businessCardXml("0192:991825827", [{ ...NORDLYS, name: "" }], "NO"),
		];
		for (const xml of cards) expect(validateCard(xml)).toMatchObject({ status: 0 });
	});

	withXmllint("the schema refuses what V3 refuses: an empty name, no country, a date that is not xs:date", () => {
		const good = businessCardXml("0192:991825827", [NORDLYS], "NO");
		for (const bad of [
			good.replace("<Name>Nordlys Regnskap AS</Name>", "<Name></Name>"),
			good.replace("<CountryCode>NO</CountryCode>", ""),
			good.replace('registrationDate="2024-03-01"', 'registrationDate="2024-03-01T00:00:00Z"'),
			good.replace("<CountryCode>NO</CountryCode>", "<CountryCode>NOR</CountryCode>"),
		])
			expect(validateCard(bad).status).not.toBe(0);
	});
});

describe("REGISTRY_COUNTRY", () => {
	test("is NO by default, upper-cased when given in lower case", () => {
		expect(registryCountry({})).toBe("NO");
		expect(registryCountry({ REGISTRY_COUNTRY: "se" })).toBe("SE");
	});

	test.each(["NOR", "Norway", "XX", "ZZ", "EU", "1A", " "])("%p is a clear error", (value) => {
		expect(() => registryCountry({ REGISTRY_COUNTRY: value })).toThrow(
			/REGISTRY_COUNTRY must be an ISO 3166-1 alpha-2 country code/,
		);
	});
});

describe("the lookup's read model keeps what a card needs", () => {
	const facts = {
		name: "Havblikk Fiskeri AS",
		registrationDate: "2023-11-30",
		icd: "0192",
		organizationIdentifier: "986252932",
	};
	const change = (over: Partial<ParticipantChange>): ParticipantChange => ({
		participant: "p1",
		incarnation: "i1",
		organizationKey: "0192:986252932",
		processes: ["billing"],
		version: 1,
		deleted: false,
		serviceProvider: "sp2",
		...facts,
		...over,
	});

	test("a change's facts reach the entities; a rename is a newer version; a delete leaves no live participant (null)", () => {
		let doc = applyChange(null, change({}));
		expect(businessEntitiesOf(doc)).toEqual([facts]);
		doc = applyChange(doc, change({ participant: "p2", incarnation: "i2", name: "Havblikk AS" }));
		expect(businessEntitiesOf(doc)).toEqual([facts, { ...facts, name: "Havblikk AS" }]);
		doc = applyChange(doc, change({ version: 2, name: "Havblikk Fiskeri og Sjømat AS" }));
		expect(businessEntitiesOf(doc)?.map((entity) => entity.name)).toEqual([
			"Havblikk Fiskeri og Sjømat AS",
			"Havblikk AS",
		]);
		for (const [participant, incarnation, version] of [
			["p1", "i1", 3],
			["p2", "i2", 2],
		] as const)
			doc = applyChange(doc, {
				participant,
				incarnation,
				organizationKey: "0192:986252932",
				processes: [],
				version,
				deleted: true,
			});
		expect(businessEntitiesOf(doc)).toBeNull();
		expect(businessEntitiesOf(null)).toBeNull();
	});

	test("a model written before the facts existed: the holder has no entity until a rebuild's read fills them in at the same version", () => {
		const old: OrganizationProcessesDoc = {
			identifier: "0192:986252932",
			version: 4,
			holders: { p1: { processes: ["billing"], version: 3, serviceProvider: "sp2", incarnation: "i1" } },
		};
		expect(businessEntitiesOf(old)).toEqual([]);
		const { deleted: _deleted, ...set } = change({ version: 3 });
		const rebuilt = mergeParticipantSets(old, "0192:986252932", [set]);
		expect(businessEntitiesOf(rebuilt)).toEqual([facts]);
		// Once filled in, the same read changes nothing more.
		expect(mergeParticipantSets(rebuilt, "0192:986252932", [set])).toBeNull();
		// A change without the facts (written before them) at the same version does not take them away.
		const { name: _n, registrationDate: _r, icd: _i, organizationIdentifier: _o, ...bare } = change({ version: 3 });
		expect(applyChange(rebuilt, bare)).toBeNull();
	});
});
