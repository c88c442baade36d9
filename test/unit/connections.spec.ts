/**
 * The options every NATS and Redis connection of the registry is built from
 * (src/platform/connections.ts): credentials from the URL or the NATS_* / REDIS_* variables,
 * TLS files, one way to log in to NATS, and addresses shown without their secrets.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { placeholderSecrets } from "../../src/config/settings";
import {
	checkCredentials,
	natsConnectionOptions,
	redact,
	redisConnectionOptions,
	refusePlaceholderSecrets,
} from "../../src/platform/connections";

describe("redact", () => {
	test("masks the user information of every URL, keeps the addresses", () => {
		expect(redact("nats://reg:p%40ss@nats-1:4222,nats://reg:p%40ss@nats-2:4222")).toBe(
			"nats://***@nats-1:4222,nats://***@nats-2:4222",
		);
		expect(redact("redis://:secret@redis:6379/2")).toBe("redis://***@redis:6379/2");
		expect(redact("failed: mongodb://u:p@mongo:27017/registry")).toBe("failed: mongodb://***@mongo:27017/registry");
		expect(redact("nats://nats:4222")).toBe("nats://nats:4222");
		expect(redact("nats://reg:p@ss@nats:4222,nats://n2:4222")).toBe("nats://***@nats:4222,nats://n2:4222");
	});
});

describe("NATS connection options", () => {
	test("user and password from the URL (percent-decoded), or from NATS_USER/NATS_PASSWORD, which win", () => {
		expect(natsConnectionOptions({ TRANSPORTER: "nats://reg:s%40cret@n1:4222,nats://n2:4222" })).toEqual({
			servers: ["n1:4222", "n2:4222"],
			user: "reg",
			pass: "s@cret",
		});
		expect(
			natsConnectionOptions({ TRANSPORTER: "nats://reg:old@n1:4222", NATS_USER: "other", NATS_PASSWORD: "new" }),
		).toEqual({ servers: ["n1:4222"], user: "other", pass: "new" });
		expect(natsConnectionOptions({ TRANSPORTER: "nats://n1:4222", NATS_TOKEN: "t0ken" })).toEqual({
			servers: ["n1:4222"],
			token: "t0ken",
		});
	});

	test("a malformed URL is refused without quoting it (it may hold a password)", () => {
		expect(() => natsConnectionOptions({ TRANSPORTER: "nats://reg:p w@[bad" })).toThrow(
			"TRANSPORTER is not a valid URL (its value is not shown",
		);
		expect(() => redisConnectionOptions("redis://:p w@[bad", {})).toThrow("CACHER is not a valid URL");
		try {
			natsConnectionOptions({ TRANSPORTER: "nats://reg:p w@[bad" });
		} catch (error) {
			expect(JSON.stringify(error) + String(error)).not.toContain("p w");
		}
	});

	test("one way to log in: two are refused, naming the variables and not their values", () => {
		expect(() =>
			natsConnectionOptions({ TRANSPORTER: "nats://n1:4222", NATS_TOKEN: "t0ken", NATS_USER: "reg" }),
		).toThrow("set one of NATS_TOKEN, NATS_USER");
	});

	test("an NKey seed or a credentials file becomes an authenticator; a missing file names the variable", () => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-nkey-"));
		try {
			const seed = path.join(dir, "seed");
			fs.writeFileSync(seed, "SUACSSL3UAHUDXKFSNVUZRF5UHPMWZ6BFDTJ7M6USDXIEDNPPQYYYCU3VY\n");
			expect(
				typeof natsConnectionOptions({ TRANSPORTER: "nats://n1:4222", NATS_NKEY_SEED_FILE: seed })
					.authenticator,
			).toBe("function");
			expect(() =>
				natsConnectionOptions({
					TRANSPORTER: "nats://n1:4222",
					NATS_CREDS_FILE: path.join(dir, "absent.creds"),
				}),
			).toThrow(/NATS_CREDS_FILE: cannot read .*absent\.creds \(ENOENT\)/);
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	});

	test("TLS from tls:// or the NATS_TLS_* files; a certificate needs its key", () => {
		expect(natsConnectionOptions({ TRANSPORTER: "tls://n1:4222" }).tls).toEqual({});
		expect(
			natsConnectionOptions({
				TRANSPORTER: "nats://n1:4222",
				NATS_TLS_CA_FILE: "/ca.pem",
				NATS_TLS_CERT_FILE: "/c.pem",
				NATS_TLS_KEY_FILE: "/k.pem",
			}).tls,
		).toEqual({
			caFile: "/ca.pem",
			certFile: "/c.pem",
			keyFile: "/k.pem",
		});
		expect(() => natsConnectionOptions({ TRANSPORTER: "nats://n1:4222", NATS_TLS_CERT_FILE: "/c.pem" })).toThrow(
			"NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together",
		);
	});
});

describe("Redis connection options", () => {
	test("password (and ACL user) from the URL, or from REDIS_USERNAME/REDIS_PASSWORD, which win", () => {
		expect(redisConnectionOptions("redis://:p%23w@r1:6380/2", {})).toEqual({
			host: "r1",
			port: 6380,
			password: "p#w",
			db: 2,
		});
		expect(redisConnectionOptions("redis://r1", { REDIS_USERNAME: "registry", REDIS_PASSWORD: "pw" })).toEqual({
			host: "r1",
			port: 6379,
			username: "registry",
			password: "pw",
		});
	});

	test("TLS with rediss:// or a CA file (read from the file)", () => {
		expect(redisConnectionOptions("rediss://r1", {}).tls).toEqual({});
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-ca-"));
		try {
			fs.writeFileSync(path.join(dir, "ca.pem"), "CA");
			expect(redisConnectionOptions("redis://r1", { REDIS_TLS_CA_FILE: path.join(dir, "ca.pem") }).tls).toEqual({
				ca: Buffer.from("CA"),
			});
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe("the Secret's placeholders (k8s/secret.yaml CHANGE-ME)", () => {
	const SHIPPED = {
		MONGO_URI: "mongodb://registry:CHANGE-ME@mongo-0.mongo:27017/registry?replicaSet=rs0",
		NATS_USER: "registry",
		NATS_PASSWORD: "CHANGE-ME",
		REDIS_PASSWORD: "CHANGE-ME",
	};

	test("a distributed process whose secrets are still the placeholder is refused, naming each variable", () => {
		expect(
			placeholderSecrets({ TRANSPORTER: "nats://nats:4222", CACHER: "redis://redis:6379", ...SHIPPED }),
		).toEqual(["MONGO_URI", "NATS_PASSWORD", "REDIS_PASSWORD"]);
		expect(() => refusePlaceholderSecrets({ TRANSPORTER: "nats://nats:4222", ...SHIPPED })).toThrow(
			/^MONGO_URI, NATS_PASSWORD, REDIS_PASSWORD still hold the placeholder CHANGE-ME of k8s\/secret.yaml/,
		);
	});

	test.each([
		["TRANSPORTER", { TRANSPORTER: "nats://nats:4222", NATS_PASSWORD: "change-me-please" }, "NATS_PASSWORD"],
		["CACHER", { CACHER: "redis://redis:6379", REDIS_PASSWORD: "x-CHANGE-ME" }, "REDIS_PASSWORD"],
		["MONGO_URI", { MONGO_URI: "mongodb://registry:CHANGE-ME@mongo:27017/registry" }, "MONGO_URI"],
		["a password in TRANSPORTER's URL", { TRANSPORTER: "nats://registry:CHANGE-ME@nats:4222" }, "TRANSPORTER"],
		["a password in CACHER's URL", { CACHER: "redis://:CHANGE-ME@redis:6379" }, "CACHER"],
		["a token", { TRANSPORTER: "nats://nats:4222", NATS_TOKEN: "CHANGE-ME" }, "NATS_TOKEN"],
	])("with %s set, a placeholder is refused", (_name, source, variable) => {
		expect(placeholderSecrets(source)).toEqual([variable]);
		let message = "";
		try {
			refusePlaceholderSecrets(source);
		} catch (error) {
			message = (error as Error).message;
		}
		expect(message).toContain(`${variable} still holds the placeholder`);
		// The variable is named; its value (a URL with its host, a password) is not shown.
		const value = (source as Record<string, string>)[variable];
		if (value !== "CHANGE-ME") expect(message).not.toContain(value);
	});

	test("the one-process default (no TRANSPORTER, CACHER or MONGO_URI) is never refused", async () => {
		expect(placeholderSecrets({ NATS_PASSWORD: "CHANGE-ME", REDIS_PASSWORD: "CHANGE-ME" })).toEqual([]);
		await expect(checkCredentials({ NATS_PASSWORD: "CHANGE-ME" })).resolves.toBeUndefined();
	});

	test("real secrets, and placeholders in variables that hold none (NAMESPACE), pass", () => {
		expect(
			placeholderSecrets({
				TRANSPORTER: "nats://nats:4222",
				NATS_USER: "registry",
				NATS_PASSWORD: "b6f0c2e9d1",
				NAMESPACE: "CHANGE-ME",
			}),
		).toEqual([]);
	});

	test("checkCredentials, which every registry broker runs as it starts, refuses before connecting anywhere", async () => {
		// Port 1: nothing listens there, so only the placeholder check can answer this fast and this way.
		await expect(
			checkCredentials({ TRANSPORTER: "nats://127.0.0.1:1", NATS_PASSWORD: "CHANGE-ME" }),
		).rejects.toThrow("NATS_PASSWORD still holds the placeholder CHANGE-ME");
	});
});
