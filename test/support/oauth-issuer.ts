/**
 * The tests' OAuth authorization server (decisions §15): npm `oidc-provider` in a child process
 * (test/support/oauth-issuer-process.mjs; it is ESM only). Its keys are made here, so a test can also sign
 * tokens the issuer never would (expired, another issuer, HMAC...) with the issuer's own key.
 */
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from "jose";

export interface IssuerClient {
	id: string;
	secret: string;
}

interface SigningKey {
	kid: string;
	privateKey: KeyLike;
	jwk: JWK;
}

export interface TestIssuer {
	/** The issuer, http://127.0.0.1:<port> (held from the start, answering nothing until `open`). */
	url: string;
	/** The key it signs with now. */
	kid(): string;
	/** Starts answering (the first time) or rotates: a new signing key first, the old ones still published. */
	open(): Promise<void>;
	rotate(): Promise<string>;
	/** An access token of the client credentials grant, from the issuer itself. */
	token(client: IssuerClient, options?: { scope?: string; resource?: string }): Promise<string>;
	/** A token signed here with the issuer's current key (or `key`), for claims the issuer would not issue. */
	sign(
		claims: Record<string, unknown>,
		header?: { alg?: string; kid?: string },
		key?: KeyLike | Uint8Array,
	): Promise<string>;
	output: string[];
	stop(): Promise<void>;
}

async function newKey(kid: string): Promise<SigningKey> {
	const { privateKey } = await generateKeyPair("RS256", { extractable: true });
	return { kid, privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" } };
}

function nextMessage<T>(child: ChildProcess, field: string): Promise<T> {
	return new Promise((resolve, reject) => {
		const onMessage = (message: Record<string, unknown>) => {
			if (!(field in message)) return;
			child.off("message", onMessage);
			child.off("exit", onExit);
			resolve(message[field] as T);
		};
		const onExit = (code: number | null) => reject(new Error(`the test issuer exited (${code})`));
		child.on("message", onMessage);
		child.once("exit", onExit);
	});
}

export async function startIssuer(clients: IssuerClient[]): Promise<TestIssuer> {
	const child = fork(path.join(__dirname, "oauth-issuer-process.mjs"), ["0"], {
		stdio: ["ignore", "pipe", "pipe", "ipc"],
	});
	const output: string[] = [];
	child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
	child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
	const port = await nextMessage<number>(child, "listening");
	const url = `http://127.0.0.1:${port}`;
	const keys: SigningKey[] = [await newKey("key-1")];
	const publish = async () => {
		const ready = nextMessage<string>(child, "ready");
		child.send({ keys: keys.map((key) => key.jwk), clients });
		await ready;
	};
	return {
		url,
		output,
		kid: () => keys[0].kid,
		open: publish,
		async rotate() {
			keys.unshift(await newKey(`key-${keys.length + 1}`));
			await publish();
			return keys[0].kid;
		},
		async token(client, options = {}) {
			const body = new URLSearchParams({
				grant_type: "client_credentials",
				resource: options.resource ?? "urn:registry",
			});
			if (options.scope !== undefined) body.set("scope", options.scope);
			const response = await fetch(`${url}/token`, {
				method: "POST",
				headers: {
					"content-type": "application/x-www-form-urlencoded",
					authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`,
				},
				body,
			});
			const answer = (await response.json()) as { access_token?: string };
			if (!answer.access_token) throw new Error(`the issuer refused a token: ${JSON.stringify(answer)}`);
			return answer.access_token;
		},
		async sign(claims, header = {}, key) {
			const now = Math.floor(Date.now() / 1000);
			return new SignJWT({
				iss: url,
				aud: "urn:registry",
				iat: now,
				exp: now + 300,
				scope: "registry",
				...claims,
			})
				.setProtectedHeader({ alg: header.alg ?? "RS256", kid: header.kid ?? keys[0].kid, typ: "at+jwt" })
				.sign(key ?? keys[0].privateKey);
		},
		async stop() {
			if (child.exitCode !== null) return;
			const exited = new Promise((resolve) => child.once("exit", resolve));
			child.kill("SIGTERM");
			await exited;
		},
	};
}
