/**
 * The `Metrics` middleware in Moleculer's place (docs/operations.md "Monitoring"): action calls counted
 * and timed with prom-client under Moleculer's names, labels and milliseconds, each action's labelled
 * children bound once per caller; Moleculer's own hooks for events and packets (no cost per request).
 */
import { performance } from "node:perf_hooks";
import { Middlewares, type ActionSchema, type Context, type Middleware, type ServiceBroker } from "moleculer";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type LabelValues } from "prom-client";

const LABELS = ["service", "action", "type", "caller"] as const;
type Label = (typeof LABELS)[number];

/** Moleculer's default histogram buckets, in milliseconds: the rules' and the dashboard's `le` values. */
const BUCKETS_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

/** One action's figures for one caller. */
interface Bound {
	labels: LabelValues<Label>;
	total: { inc(): void };
	time: { observe(ms: number): void };
	active: number;
}

const registries = new WeakMap<ServiceBroker, Registry>();
let processRegistry: Registry | undefined;

/** prom-client's figures of the process (CPU, memory, event loop, GC), measured once whatever the number of brokers. */
function processMetrics(): Registry {
	if (!processRegistry) {
		processRegistry = new Registry();
		collectDefaultMetrics({ register: processRegistry });
	}
	return processRegistry;
}

/** The prom-client registry of a broker with metrics on, beside Moleculer's (GET /metrics renders both). */
export function promRegistryOf(broker: ServiceBroker): Registry | undefined {
	return registries.get(broker);
}

type Handler = (ctx: Context) => Promise<unknown>;
type ActionDefinition = ActionSchema & { name: string; service?: { fullName?: string } };

function requestMetrics(broker: ServiceBroker, moleculers: Middleware): Middleware {
	const registry = new Registry();
	const bound: Bound[] = [];
	const total = new Counter({
		name: "moleculer_request_total",
		help: "Number of requests",
		labelNames: LABELS,
		registers: [registry],
	});
	const time = new Histogram({
		name: "moleculer_request_time",
		help: "Request times in milliseconds",
		labelNames: LABELS,
		buckets: BUCKETS_MS,
		registers: [registry],
	});
	const errors = new Counter({
		name: "moleculer_request_error_total",
		help: "Number of request errors",
		labelNames: [...LABELS, "errorName", "errorCode", "errorType"],
		registers: [registry],
	});
	new Gauge({
		name: "moleculer_request_active",
		help: "Number of active requests",
		labelNames: LABELS,
		registers: [registry],
		// Read at the scrape: a call only adds and subtracts a number.
		collect() {
			for (const each of bound) this.set(each.labels, each.active);
		},
	});

	function wrap(type: "local" | "remote", next: Handler, action: ActionDefinition): Handler {
		const byCaller = new Map<string | null, Bound>();
		const bind = (caller: string | null): Bound => {
			const labels = {
				service: String(action.service?.fullName ?? null),
				action: action.name,
				type,
				caller: String(caller),
			};
			const each = { labels, total: total.labels(labels), time: time.labels(labels), active: 0 };
			byCaller.set(caller, each);
			bound.push(each);
			return each;
		};
		return async function countedCall(ctx: Context): Promise<unknown> {
			const each = byCaller.get(ctx.caller) ?? bind(ctx.caller);
			each.total.inc();
			each.active++;
			const start = performance.now();
			try {
				return await next(ctx);
			} catch (error) {
				const {
					name,
					code,
					type: errorType,
				} = (error ?? {}) as { name?: unknown; code?: unknown; type?: unknown };
				errors.inc({
					...each.labels,
					errorName: String(name ?? null),
					errorCode: String(code ?? null),
					errorType: String(errorType ?? null),
				});
				throw error;
			} finally {
				each.time.observe(performance.now() - start);
				each.active--;
			}
		};
	}

	registries.set(broker, Registry.merge([processMetrics(), registry]));
	return {
		...moleculers, // its events and packets; its action hooks replaced below
		name: "Metrics",
		localAction: (next: Handler, action: ActionDefinition) => wrap("local", next, action),
		remoteAction: (next: Handler, action: ActionDefinition) => wrap("remote", next, action),
	} as unknown as Middleware;
}

/** For the broker's middleware list, where Moleculer's `Metrics` would be; nothing when metrics are off (METRICS=false). */
export function requestMetricsMiddleware(): (broker: ServiceBroker) => Middleware {
	return (broker) => {
		if (!broker.isMetricsEnabled()) return { name: "Metrics" } as unknown as Middleware;
		const moleculers = (Middlewares as unknown as { Metrics(broker: ServiceBroker): Middleware }).Metrics(broker);
		return requestMetrics(broker, moleculers);
	};
}
