/**
 * Moleculer's request and received-event metrics, kept cheap. Moleculer's Metrics middleware
 * finds each metric by name and hashes its labels on every call; this one keeps moleculer's
 * middleware for everything else and records the same series with the same labels, but finds
 * each series once per action (or event) and caller and updates it in place (why:
 * docs/performance.md "Metrics"). test/unit/metrics.spec.ts compares /metrics with
 * moleculer's own middleware.
 */
import { Middlewares, type Context, type ServiceBroker } from "moleculer";

type Labels = Record<string, string | number | null>;

/** Moleculer's names of the request and received-event metrics (metrics/constants.js; not in its typings). */
const REQUEST_METRICS = {
	total: "moleculer.request.total",
	active: "moleculer.request.active",
	time: "moleculer.request.time",
	errors: "moleculer.request.error.total",
};
const REQUEST_LEVELS = "moleculer.request.levels";
/** The gateway's own counter of held answers (`registry_held_answers_total` in /metrics). */
const HELD_ANSWERS = "registry.held.answers.total";
const EVENT_METRICS = {
	total: "moleculer.event.received.total",
	active: "moleculer.event.received.active",
	time: "moleculer.event.received.time",
	errors: "moleculer.event.received.error.total",
};

interface MetricLike {
	increment(labels: Labels, value?: number): { value: number } | null;
	observe(value: number, labels: Labels): unknown;
	get(labels: Labels): unknown;
	changed(value: unknown, labels: Labels): void;
	buckets?: number[];
}

interface MetricRegistryLike {
	getMetric(name: string): MetricLike;
	increment(name: string, labels: Labels): void;
}

interface ValueItem {
	value: number;
	timestamp: number;
	rate?: { update(value: number): void };
}

interface HistogramItem {
	timestamp: number;
	sum: number;
	count: number;
	lastValue: number;
	bucketValues?: Record<number, number>;
	quantileValues?: { add(value: number): void };
	rate?: { update(value: number): void };
}

/** One series of a counter or gauge: its item, made through the public API, then updated in place. */
class ValueSeries {
	private readonly item: ValueItem;
	constructor(
		private readonly metric: MetricLike,
		private readonly labels: Labels,
	) {
		this.item = metric.increment(labels, 0) as unknown as ValueItem;
	}
	add(delta: number): void {
		const item = this.item;
		item.value += delta;
		item.timestamp = Date.now();
		if (item.rate) item.rate.update(item.value);
		this.metric.changed(item.value, this.labels);
	}
}

/** One series of a histogram, updated as HistogramMetric.observe does. */
class HistogramSeries {
	private item: HistogramItem | null = null;
	constructor(
		private readonly metric: MetricLike,
		private readonly labels: Labels,
	) {}
	observe(value: number): void {
		const item = this.item;
		if (!item) {
			// The first observation creates the item (buckets, quantiles, rate) the public way.
			this.metric.observe(value, this.labels);
			this.item = this.metric.get(this.labels) as HistogramItem;
			return;
		}
		item.timestamp = Date.now();
		item.sum += value;
		item.count++;
		item.lastValue = value;
		const buckets = this.metric.buckets;
		if (item.bucketValues && buckets)
			for (const bound of buckets) if (value <= bound) item.bucketValues[bound] += 1;
		if (item.quantileValues) item.quantileValues.add(value);
		if (item.rate) item.rate.update(item.count);
		this.metric.changed(value, this.labels);
	}
}

interface RequestSeries extends MeasuredSeries {
	levels: Map<number, ValueSeries>;
	level(level: number): ValueSeries;
	/** Held answers only. */
	held?: ValueSeries;
}

/** An error's labels exactly as moleculer's middleware writes them (a missing code is "undefined" in /metrics, not "null"). */
function errorLabels(error: { name?: string; code?: unknown; type?: unknown } | undefined): Labels {
	return {
		errorName: error ? (error.name as string) : null,
		errorCode: error ? (error.code as string | number) : null,
		errorType: error ? (error.type as string) : null,
	};
}

/** The series one action or event handler is counted in (for a caller). */
interface MeasuredSeries {
	labels: Labels;
	total: ValueSeries;
	active: ValueSeries;
	time: HistogramSeries;
}

/** The names of the four metrics a MeasuredSeries counts in. */
interface MeasuredMetrics {
	total: string;
	active: string;
	time: string;
	errors: string;
}

function measuredSeries(registry: MetricRegistryLike, metrics: MeasuredMetrics, labels: Labels): MeasuredSeries {
	return {
		labels,
		total: new ValueSeries(registry.getMetric(metrics.total), labels),
		active: new ValueSeries(registry.getMetric(metrics.active), labels),
		time: new HistogramSeries(registry.getMetric(metrics.time), labels),
	};
}

/** Counts one call of `run` as moleculer's Metrics middleware does: total, active while it runs, its time, and its error (in `errorMetric`). */
function measured(
	registry: MetricRegistryLike,
	series: MeasuredSeries,
	errorMetric: string,
	run: () => Promise<unknown>,
): Promise<unknown> {
	series.total.add(1);
	series.active.add(1);
	const started = process.hrtime();
	const done = () => {
		const delta = process.hrtime(started);
		series.time.observe((delta[0] + delta[1] / 1e9) * 1000);
		series.active.add(-1);
	};
	return run().then(
		(result) => {
			done();
			return result;
		},
		(error: { name?: string; code?: unknown; type?: unknown } | undefined) => {
			done();
			registry.increment(errorMetric, { ...series.labels, ...errorLabels(error) });
			throw error;
		},
	);
}

