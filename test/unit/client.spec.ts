/**
 * The typed client (client/) is current and speaks the registry's media types (issue 9):
 * client/openapi.json is the document the registry generates now, regenerating the types
 * from it gives exactly the committed client/schema.d.ts, and every operation of the table
 * gets its Accept and Content-Type from the document.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openApiText } from "../../cli/openapi";
import { createRegistryClient, MEDIA_TYPES, mediaTypesOf, type HttpMethod } from "../../client";
import { fullPathOf, OPERATIONS, SORTABLE, type Operation } from "../../src/contract/operations";

const ROOT = path.join(__dirname, "..", "..");
const CLIENT = path.join(ROOT, "client");
const REGENERATE = "the client is stale: run `npm run client:generate` and commit client/";

describe("generated client is current", () => {
	test("client/openapi.json is the document the registry generates", () => {
		const committed = fs.readFileSync(path.join(CLIENT, "openapi.json"), "utf8");
		if (committed !== openApiText()) throw new Error(REGENERATE);
	});

	test("openapi-typescript on that document gives exactly client/schema.d.ts", () => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-client-"));
		try {
			const input = path.join(dir, "openapi.json");
			const output = path.join(dir, "schema.d.ts");
			fs.writeFileSync(input, openApiText());
			execFileSync(
				process.execPath,
				[
					path.join(path.dirname(require.resolve("openapi-typescript/package.json")), "bin", "cli.js"),
					input,
					"--output",
					output,
				],
				{ cwd: ROOT, stdio: "pipe" },
			);
			const committed = fs.readFileSync(path.join(CLIENT, "schema.d.ts"), "utf8");
			if (fs.readFileSync(output, "utf8") !== committed) throw new Error(REGENERATE);
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	}, 30000);
});

describe("media types come from the document and agree with the operations table", () => {
	const documentPath = (operation: Operation) => fullPathOf(operation).replace(/:([A-Za-z]+)/g, "{$1}");

	test.each(OPERATIONS.map((operation) => [operation.id, operation] as const))("%s", (_id, operation) => {
		const entry = MEDIA_TYPES[`${operation.method} ${documentPath(operation)}`];
		const group = OPERATIONS.filter((other) => other.method === operation.method && other.path === operation.path);
		const answers = group.some((other) => other.response);
		if (!answers && !operation.body) {
			expect(entry).toBeUndefined(); // 204s and the transfer answer no body
			return;
		}
		if (answers && operation.response)
			for (const mediaType of operation.mediaTypes) expect(entry.accept).toContain(mediaType);
		// The Accept sent by default is the one the registry itself picks for a generic Accept.
		if (answers)
			expect(entry.defaultAccept).toBe((group.find((other) => other.isDefault) ?? group[0]).mediaTypes[0]);
		if (operation.body) expect(entry.contentType).toBe(operation.mediaTypes[0]);
		else expect(entry.contentType).toBeUndefined();
	});
});

describe("createRegistryClient", () => {
	const seen: Request[] = [];
	const fakeFetch = async (request: Request) => {
		seen.push(request);
		return new Response(JSON.stringify({}), { status: 200, headers: { "Content-Type": "application/json" } });
	};
	beforeEach(() => seen.splice(0));

	test("sends the operation's media type as Accept, and Basic credentials", async () => {
		const registry = createRegistryClient("http://registry.test/", { username: "sp1", password: "pässword" });
		await registry.GET("/rest/api/processes/{identifier}", {
			params: { path: { identifier: "55555555-0000-4000-8000-000000000001" } },
			fetch: fakeFetch,
		});
		expect(seen[0].url).toBe("http://registry.test/rest/api/processes/55555555-0000-4000-8000-000000000001");
		expect(seen[0].headers.get("Accept")).toBe("application/vnd.registry.processes.get.v1+json");
		expect(seen[0].headers.get("Authorization")).toBe(
			`Basic ${Buffer.from("sp1:pässword", "utf8").toString("base64")}`,
		);
	});

	test("a body goes with the operation's media type as Content-Type", async () => {
		const registry = createRegistryClient("http://registry.test");
		await registry.POST("/rest/api/document-types", { body: { title: "Catalogue" }, fetch: fakeFetch });
		expect(seen[0].headers.get("Content-Type")).toBe("application/vnd.registry.document-types.add.v1+json");
		expect(seen[0].headers.get("Accept")).toBe("application/vnd.registry.document-types.add.v1+json");
		expect(seen[0].headers.get("Authorization")).toBeNull();
		await expect(seen[0].json()).resolves.toEqual({ title: "Catalogue" });
	});

	test("several forms on one path: the paged one by default, the caller's Accept when given", async () => {
		const registry = createRegistryClient("http://registry.test");
		await registry.GET("/rest/api/participants", {
			params: { query: { sort: ["name", "registrationDate,DESC"], processes: true } },
			fetch: fakeFetch,
		});
		expect(seen[0].headers.get("Accept")).toBe("application/vnd.registry.participants.find.v1+json");
		expect(new URL(seen[0].url).search).toBe("?sort=name&sort=registrationDate%2CDESC&processes=true");
		const stream = mediaTypesOf("GET" as HttpMethod, "/rest/api/participants").accept.find((mediaType) =>
			mediaType.includes(".stream."),
		) as string;
		await registry.GET("/rest/api/participants", { headers: { Accept: stream }, fetch: fakeFetch });
		expect(seen[1].headers.get("Accept")).toBe("application/vnd.registry.participants.stream.v1+json");
	});

	test("qualified identifiers in paths are percent-encoded", async () => {
		const registry = createRegistryClient("http://registry.test");
		await registry.GET("/rest/api/organizations/{qualifiedIdentifier}/processes", {
			params: { path: { qualifiedIdentifier: "iso6523-actorid-upis::0192:991825827" } },
			fetch: fakeFetch,
		});
		expect(seen[0].url).toBe(
			"http://registry.test/rest/api/organizations/iso6523-actorid-upis%3A%3A0192%3A991825827/processes",
		);
		expect(seen[0].headers.get("Accept")).toBe("application/vnd.registry.organizations.processes.v1+json");
	});
});

describe("docs/client-guide.md keeps up with the operations table", () => {
	const guide = fs.readFileSync(path.join(ROOT, "docs", "client-guide.md"), "utf8");

	test("the roles table lists every operation with its roles", () => {
		const rows = guide
			.split("\n")
			.filter((line) => /^\| .* \| `(GET|POST|PUT|DELETE) \//.test(line))
			.map((line) =>
				line
					.split("|")
					.slice(1, -1)
					.map((cell) => cell.trim()),
			);
		const expected = OPERATIONS.map((operation) => [
			operation.summary,
			`\`${operation.method} ${fullPathOf(operation).replace(/:([A-Za-z]+)/g, "{$1}")}\``,
			operation.roles.join(", "),
		]);
		expect(rows).toEqual(expected);
	});

	test("the sortable names are the table's", () => {
		for (const names of Object.values(SORTABLE)) {
			const row = Object.keys(names)
				.map((name) => `\`${name}\``)
				.join(", ");
			expect(guide).toContain(`| ${row} |`);
		}
	});
});
