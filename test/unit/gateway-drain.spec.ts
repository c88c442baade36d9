/**
 * The gateway's graceful stop (services/api/http-server.ts `drain`): a request sent before the
 * stop is answered even when the process stalls while draining.
 */
import net from "node:net";
import { DRAIN_QUIET_MS, GatewayServer } from "../../services/api/http-server";
import { connectionRefused } from "../support/raw-http";

/** Holds the thread, as a busy or descheduled process does: timers fall due while sockets go unread. */
function stall(ms: number): void {
	const until = Date.now() + ms;
	while (Date.now() < until);
}

test("a request sent on a keep-alive connection while the draining gateway stalls is answered, not reset", async () => {
	const server = new GatewayServer({
		operational: (_req, res) => {
			res.writeHead(200, { "content-type": "text/plain", "content-length": "8" }).end("answered");
			return true;
		},
		api: () => undefined,
		failed: () => undefined,
	});
	const port = await server.listen(0);
	const client = net.connect({ host: "127.0.0.1", port });
	let received = "";
	client.setEncoding("latin1");
	client.on("data", (chunk: string) => (received += chunk));
	const ended = new Promise<string | undefined>((resolve) => {
		client.once("error", (error: NodeJS.ErrnoException) => resolve(error.code));
		client.once("close", () => resolve(undefined));
	});
	const answers = () => received.split("HTTP/1.1 ").length - 1;
	const REQUEST = "GET /health HTTP/1.1\r\nHost: registry\r\n\r\n";
	// A first answer: the connection is now an idle keep-alive connection.
	client.write(REQUEST);
	while (!received.endsWith("answered")) await new Promise((resolve) => client.once("data", resolve));

	// The drain stops listening, then closes idle connections once no request has come for a quiet moment.
	const drained = server.drain(5000);
	while (!(await connectionRefused(port)));
	// The next request reaches the kernel, and the process stalls past the quiet period before reading it.
	client.write(REQUEST);
	stall(DRAIN_QUIET_MS + 150);

	expect(await ended).toBeUndefined();
	expect(answers()).toBe(2);
	const second = received.slice(received.lastIndexOf("HTTP/1.1 "));
	expect(second).toMatch(/^HTTP\/1\.1 200 /);
	expect(second.toLowerCase()).toContain("\r\nconnection: close\r\n");
	expect(second).toMatch(/answered$/);
	expect(await drained).toBe(0);
});
