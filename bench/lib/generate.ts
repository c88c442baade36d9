/**
 * Deterministic benchmark participants (issue 7): participant `i` is a pure function of `i`,
 * so the data generator and the benchmark agree on the generated organizations without
 * reading the store, and `--participants 100000` holds the first 100,000 of the same
 * sequence that `--participants 1000000` holds.
 *
 * - Organization numbers: ICD 0192, 9 digits starting with 8 or 9, valid MOD11 (weights
 *   3,2,7,6,5,4,3,2). The first 7 digits are a permutation of the index (unique by
 *   construction); the 8th is chosen so that the check digit exists (it is never 10), and
 *   the seed's own organizations are never produced.
 * - Names: Norwegian-style, combined from word lists ("Fjellvind Bygg AS", "Solvik
 *   Regnskap AS", "Hansen & Berg Rør ANS"); about 1,700 distinct first words, so a name-word
 *   query matches a realistic handful, not a tenth of the registry.
 * - Contacts: a person's name, an address under `.example`, a valid +47 number.
 * - Processes: drawn from the seed's visible, unrestricted processes that need no dependency
 *   and no required ICD, so every row passes the participant rules; one service provider
 *   per organization, spread over the seed's providers.
 */
import { isValidPhoneNumber } from "libphonenumber-js";
import { isValidNorwegianOrganizationNumber } from "../../src/contract/identifiers";
import { seededRandom as random } from "../../test/support/seeded-random";

export interface SeedFile {
	serviceProviders: { identifier: string; title: string }[];
	accounts: { username: string; password: string; role: string; serviceProvider?: string }[];
	processes: {
		identifier: string;
		title?: string;
		visible?: boolean;
		restricted?: boolean;
		dependencies?: { identifier: string }[];
		requiredICDs?: string[];
	}[];
	participants?: { organizationIdentifier: string; icd: string }[];
	[section: string]: unknown;
}

export interface GeneratedParticipant {
	serviceProvider: string;
	icd: "0192";
	organizationIdentifier: string;
	name: string;
	processes: { identifier: string }[];
	contact: { name: string; email: string; phoneNumber: string };
}

/** Bumped when the generated data changes: cached data sets (npm run bench) are made again. */
export const GENERATOR_VERSION = 1;

/** Upper bound of the sequence (the permutation covers 2,000,000 seven-digit prefixes). */
export const MAX_PARTICIPANTS = 1_900_000;

// ---- word lists ------------------------------------------------------------------------

