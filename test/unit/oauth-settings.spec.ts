/** The OAuth settings (decisions §15): refused at start with a clear reason when inconsistent. */
import { createRegistryBroker } from "../../services";
import { isLoopback, oauthSettings } from "../../src/oauth/settings";

test("no issuer: Basic only", () => {
	expect(oauthSettings({})).toBeNull();
});

test("an issuer needs an audience; the defaults of the scope and the refresh interval", () => {
	expect(() => oauthSettings({ OAUTH_ISSUER: "https://idp.example" })).toThrow(
		"OAUTH_AUDIENCE is required when OAUTH_ISSUER is set",
	);
	expect(oauthSettings({ OAUTH_ISSUER: "https://idp.example", OAUTH_AUDIENCE: "urn:registry" })).toEqual({
		issuer: "https://idp.example",
		audience: "urn:registry",
		scope: "registry",
		keysRefreshMs: 60_000,
	});
});

test("an http issuer only on a loopback address; a bad URL or refresh interval is refused", () => {
	const base = { OAUTH_AUDIENCE: "urn:registry" };
	expect(oauthSettings({ ...base, OAUTH_ISSUER: "http://127.0.0.1:8080" })?.issuer).toBe("http://127.0.0.1:8080");
	expect(oauthSettings({ ...base, OAUTH_ISSUER: "http://[::1]:8080" })).not.toBeNull();
	expect(() => oauthSettings({ ...base, OAUTH_ISSUER: "http://idp.example" })).toThrow(/must be an https URL/);
	expect(() => oauthSettings({ ...base, OAUTH_ISSUER: "not a url" })).toThrow(/OAUTH_ISSUER is not a URL/);
	expect(() =>
		oauthSettings({ ...base, OAUTH_ISSUER: "https://idp.example", OAUTH_KEYS_REFRESH_SECONDS: "0" }),
	).toThrow(/OAUTH_KEYS_REFRESH_SECONDS/);
	expect([isLoopback("127.1.2.3"), isLoopback("localhost"), isLoopback("10.0.0.1"), isLoopback("[::1]")]).toEqual([
		true,
		true,
		false,
		true,
	]);
});

test("a gateway configured with an issuer and no audience does not start, and says why", () => {
	const previous = { ...process.env };
	Object.assign(process.env, { OAUTH_ISSUER: "https://idp.example", DATA_DIR: ":memory:" });
	try {
		expect(() => createRegistryBroker({ services: ["api"], overrides: { logger: false } })).toThrow(
			"OAUTH_AUDIENCE is required",
		);
	} finally {
		delete process.env.OAUTH_ISSUER;
		Object.assign(process.env, previous);
	}
});
