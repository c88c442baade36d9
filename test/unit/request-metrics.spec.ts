/**
 * GET /metrics's text on an in-memory broker (src/metrics/request-metrics.ts, src/platform/metrics.ts):
 * every action call counted and timed under Moleculer's names, labels and milliseconds, once per
 * name in one Prometheus text with Moleculer's registry; METRICS=false: nothing to serve.
 */
import type { ServiceBroker } from "moleculer";
import { Errors } from "moleculer";
import { createBroker } from "../../src/platform/broker";
import { prometheusFormatter } from "../../src/platform/metrics";

function brokerWith(metrics: string): ServiceBroker {
	const broker = createBroker({ env: { METRICS: metrics, DATA_DIR: ":memory:" }, overrides: { logger: false } });
	broker.createService({
		name: "probe",
		actions: {
			answer: () => "ok",
			fail: () => {
				throw new Errors.MoleculerClientError("no", 404, "NotFound");
			},
			outer: (ctx) => ctx.call("probe.answer"),
		},
	});
	return broker;
}

const series = (text: string, name: string, action: string) =>
	text.split("\n").filter((line) => line.startsWith(`${name}{`) && line.includes(`action="${action}"`));
const valueOf = (line: string | undefined) => Number(line?.split(" ").pop());

describe("/metrics with METRICS on", () => {
	const broker = brokerWith("true");
	beforeAll(() => broker.start());
	afterAll(() => broker.stop());

	test("counts and times every call by action and caller, errors with their code, in one text", async () => {
		const render = prometheusFormatter(broker)!;
		for (let i = 0; i < 3; i++) await broker.call("probe.answer");
		await broker.call("probe.outer");
		await expect(broker.call("probe.fail")).rejects.toMatchObject({ code: 404 });
		const text = await render();

		const answered = series(text, "moleculer_request_total", "probe.answer");
		expect(valueOf(answered.find((line) => line.includes('caller="null"')))).toBe(3);
		expect(valueOf(answered.find((line) => line.includes('caller="probe"')))).toBe(1);
		expect(answered[0]).toMatch(/service="probe"/);
		expect(answered[0]).toMatch(/type="local"/);
		// Milliseconds in Moleculer's buckets, `le` last as Moleculer wrote it.
		expect(text).toMatch(
			/^moleculer_request_time_bucket\{[^}]*action="probe\.answer"[^}]*caller="null",le="1"\} \d$/m,
		);
		expect(text).toMatch(/^moleculer_request_time_bucket\{[^}]*action="probe\.answer"[^}]*le="\+Inf"\} 3$/m);
		expect(valueOf(series(text, "moleculer_request_time_count", "probe.answer")[0])).toBe(3);
		expect(series(text, "moleculer_request_error_total", "probe.fail")[0]).toMatch(
			/errorName="MoleculerClientError",errorCode="404",errorType="NotFound"\} 1$/,
		);
		expect(valueOf(series(text, "moleculer_request_active", "probe.answer")[0])).toBe(0);
		// Moleculer's registry in the same text, and each name described once.
		expect(text).toMatch(/^moleculer_registry_nodes_online_total 1$/m);
		expect(text).toMatch(/^# TYPE process_cpu_seconds_total counter$/m);
		const types = text.split("\n").filter((line) => line.startsWith("# TYPE "));
		expect(new Set(types).size).toBe(types.length);
	});
});

describe("/metrics with METRICS=false", () => {
	const broker = brokerWith("false");
	beforeAll(() => broker.start());
	afterAll(() => broker.stop());

	test("has nothing to serve, and calls still answer", async () => {
		expect(prometheusFormatter(broker)).toBeNull();
		expect(await broker.call("probe.answer")).toBe("ok");
	});
});
