/**
 * Two facts about the local network, for the tools that start registry processes (the test
 * harness in test/support/, the bench in bench/lib/): a free TCP port, and whether a server
 * answers at a URL's host and port.
 */
import net from "node:net";

/** A port nothing listens on right now (the OS picks it; another process may still take it before use). */
export function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = net.createServer();
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const { port } = server.address() as net.AddressInfo;
			server.close(() => resolve(port));
		});
	});
}

/** Does something accept a TCP connection at the URL's host and port within `timeoutMs`? */
export function reachable(url: string, timeoutMs = 1000): Promise<boolean> {
	const { hostname, port } = new URL(url);
	return new Promise((resolve) => {
		const socket = net.connect({ host: hostname, port: Number(port) });
		const done = (ok: boolean) => {
			socket.destroy();
			resolve(ok);
		};
		socket.setTimeout(timeoutMs, () => done(false));
		socket.once("connect", () => done(true));
		socket.once("error", () => done(false));
	});
}