// prettier-ignore
const STEMS = [
	"Nord", "Sør", "Øst", "Vest", "Fjell", "Fjord", "Hav", "Skog", "Dal", "Vik", "Nes", "Berg", "Sol", "Lys", "Is", "Storm",
	"Vind", "Elv", "Bre", "Tind", "Ås", "Lund", "Myr", "Strand", "Holm", "Øy", "Li", "Mo", "Stein", "Furu", "Bjørk", "Gran",
	"Lyng", "Sjø", "Kyst", "Klippe", "Ørn", "Måke", "Rein", "Elg", "Ulv", "Bjørne", "Rev", "Laks", "Torsk", "Sild", "Midnatt",
	"Polar", "Morgen", "Kveld", "Vår", "Sommer", "Høst", "Vinter", "Kvit", "Blå", "Grønn", "Gull", "Sølv", "Kobber", "Jern",
	"Rose", "Eike", "Ask", "Hassel", "Lønne", "Rogn", "Brink",
];
// prettier-ignore
const ENDINGS = [
	"vik", "nes", "dal", "berg", "heim", "lund", "haug", "stad", "vind", "lys", "bakken", "moen", "åsen", "fjord", "holmen",
	"øy", "strand", "li", "land", "voll", "hagen", "sund", "tun", "kollen", "tind",
];
// prettier-ignore
const SURNAMES = [
	"Hansen", "Johansen", "Olsen", "Larsen", "Andersen", "Pedersen", "Nilsen", "Kristiansen", "Jensen", "Karlsen", "Johnsen",
	"Pettersen", "Eriksen", "Berg", "Haugen", "Hagen", "Johannessen", "Andreassen", "Jacobsen", "Dahl", "Jørgensen",
	"Halvorsen", "Henriksen", "Lund", "Sørensen", "Jakobsen", "Moen", "Gundersen", "Iversen", "Strand", "Solberg",
	"Svendsen", "Eide", "Knutsen", "Martinsen", "Paulsen", "Bakken", "Kristoffersen", "Mathisen", "Lie", "Amundsen",
	"Rasmussen", "Lunde", "Solheim", "Berge", "Moe", "Nygård", "Bakke", "Kristensen", "Fredriksen", "Holm", "Lien", "Hauge",
	"Christensen", "Andresen", "Nielsen", "Knudsen", "Evensen", "Sæther", "Aas", "Myhre", "Hanssen", "Haugland", "Thomassen",
	"Sivertsen", "Simonsen", "Danielsen", "Berntsen", "Sandvik", "Rønning", "Arnesen", "Antonsen", "Næss", "Vik", "Haug",
	"Ellingsen", "Thorsen", "Edvardsen", "Birkeland", "Isaksen", "Gulbrandsen", "Ruud", "Aasen", "Strøm", "Myklebust",
	"Tangen", "Ødegård", "Eliassen", "Helland", "Bøe", "Aune", "Mikkelsen", "Tveit", "Brekke", "Abrahamsen", "Madsen",
];
// prettier-ignore
const TRADES = [
	"Regnskap", "Bygg", "Transport", "Eiendom", "Consulting", "Elektro", "Rør", "Maskin", "Handel", "Data", "Invest", "Sjømat",
	"Fisk", "Trelast", "Revisjon", "Arkitekter", "Entreprenør", "Tannlegesenter", "Legesenter", "Bilverksted", "Bakeri",
	"Catering", "Rådgivning", "Økonomi", "Logistikk", "Shipping", "Marine", "Energi", "Kraft", "Design", "Reklame", "Media",
	"IT", "Teknologi", "Systemer", "Helse", "Omsorg", "Anlegg", "Maling", "Snekkeri", "Tak", "Ventilasjon", "Blikk", "Stål",
	"Betong", "Gartneri", "Landbruk", "Havbruk", "Reiseliv", "Hotell", "Sport", "Interiør", "Møbler", "Optikk", "Lønn",
	"Eiendomsmegling", "Utleie", "Renhold", "Sikkerhet", "Trafikkskole", "Flyttebyrå", "Kompetanse", "Holding", "Frisør",
];
const FORMS = ["AS", "AS", "AS", "AS", "AS", "AS", "AS", "AS", "ASA", "SA"];
// prettier-ignore
const FIRST_NAMES = [
	"Ingrid", "Per", "Kari", "Ola", "Anne", "Lars", "Marit", "Knut", "Silje", "Jon", "Hilde", "Bjørn", "Nina", "Erik", "Liv", "Tor",
	"Camilla", "Ole", "Ida", "Magnus", "Emma", "Jonas", "Nora", "Henrik", "Sofie", "Martin", "Ingvild", "Håkon", "Astrid",
	"Sindre", "Maja", "Eirik", "Tone", "Geir", "Randi", "Arne", "Hanne", "Terje", "Mona", "Rune", "Solveig", "Sigurd", "Åse",
	"Øystein", "Guro", "Vegard", "Synnøve", "Torbjørn", "Ragnhild", "Espen",
];
const MAILBOXES = ["post", "faktura", "regnskap", "okonomi", "firmapost"];

/** Numbers the registry would answer (Norway: landlines 2x, 3x, 5x, 6x, 7x; mobiles 4x, 9x). */
const PHONE_FIRST_DIGITS = ["2", "3", "4", "4", "5", "6", "7", "9", "9", "9"];

// ---- helpers ---------------------------------------------------------------------------

function pick<T>(next: () => number, list: readonly T[]): T {
	return list[Math.floor(next() * list.length)];
}

const WEIGHTS = [3, 2, 7, 6, 5, 4, 3, 2];

function checkDigit(first8: string): number {
	const sum = WEIGHTS.reduce((total, weight, index) => total + weight * Number(first8[index]), 0);
	const remainder = sum % 11;
	return remainder === 0 ? 0 : 11 - remainder;
}

/** Index → distinct 7-digit prefix 8000000…9999999 (multiplier coprime to 2,000,000). */
function prefixOf(index: number): number {
	return 8_000_000 + ((index * 1_234_567 + 424_242) % 2_000_000);
}

/** `+47 9x xx xx xx`, always valid for libphonenumber-js (checked; another draw otherwise). */
function phoneNumber(next: () => number): string {
	for (;;) {
		const digits = pick(next, PHONE_FIRST_DIGITS) + String(Math.floor(next() * 10_000_000)).padStart(7, "0");
		const formatted = `+47 ${digits.slice(0, 2)} ${digits.slice(2, 4)} ${digits.slice(4, 6)} ${digits.slice(6, 8)}`;
		if (isValidPhoneNumber(formatted)) return formatted;
	}
}

