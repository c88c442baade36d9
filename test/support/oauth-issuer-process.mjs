/**
 * A real OAuth 2.0 authorization server for the tests (decisions §15): npm `oidc-provider`, ESM
 * only, so it runs in this child process (test/support/oauth-issuer.ts starts it). Client
 * credentials grant; resource indicators make its access tokens JWTs (RFC 9068) for the resource
 * asked for. Its signing keys come from the parent, and a new set replaces the provider in place
 * (same port, same issuer): a key rotation at the issuer.
 *
 * Messages from the parent: { keys, clients } (re)builds the provider; the child answers { ready }.
 */
import http from "node:http";
import Provider from "oidc-provider";

const port = Number(process.argv[2] ?? 0);
const resourceScope = "registry audit";
let handler = (req) => req.socket.destroy();

// Until the parent sends keys the issuer is "unreachable": every connection is cut.
const server = http.createServer((req, res) => handler(req, res));
server.listen(port, "127.0.0.1", () => process.send({ listening: server.address().port }));

process.on("message", ({ keys, clients }) => {
	const issuer = `http://127.0.0.1:${server.address().port}`;
	const provider = new Provider(issuer, {
		clients: clients.map((client) => ({
			client_id: client.id,
			client_secret: client.secret,
			grant_types: ["client_credentials"],
			redirect_uris: [],
			response_types: [],
			scope: resourceScope,
		})),
		jwks: { keys },
		ttl: { ClientCredentials: 300 },
		scopes: resourceScope.split(" "),
		features: {
			devInteractions: { enabled: false },
			clientCredentials: { enabled: true },
			resourceIndicators: {
				enabled: true,
				defaultResource: () => undefined,
				useGrantedResource: () => true,
				getResourceServerInfo: (ctx, resource) => ({
					scope: resourceScope,
					audience: resource,
					accessTokenTTL: 300,
					accessTokenFormat: "jwt",
					jwt: { sign: { alg: keys[0].alg } },
				}),
			},
		},
	});
	handler = provider.callback();
	process.send({ ready: issuer });
});
process.on("disconnect", () => process.exit(0));