/** The series of one action, for one caller, called locally or remotely. */
function requestSeries(
	registry: MetricRegistryLike,
	service: string | null,
	action: string,
	caller: string | null,
	type: "local" | "remote",
): RequestSeries {
	const labels: Labels = { service, action, caller, type };
	const levels = new Map<number, ValueSeries>();
	return {
		...measuredSeries(registry, REQUEST_METRICS, labels),
		levels,
		level(level) {
			let found = levels.get(level);
			if (!found) {
				found = new ValueSeries(registry.getMetric(REQUEST_LEVELS), { service, action, caller, level });
				levels.set(level, found);
			}
			return found;
		},
	};
}

const heldAnswerSeries = new WeakMap<ServiceBroker, Map<string, RequestSeries>>();

/**
 * Counts a request the gateway answered from its held answers as a request of the action that
 * would have answered it (services/api/held-answers.ts): total and level, with the labels of the
 * full path's call (caller `api`, its level). Its time is in the request's own `api.rest` series
 * (a second histogram observation per request cost more than the rest of the held answer);
 * not counted in `active`, which it would leave unchanged.
 */
export function countHeldAnswer(
	broker: ServiceBroker,
	service: string,
	action: string,
	caller: string,
	level: number,
	type: "local" | "remote",
): void {
	if (!broker.isMetricsEnabled()) return;
	let byLabels = heldAnswerSeries.get(broker);
	if (!byLabels) heldAnswerSeries.set(broker, (byLabels = new Map()));
	const key = `${type}\u0000${action}\u0000${caller}`;
	let series = byLabels.get(key);
	if (!series) {
		const registry = (
			broker as unknown as { metrics: MetricRegistryLike & { register(definition: object): unknown } }
		).metrics;
		if (!registry.getMetric(HELD_ANSWERS))
			registry.register({
				type: "counter",
				name: HELD_ANSWERS,
				labelNames: ["action"],
				description: "Requests the gateway answered from its held answers",
			});
		series = requestSeries(registry, service, action, caller, type);
		series.held = new ValueSeries(registry.getMetric(HELD_ANSWERS), { action });
		byLabels.set(key, series);
	}
	series.level(level).add(1);
	series.total.add(1);
	series.held?.add(1);
}

/** Adds the gateway answered again to a retry with the same Idempotency-Key (`registry_idempotent_replays_total`). */
const REPLAYS = "registry.idempotent.replays.total";

export function countReplay(broker: ServiceBroker, action: string): void {
	if (!broker.isMetricsEnabled()) return;
	const registry = (
		broker as unknown as {
			metrics: {
				getMetric(name: string): unknown;
				register(definition: object): unknown;
				increment(name: string, labels: object): void;
			};
		}
	).metrics;
	if (!registry.getMetric(REPLAYS))
		registry.register({
			type: "counter",
			name: REPLAYS,
			labelNames: ["action"],
			description: "Adds answered again to a retry with the same Idempotency-Key",
		});
	registry.increment(REPLAYS, { action });
}

export function requestMetricsMiddleware(broker: ServiceBroker): Record<string, unknown> {
	const base = (
		(Middlewares as unknown as Record<string, unknown>).Metrics as (
			broker: ServiceBroker,
		) => Record<string, unknown>
	)(broker);
	const registry = (broker as unknown as { metrics: MetricRegistryLike }).metrics;
	const wrap =
		(type: "local" | "remote") =>
		(next: (ctx: Context) => Promise<unknown>, action: { name: string; service?: { fullName: string } }) => {
			if (!broker.isMetricsEnabled()) return next;
			const service = action.service ? action.service.fullName : null;
			const name = action.name;
			const byCaller = new Map<string | null, RequestSeries>();
			const seriesOf = (caller: string | null): RequestSeries => {
				const series = requestSeries(registry, service, name, caller, type);
				byCaller.set(caller, series);
				return series;
			};
			return function requestMetrics(ctx: Context): Promise<unknown> {
				const caller = (ctx as unknown as { caller: string | null }).caller;
				const series = byCaller.get(caller) ?? seriesOf(caller);
				series.level(ctx.level).add(1);
				return measured(registry, series, REQUEST_METRICS.errors, () => next(ctx));
			};
		};
	/** Local event handlers: moleculer's received-event series (total, active, time, errors), found once per event name and caller. */
	const localEvent = (
		next: (ctx: Context) => Promise<unknown>,
		event: { group?: string; service?: { name: string } },
	) => {
		if (!broker.isMetricsEnabled()) return next;
		const service = event.service ? event.service.name : null;
		const group = event.group || service;
		const byName = new Map<string, MeasuredSeries>();
		const seriesOf = (eventName: string, caller: string | null): MeasuredSeries => {
			const series = measuredSeries(registry, EVENT_METRICS, { service, event: eventName, group, caller });
			byName.set(`${eventName}\u0000${caller}`, series);
			return series;
		};
		return function eventMetrics(this: unknown, ctx: Context): Promise<unknown> {
			const { eventName, caller } = ctx as unknown as { eventName: string; caller: string | null };
			const series = byName.get(`${eventName}\u0000${caller}`) ?? seriesOf(eventName, caller);
			// eslint-disable-next-line prefer-rest-params
			const args = arguments as unknown as [Context];
			return measured(registry, series, EVENT_METRICS.errors, () => next.apply(this, args));
		};
	};
	return { ...base, name: "Metrics", localAction: wrap("local"), remoteAction: wrap("remote"), localEvent };
}
