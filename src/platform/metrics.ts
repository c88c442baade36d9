/** GET /metrics: Moleculer's PrometheusReporter formatting, without the port of its own it would listen on. */
import { MetricReporters, type ServiceBroker } from "moleculer";

type Formatter = { generatePrometheusResponse(): string; init(registry: unknown): void };

const PrometheusReporter = MetricReporters.Prometheus as unknown as new (options: object) => Formatter;

class QuietPrometheusReporter extends PrometheusReporter {
	init(registry: unknown): void {
		// BaseReporter.init only: no HTTP server of its own.
		(MetricReporters.Base.prototype as unknown as Formatter).init.call(this, registry);
		(this as unknown as { defaultLabels: unknown }).defaultLabels = {};
	}
}

export function prometheusFormatter(broker: ServiceBroker): (() => string) | null {
	const registry = (broker as unknown as { metrics?: { isEnabled(): boolean } }).metrics;
	if (!registry || !registry.isEnabled()) return null;
	const reporter = new QuietPrometheusReporter({
		includes: null,
		excludes: null,
		metricNamePrefix: null,
		metricNameSuffix: null,
	});
	reporter.init(registry);
	return () => reporter.generatePrometheusResponse();
}
