/**
 * The broker's request and event metrics (src/platform/broker.ts): moleculer's Metrics middleware is
 * replaced by one that finds each series once and updates it in place (docs/performance.md,
 * items 1 and 16). /metrics must not tell the difference: the same calls and events on a
 * broker with moleculer's own middlewares give the same series, labels and counts.
 */
import { ServiceBroker, type Context, type ServiceSchema } from "moleculer";
import { createRegistryBroker } from "../../services";
import { prometheusFormatter } from "../../src/platform/metrics";

const probe: ServiceSchema = {
	name: "probe",
	actions: {
		echo: { handler: (ctx: Context<{ value: number }>) => ctx.params.value },
		fail: {
			handler() {
				throw new Error("refused");
			},
		},
		async tell(this: { broker: ServiceBroker }, ctx: Context) {
			await ctx.emit("probe.told", { n: 1 });
			await ctx.broadcast("probe.heard", { n: 2 });
			return true;
		},
	},
	events: {
		"probe.told"() {},
		"probe.heard": { group: "listeners", handler() {} },
		"probe.failing"() {
			throw new Error("handler failed");
		},
	},
};

/** The request and event series of /metrics, without timings (they differ by nature). */
function countsOf(broker: ServiceBroker): string[] {
	const text = (prometheusFormatter(broker) as () => string)();
	return text
		.split("\n")
		.filter((line) => /^moleculer_(request|event_received)_/.test(line))
		.filter(
			(line) =>
				!/_time(_bucket|_min|_max|_mean|_variance|_stddev|_sum)?[{ ]/.test(line) ||
				/_time_count[{ ]/.test(line),
		)
		.sort();
}

async function exercise(broker: ServiceBroker): Promise<void> {
	// More calls between two folds than a series' first buffer of times holds (it grows).
	for (let i = 0; i < 700; i++) await broker.call("probe.echo", { value: i });
	await broker.call("probe.fail").catch(() => undefined);
	await broker.call("probe.tell");
	await broker.call("probe.tell");
	await broker.emit("probe.failing", {});
	await new Promise((resolve) => setImmediate(resolve));
}

test("request and event series equal moleculer's own Metrics middleware's", async () => {
	const ours = createRegistryBroker({ services: [], overrides: { logger: false, nodeID: "metrics-probe" } });
	const stock = createRegistryBroker({
		services: [],
		overrides: { logger: false, nodeID: "metrics-probe", internalMiddlewares: true, middlewares: [] },
	});
	for (const broker of [ours, stock]) {
		broker.createService(probe);
		await broker.start();
	}
	try {
		await exercise(ours);
		await exercise(stock);
		const expected = countsOf(stock);
		expect(
			expected.some((line) =>
				line.startsWith('moleculer_event_received_total{service="probe",group="listeners",event="probe.heard"'),
			),
		).toBe(true);
		expect(expected.some((line) => line.startsWith("moleculer_request_error_total{"))).toBe(true);
		expect(countsOf(ours)).toEqual(expected);
	} finally {
		await Promise.all([ours.stop(), stock.stop()]);
	}
});
