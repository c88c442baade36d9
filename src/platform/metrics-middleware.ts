/**
 * Moleculer's request and received-event metrics, kept cheap. Moleculer's Metrics middleware
 * finds each metric by name and hashes its labels on every call; this one keeps moleculer's
 * middleware for everything else and records the same series with the same labels, but finds
 * each series once per action (or event) and caller, counts each call in plain numbers, and
 * writes them into moleculer's items when the metrics are read and every second (why:
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

/** A series that keeps its updates in plain numbers until `fold` writes them into moleculer's item. */
interface DeferredSeries {
	fold(now: number): void;
}

/**
 * The deferred series of one broker, folded into moleculer's metrics registry before it is read
 * (`foldMetrics`, called by GET /metrics) and every FOLD_INTERVAL_MS, so moleculer's rates (5 s
 * ticks) and quantile windows (6 s buckets) see every update within a second of it.
 */
class DeferredSeriesSet {
	private readonly series: DeferredSeries[] = [];
	private timer: NodeJS.Timeout | undefined;

	add(series: DeferredSeries): void {
		this.series.push(series);
		if (!this.timer) {
			this.timer = setInterval(() => this.fold(), FOLD_INTERVAL_MS);
			this.timer.unref();
		}
	}

	fold(): void {
		const now = Date.now();
		for (const series of this.series) series.fold(now);
	}

	stop(): void {
		this.fold();
		clearInterval(this.timer);
		this.timer = undefined;
	}
}

const FOLD_INTERVAL_MS = 1000;
/** A histogram series' first buffer of values (it doubles when a second brings more). */
const INITIAL_VALUES = 256;
const deferredSets = new WeakMap<object, DeferredSeriesSet>();

function deferredSetOf(registry: object): DeferredSeriesSet {
	let set = deferredSets.get(registry);
	if (!set) deferredSets.set(registry, (set = new DeferredSeriesSet()));
	return set;
}

/** Writes every deferred update of the broker's request and event series into its metrics registry (before a read of /metrics). */
export function foldMetrics(broker: ServiceBroker): void {
	const registry = (broker as unknown as { metrics?: object }).metrics;
	if (registry) deferredSets.get(registry)?.fold();
}

/** One series of a counter or gauge: its item, made through the public API, then changed by the deltas added since the last fold. */
class ValueSeries implements DeferredSeries {
	private readonly metric: MetricLike;
	private readonly item: ValueItem;
	private pending = 0;
	constructor(
		registry: MetricRegistryLike,
		name: string,
		private readonly labels: Labels,
	) {
		this.metric = registry.getMetric(name);
		this.item = this.metric.increment(labels, 0) as unknown as ValueItem;
		deferredSetOf(registry).add(this);
	}
	add(delta: number): void {
		this.pending += delta;
	}
	fold(now: number): void {
		if (this.pending === 0) return;
		const item = this.item;
		item.value += this.pending;
		this.pending = 0;
		item.timestamp = now;
		if (item.rate) item.rate.update(item.value);
		this.metric.changed(item.value, this.labels);
	}
}

