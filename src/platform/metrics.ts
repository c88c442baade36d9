/**
 * GET /metrics: one Prometheus text answer of the broker's two registries: prom-client's (action calls,
 * the process: src/metrics/request-metrics.ts) and Moleculer's (the cluster, cacher, channels, events
 * and the registry's own), the latter in its PrometheusReporter's format without the port of its own.
 */
import { MetricReporters, type ServiceBroker } from "moleculer";
import { promRegistryOf } from "../metrics/request-metrics";

type Formatter = { generatePrometheusResponse(): string; init(registry: unknown): void };

const PrometheusReporter = MetricReporters.Prometheus as unknown as new (options: object) => Formatter;

class QuietPrometheusReporter extends PrometheusReporter {
	init(registry: unknown): void {
		// BaseReporter.init only: no HTTP server of its own.
		(MetricReporters.Base.prototype as unknown as Formatter).init.call(this, registry);
		(this as unknown as { defaultLabels: unknown }).defaultLabels = {};
	}
}

/** prom-client writes a bucket's `le` first; Moleculer wrote it last, and readers of the text may expect it there. */
function withBucketBoundLast(text: string): string {
	return text.replace(/^(\w+_bucket)\{(le="[^"]*"),([^}]*)\}/gm, "$1{$3,$2}");
}

export function prometheusFormatter(broker: ServiceBroker): (() => Promise<string>) | null {
	const registry = (broker as unknown as { metrics?: { isEnabled(): boolean } }).metrics;
	if (!registry || !registry.isEnabled()) return null;
	const reporter = new QuietPrometheusReporter({
		includes: null,
		excludes: null,
		metricNamePrefix: null,
		metricNameSuffix: null,
	});
	reporter.init(registry);
	const calls = promRegistryOf(broker);
	return async () => withBucketBoundLast((await calls?.metrics()) ?? "") + reporter.generatePrometheusResponse();
}
