/**
 * A callee of a caller that holds answers (src/platform/notices.ts, HEARD_NOTICES_META): it
 * answers once it has heard every notice its caller had; if it does not within the catch-up
 * wait, it answers anyway, says it is behind (the caller holds nothing from the answer) and
 * counts it in registry_notice_catch_up_timeouts_total.
 */
import { ServiceBroker } from "moleculer";
import {
	BEHIND_NOTICES_META,
	HEARD_NOTICES_META,
	NOTICES,
	noticesMiddleware,
	noticesOf,
} from "../../src/platform/notices";
import { REGISTRY_METRICS } from "../../src/platform/registry-metrics";

let broker: ServiceBroker;

beforeEach(async () => {
	broker = new ServiceBroker({
		logger: false,
		metrics: { enabled: true, reporter: [] },
		middlewares: [noticesMiddleware({})],
	});
	broker.createService({ name: "callee", actions: { answer: () => "answered" } });
	await broker.start();
});
afterEach(() => broker.stop());

function callHeard(position: number): Promise<{ answer: unknown; meta: Record<string, unknown> }> {
	const meta: Record<string, unknown> = { [HEARD_NOTICES_META]: position };
	return broker.call("callee.answer", {}, { meta }).then((answer) => ({ answer, meta }));
}

function timeouts(): number {
	const metric = (
		broker as unknown as {
			metrics: { getMetric(name: string): { get(labels: object): { value: number } | null } | null };
		}
	).metrics.getMetric(REGISTRY_METRICS.noticeCatchUpTimeouts.name);
	return metric?.get({ action: "callee.answer" })?.value ?? 0;
}

test("a callee that has heard as much answers at once, not behind", async () => {
	await noticesOf(broker).publish(NOTICES.catalogChanged, {});
	const { answer, meta } = await callHeard(noticesOf(broker).heard);
	expect(answer).toBe("answered");
	expect(meta[BEHIND_NOTICES_META]).toBeUndefined();
	expect(timeouts()).toBe(0);
});

test("a callee behind answers as soon as it hears the caller's notices, not behind", async () => {
	const calling = callHeard(noticesOf(broker).heard + 1);
	await noticesOf(broker).publish(NOTICES.catalogChanged, {});
	const { answer, meta } = await calling;
	expect(answer).toBe("answered");
	expect(meta[BEHIND_NOTICES_META]).toBeUndefined();
	expect(timeouts()).toBe(0);
});

test("a callee that does not hear the caller's notices answers after the wait, says it is behind and counts it", async () => {
	const { answer, meta } = await callHeard(noticesOf(broker).heard + 5);
	expect(answer).toBe("answered");
	expect(meta[BEHIND_NOTICES_META]).toBe(true);
	expect(timeouts()).toBe(1);
});