/** One series of a histogram: the values observed since the last fold, then observed as HistogramMetric.observe does. */
class HistogramSeries implements DeferredSeries {
	private readonly metric: MetricLike;
	private item: HistogramItem | null = null;
	/**
	 * The values observed since the last fold, and the buffer the fold before filled (swapped at each
	 * fold): numbers kept outside the garbage-collected heap, which a request-rate array of them
	 * burdened at every scavenge (docs/performance.md, eighth round).
	 */
	private pending = new Float64Array(INITIAL_VALUES);
	private pendingCount = 0;
	private spare = new Float64Array(INITIAL_VALUES);
	constructor(
		registry: MetricRegistryLike,
		name: string,
		private readonly labels: Labels,
	) {
		this.metric = registry.getMetric(name);
		deferredSetOf(registry).add(this);
	}
	observe(value: number): void {
		if (this.pendingCount === this.pending.length) this.grow();
		this.pending[this.pendingCount++] = value;
	}
	private grow(): void {
		const larger = new Float64Array(this.pending.length * 2);
		larger.set(this.pending);
		this.pending = larger;
	}
	fold(now: number): void {
		const count = this.pendingCount;
		if (count === 0) return;
		const values = this.pending;
		this.pending = this.spare;
		this.pendingCount = 0;
		this.spare = values;
		let index = 0;
		if (!this.item) {
			// The first observation creates the item (buckets, quantiles, rate) the public way.
			this.metric.observe(values[index++], this.labels);
			this.item = this.metric.get(this.labels) as HistogramItem;
		}
		const item = this.item;
		const bounds = this.metric.buckets ?? [];
		// How many values fall in each bucket alone; a bucket of moleculer's counts every value up to its bound.
		const counts = new Array<number>(bounds.length).fill(0);
		for (; index < count; index++) {
			const value = values[index];
			item.sum += value;
			item.count++;
			let bucket = 0;
			while (bucket < bounds.length && value > bounds[bucket]) bucket++;
			if (bucket < bounds.length) counts[bucket]++;
			if (item.quantileValues) item.quantileValues.add(value);
		}
		if (item.bucketValues) {
			let upToBound = 0;
			for (let bucket = 0; bucket < bounds.length; bucket++) {
				upToBound += counts[bucket];
				item.bucketValues[bounds[bucket]] += upToBound;
			}
		}
		item.lastValue = values[count - 1];
		item.timestamp = now;
		if (item.rate) item.rate.update(item.count);
		this.metric.changed(item.lastValue, this.labels);
	}
}

interface RequestSeries extends MeasuredSeries {
	levels: Map<number, ValueSeries>;
	level(level: number): ValueSeries;
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
		total: new ValueSeries(registry, metrics.total, labels),
		active: new ValueSeries(registry, metrics.active, labels),
		time: new HistogramSeries(registry, metrics.time, labels),
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
	const started = performance.now();
	const done = () => {
		series.time.observe(performance.now() - started);
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
				found = new ValueSeries(registry, REQUEST_LEVELS, { service, action, caller, level });
				levels.set(level, found);
			}
			return found;
		},
	};
}

/** The labels a held answer of an action is counted with: those of the call the full path would make. */
export interface HeldAnswerLabels {
	service: string;
	action: string;
	caller: string;
	level: number;
	type: "local" | "remote";
}

export interface HeldAnswerCounter {
	count(milliseconds: number): void;
}

const NOT_COUNTED: HeldAnswerCounter = { count: () => undefined };

/**
 * Counts the requests the gateway answers from its held answers as requests of the action that
 * would have answered them (services/api/held-answers.ts): total, level and time (what answering
 * from the held answer took, as moleculer times an answer its cacher found), and
 * `registry_held_answers_total`; not in `active`, which they would leave unchanged.
 */
export function heldAnswerCounter(broker: ServiceBroker, labels: HeldAnswerLabels): HeldAnswerCounter {
	if (!broker.isMetricsEnabled()) return NOT_COUNTED;
	const registry = (broker as unknown as { metrics: MetricRegistryLike & { register(definition: object): unknown } })
		.metrics;
	if (!registry.getMetric(HELD_ANSWERS))
		registry.register({
			type: "counter",
			name: HELD_ANSWERS,
			labelNames: ["action"],
			description: "Requests the gateway answered from its held answers",
		});
	const series = requestSeries(registry, labels.service, labels.action, labels.caller, labels.type);
	const level = series.level(labels.level);
	const held = new ValueSeries(registry, HELD_ANSWERS, { action: labels.action });
	return {
		count(milliseconds) {
			level.add(1);
			series.total.add(1);
			series.time.observe(milliseconds);
			held.add(1);
		},
	};
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
	return {
		...base,
		name: "Metrics",
		localAction: wrap("local"),
		remoteAction: wrap("remote"),
		localEvent,
		stopped() {
			deferredSets.get(registry)?.stop();
		},
	};
}
