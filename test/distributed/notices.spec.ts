/**
 * Notices over NATS JetStream (src/platform/notices.ts; issue 17): every process hears every notice,
 * in order and once; a process that loses NATS says so (a reset, and `trusted` false) and,
 * once NATS is back, hears the notices published from then on. Against a nats-server of this
 * test's own, so that it can be killed and started again.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ServiceBroker, type Context } from "moleculer";
import { freePort, reachable } from "../../src/platform/local-network";
import { NOTICES, NOTICES_RESET, noticesMiddleware, noticesOf } from "../../src/platform/notices";
import { killNow, pollUntil } from "./support";

const NATS_SERVER = "/usr/sbin/nats-server";

class PrivateNats {
	private child: ChildProcess | null = null;
	readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-nats-"));
	constructor(readonly port: number) {}
	get url(): string {
		return `nats://127.0.0.1:${this.port}`;
	}
	async start(): Promise<void> {
		this.child = spawn(NATS_SERVER, ["-a", "127.0.0.1", "-p", String(this.port), "-js", "-sd", this.dir], {
			stdio: "ignore",
		});
		await pollUntil(
			"the private nats-server to listen",
			10000,
			async () => ((await reachable(this.url)) ? true : undefined),
			50,
		);
	}
	kill(): Promise<void> {
		return killNow(this.child);
	}
	dispose(): void {
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}

interface Heard {
	notices: number[];
	resets: number;
}

function listeningBroker(nodeID: string, url: string, heard: Heard): ServiceBroker {
	const broker = new ServiceBroker({
		nodeID,
		logger: false,
		middlewares: [noticesMiddleware({ TRANSPORTER: url, NAMESPACE: `notices-${process.pid}` })],
	});
	broker.createService({
		name: "listener",
		events: {
			[NOTICES.catalogChanged](ctx: Context<{ index: number }>) {
				heard.notices.push(ctx.params.index);
			},
			[NOTICES_RESET]() {
				heard.resets++;
			},
		},
	});
	return broker;
}

const available = fs.existsSync(NATS_SERVER);
const suite = available ? describe : describe.skip;
// eslint-disable-next-line no-console -- a skipped suite says why
if (!available) console.log(`notices suite skipped: ${NATS_SERVER} is not installed`);

suite("notices over JetStream", () => {
	let nats: PrivateNats;
	let publisher: ServiceBroker;
	let listener: ServiceBroker;
	const publisherHeard: Heard = { notices: [], resets: 0 };
	const listenerHeard: Heard = { notices: [], resets: 0 };

	beforeAll(async () => {
		nats = new PrivateNats(await freePort());
		await nats.start();
		publisher = listeningBroker("publisher", nats.url, publisherHeard);
		listener = listeningBroker("listener", nats.url, listenerHeard);
		await Promise.all([publisher.start(), listener.start()]);
	}, 30000);
	afterAll(async () => {
		await Promise.all([publisher?.stop(), listener?.stop()].map((stopping) => stopping?.catch(() => undefined)));
		await nats?.kill();
		nats?.dispose();
	});

	test("every process hears every notice once, in the order published (the publisher too)", async () => {
		for (let index = 0; index < 50; index++) await noticesOf(publisher).publish(NOTICES.catalogChanged, { index });
		const all = Array.from({ length: 50 }, (_, index) => index);
		await pollUntil("both to hear 50 notices", 10000, async () =>
			listenerHeard.notices.length >= 50 && publisherHeard.notices.length >= 50 ? true : undefined,
		);
		expect(listenerHeard.notices).toEqual(all);
		expect(publisherHeard.notices).toEqual(all);
		expect(noticesOf(listener).trusted).toBe(true);
		expect(listenerHeard.resets).toBe(0);
	});

	test("NATS lost: every process resets and holds nothing new; NATS back: the notices published then are heard, once each", async () => {
		await nats.kill();
		await pollUntil("the listener to reset", 10000, async () =>
			listenerHeard.resets > 0 && !noticesOf(listener).trusted ? true : undefined,
		);
		await expect(noticesOf(publisher).publish(NOTICES.catalogChanged, { index: -1 })).rejects.toThrow();
		await nats.start();
		await pollUntil("the listener to trust the stream again", 15000, async () =>
			noticesOf(listener).trusted && noticesOf(publisher).trusted ? true : undefined,
		);
		const before = listenerHeard.notices.length;
		for (let index = 50; index < 60; index++) {
			await pollUntil(`notice ${index} to be published`, 10000, async () => {
				await noticesOf(publisher).publish(NOTICES.catalogChanged, { index });
				return true;
			});
		}
		await pollUntil("the listener to hear the new notices", 15000, async () =>
			listenerHeard.notices.length >= before + 10 ? true : undefined,
		);
		expect(listenerHeard.notices.slice(before)).toEqual(Array.from({ length: 10 }, (_, index) => 50 + index));
	}, 60000);
});
