/** The gateway's node:http server and its graceful drain (docs/operations.md "Upgrades"). */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { answerClientError } from "./client-error";

/** How long nothing must be in flight before a draining server closes its idle keep-alive connections. */
export const DRAIN_QUIET_MS = 250;
/** Keep-alive connections must outlive a load balancer's idle timeout. */
const KEEP_ALIVE_MS = 65_000;

export interface RequestHandlers {
	/** true when answered, false when the request is the API's, a promise when answering takes a while. */
	operational(req: http.IncomingMessage, res: http.ServerResponse, path: string): boolean | Promise<void>;
	api(req: http.IncomingMessage, res: http.ServerResponse): void;
	/** A failure no handler turned into an answer. */
	failed(req: http.IncomingMessage, res: http.ServerResponse, error: unknown): void;
}

export class GatewayServer {
	private readonly server: http.Server;
	/** Open connections: what a drain waits for, and cuts at its deadline (tracked per connection, not per request). */
	private readonly connections = new Set<net.Socket>();
	/** Requests taken so far: a drain closes idle connections only once none has been taken for a moment. */
	private taken = 0;
	private draining = false;

	constructor(handlers: RequestHandlers) {
		const connections = this.connections;
		function closed(this: net.Socket): void {
			connections.delete(this);
		}
		this.server = http.createServer((req, res) => {
			this.taken++;
			// A request that still reaches a draining gateway (an open keep-alive connection) is answered, and its connection closed.
			if (this.draining) res.setHeader("connection", "close");
			const url = req.url ?? "/";
			const question = url.indexOf("?");
			const path = question === -1 ? url : url.slice(0, question);
			try {
				const served = handlers.operational(req, res, path);
				if (served === false) handlers.api(req, res);
				else if (served !== true) served.catch((error) => handlers.failed(req, res, error));
			} catch (error) {
				handlers.failed(req, res, error);
			}
		});
		this.server.on("connection", (socket: net.Socket) => {
			connections.add(socket);
			socket.on("close", closed);
		});
		this.server.keepAliveTimeout = KEEP_ALIVE_MS;
		// What node's HTTP parser refuses is answered in the error shape too (client-error.ts).
		this.server.on("clientError", answerClientError);
	}

	/** Listens on `port` (0: any free port) and resolves with the port. */
	async listen(port: number): Promise<number> {
		await new Promise<void>((resolve, reject) => {
			this.server.once("error", reject);
			this.server.listen(port, () => resolve());
		});
		return (this.server.address() as AddressInfo).port;
	}

	/** Graceful stop (SIGTERM): stop listening, answer what was taken, close idle connections; resolves with cuts. */
	async drain(timeoutMs: number): Promise<number> {
		if (!this.server.listening) return 0;
		this.draining = true;
		const deadline = Date.now() + timeoutMs;
		// Connections the kernel completed but the process has not accepted would be reset by the close: accept
		// them first, polling the event loop (two immediates a round) until a round accepts none (at most 1 s).
		let acceptedInRound = true;
		const accepted = () => (acceptedInRound = true);
		this.server.on("connection", accepted);
		const acceptUntil = Math.min(deadline, Date.now() + 1000);
		while (acceptedInRound && Date.now() < acceptUntil) {
			acceptedInRound = false;
			for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
		}
		this.server.off("connection", accepted);
		// net.Server's close, not http.Server's: the latter also destroys "idle" connections at once,
		// and a connection accepted whose request is not read yet counts as idle.
		let closed = false;
		const allClosed = new Promise<void>((resolve) =>
			net.Server.prototype.close.call(this.server, () => {
				closed = true;
				resolve();
			}),
		);
		// Idle connections close once no request was taken for a moment: one already sent was read by then.
		let seen = this.taken;
		let quietSince = Date.now();
		while (!closed && Date.now() < deadline) {
			if (this.taken !== seen) {
				seen = this.taken;
				quietSince = Date.now();
			} else if (Date.now() - quietSince >= DRAIN_QUIET_MS) {
				// Timers run before the event loop reads its sockets: after a stall (a busy or descheduled process) a
				// request already sent still sits unread, its connection "idle". Close only after one more read.
				await new Promise((resolve) => setImmediate(resolve));
				if (this.taken === seen) this.server.closeIdleConnections();
			}
			await new Promise((resolve) => setTimeout(resolve, 20));
		}
		let cut = 0;
		if (!closed) {
			this.server.closeIdleConnections();
			cut = this.connections.size;
			this.server.closeAllConnections();
		}
		await allClosed;
		return cut;
	}
}
