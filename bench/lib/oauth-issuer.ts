/**
 * A minimal OAuth issuer for the bench (decisions §15): its metadata and its key set over
 * node:http on loopback, and access tokens signed here with its key, as an authorization server
 * would issue them for the client credentials grant. The registry verifies them exactly as it
 * verifies a real issuer's (the tests use a real one: test/support/oauth-issuer.ts).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";

export interface BenchIssuer {
	url: string;
	audience: string;
	token(clientId: string): Promise<string>;
	stop(): Promise<void>;
}

export async function startBenchIssuer(): Promise<BenchIssuer> {
	const { privateKey, publicKey } = await generateKeyPair("RS256");
	const jwks = JSON.stringify({
		keys: [{ ...(await exportJWK(publicKey)), kid: "bench-1", alg: "RS256", use: "sig" }],
	});
	let url = "";
	const server = http.createServer((req, res) => {
		const body =
			req.url === "/.well-known/oauth-authorization-server"
				? JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks`, token_endpoint: `${url}/token` })
				: req.url === "/jwks"
					? jwks
					: null;
		res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
		res.end(body ?? "{}");
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	const audience = "urn:registry";
	return {
		url,
		audience,
		token: (clientId) =>
			new SignJWT({ scope: "registry", client_id: clientId })
				.setProtectedHeader({ alg: "RS256", kid: "bench-1", typ: "at+jwt" })
				.setIssuer(url)
				.setAudience(audience)
				.setSubject(clientId)
				.setIssuedAt()
				.setExpirationTime("2h")
				.sign(privateKey),
		stop: () => new Promise((resolve) => server.close(() => resolve())),
	};
}