/** ASCII slug of a company name for its e-mail domain. */
function slug(text: string): string {
	return text
		.toLowerCase()
		.replace(/æ/g, "ae")
		.replace(/ø/g, "o")
		.replace(/å/g, "a")
		.normalize("NFD")
		.replace(/[\u0300-\u036f]/g, "")
		.replace(/[^a-z0-9]+/g, "-")
		.replace(/^-+|-+$/g, "")
		.slice(0, 60);
}

function companyName(next: () => number): string {
	const compound = () => `${pick(next, STEMS)}${pick(next, ENDINGS)}`;
	const form = pick(next, FORMS);
	const roll = next();
	if (roll < 0.6) return `${compound()} ${pick(next, TRADES)} ${form}`;
	if (roll < 0.8) return `${pick(next, SURNAMES)} ${pick(next, TRADES)} ${form}`;
	if (roll < 0.92) return `${compound()} ${form}`;
	return `${pick(next, SURNAMES)} & ${pick(next, SURNAMES)} ${pick(next, TRADES)} ANS`;
}

// ---- the generator ---------------------------------------------------------------------

export interface Generator {
	/** Processes a generated participant may hold (visible, unrestricted, no dependency, no required ICD). */
	processIds: string[];
	serviceProviders: string[];
	participant(index: number): GeneratedParticipant;
	organizationNumber(index: number): string;
}

export function eligibleProcesses(seed: SeedFile): string[] {
	return seed.processes
		.filter(
			(process) =>
				process.visible !== false &&
				process.restricted !== true &&
				!process.dependencies?.length &&
				!process.requiredICDs?.length,
		)
		.map((process) => process.identifier.toLowerCase());
}

export function createGenerator(seed: SeedFile): Generator {
	const processIds = eligibleProcesses(seed);
	if (processIds.length === 0) throw new Error("the seed has no process a generated participant may hold");
	const serviceProviders = seed.serviceProviders.map((provider) => provider.identifier.toLowerCase());
	const taken = new Set(
		(seed.participants ?? []).filter((row) => row.icd === "0192").map((row) => row.organizationIdentifier),
	);
	const billing = processIds[0];

	const organizationNumber = (index: number): string => {
		if (!Number.isInteger(index) || index < 0 || index >= MAX_PARTICIPANTS)
			throw new RangeError(`participant index ${index} outside 0…${MAX_PARTICIPANTS - 1}`);
		const prefix = String(prefixOf(index));
		const next = random(index ^ 0x5bd1e995);
		const start = Math.floor(next() * 10);
		// At most one 8th digit makes the check digit 10, and the seed has a handful of numbers:
		// the next digit round is always found.
		for (let step = 0; step < 10; step++) {
			const first8 = prefix + String((start + step) % 10);
			const check = checkDigit(first8);
			if (check === 10) continue;
			const number = first8 + String(check);
			if (taken.has(number)) continue;
			if (!isValidNorwegianOrganizationNumber(number))
				throw new Error(`generated an invalid organization number ${number}`);
			return number;
		}
		throw new Error(`no organization number for index ${index}`);
	};

	const participant = (index: number): GeneratedParticipant => {
		const next = random(index * 2654435761);
		const name = companyName(next);
		const chosen = new Set<string>();
		if (next() < 0.9) chosen.add(billing);
		const extra = Math.floor(next() * 3) + (chosen.size === 0 ? 1 : 0);
		for (let n = 0; n < extra; n++) chosen.add(pick(next, processIds));
		const first = pick(next, FIRST_NAMES);
		const last = pick(next, SURNAMES);
		return {
			serviceProvider: serviceProviders[Math.floor(next() * serviceProviders.length)],
			icd: "0192",
			organizationIdentifier: organizationNumber(index),
			name,
			processes: [...chosen].map((identifier) => ({ identifier })),
			contact: {
				name: `${first} ${last}`,
				email: `${pick(next, MAILBOXES)}@${slug(name) || "firma"}.example`,
				phoneNumber: phoneNumber(next),
			},
		};
	};

	return { processIds, serviceProviders, participant, organizationNumber };
}

/** The lookup path of an organization (the hot, anonymous endpoint). */
export function qualifiedIdentifier(organizationNumber: string): string {
	return `iso6523-actorid-upis::0192:${organizationNumber}`;
}

/** Words of the generated names a name-word query can use (the compounds and surnames). */
export function nameWords(): string[] {
	const compounds = STEMS.flatMap((stem) => ENDINGS.map((ending) => `${stem}${ending}`));
	return [...compounds, ...SURNAMES];
}
