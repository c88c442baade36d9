/** The README's tables are for people; these tests keep them in step with the code. */
import fs from "node:fs";
import path from "node:path";
import { OPERATIONS } from "../../src/contract/operations";
import { ENV_VARS } from "../../src/config/settings";

const readme = fs.readFileSync(path.join(__dirname, "..", "..", "README.md"), "utf8");

function tableAfter(heading: string): string[][] {
	const section = readme.slice(readme.indexOf(heading));
	return section
		.split("\n")
		.filter((line) => line.startsWith("|") && !line.startsWith("|---"))
		.slice(1)
		.map((line) =>
			line
				.split("|")
				.slice(1, -1)
				.map((cell) => cell.trim()),
		)
		.filter((cells, index, rows) => index === 0 || rows[index - 1].length === cells.length)
		.slice(0, 200);
}

describe("README", () => {
	test("the media type table names every operation's media types, and no other", () => {
		const section = readme.slice(readme.indexOf("## Media types"), readme.indexOf("## Configuration"));
		const rows = section
			.split("\n")
			.filter((line) => line.startsWith("| "))
			.map((line) =>
				line
					.split("|")
					.slice(1, -1)
					.map((cell) => cell.trim()),
			)
			.filter(
				(cells) =>
					cells.length === 3 && /^(application|text)\//.test(cells[2]) && cells[2] !== "application/json",
			);
		const documented = new Set(rows.flatMap((cells) => cells[2].match(/(application|text)\/[a-z0-9.+-]+/g) ?? []));
		const spellings = (cells: string[]) =>
			cells[2]
				.match(/`([a-z.-]+)`/g)
				?.map((word) => `application/vnd.registry.${word.replace(/`/g, "")}.v1+json`) ?? [];
		rows.forEach((cells) => spellings(cells).forEach((mediaType) => documented.add(mediaType)));
		expect([...documented].sort()).toEqual(
			[...new Set(OPERATIONS.flatMap((operation) => operation.mediaTypes))].sort(),
		);
	});

	test("the configuration table lists every environment variable the code reads", () => {
		// A row may name several related variables: `NATS_USER`, `NATS_PASSWORD`.
		const names = tableAfter("## Configuration")
			.flatMap((cells) => cells[0].replace(/`/g, "").split(/,\s*/))
			.filter((name) => /^[A-Z_]+$/.test(name));
		expect(names.sort()).toEqual(ENV_VARS.map((variable) => variable.name).sort());
	});

	test("shows the install-and-start and install-and-test commands", () => {
		expect(readme).toContain("npm ci && npm start");
		expect(readme).toContain("npm ci && npm test");
	});
});
