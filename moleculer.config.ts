/**
 * Broker configuration, decided by the environment (src/config/settings.ts lists every variable).
 * Unset means the one-process default: in-process transporter, in-memory cache, embedded
 * store. TRANSPORTER / CACHER / MONGO_URI switch to the distributed mode with no code change.
 */
import type { BrokerOptions } from "moleculer";
import { ResilientRedisCacher, redisClientOptions } from "./src/platform/resilient-cacher";
import { isNatsTransporter, natsConnectionOptions } from "./src/platform/connections";
import { retryReadsMiddleware } from "./src/platform/retry-policy";
import { SHUTDOWN_TIMEOUT_MS } from "./src/config/runtime";
import { env, envNumber } from "./src/config/settings";

export function brokerOptions(source: NodeJS.ProcessEnv = process.env): BrokerOptions {
	const transporter = env("TRANSPORTER", source);
	const cacher = env("CACHER", source);
	const namespace = env("NAMESPACE", source);
	const metrics = env("METRICS", source) !== "false";
	return {
		namespace,
		nodeID: env("NODE_ID", source) || undefined,
		// NATS with the registry's credentials and TLS (src/platform/connections.ts); another transporter as given.
		transporter: isNatsTransporter(transporter)
			? {
					type: "NATS",
					options: {
						...natsConnectionOptions(source, transporter),
						name: "registry-transporter",
						maxReconnectAttempts: -1,
					},
				}
			: transporter || undefined,
		cacher: cacher
			? // Moleculer's Redis cacher, degrading to misses when Redis is away (src/platform/resilient-cacher.ts).
				new ResilientRedisCacher({
					// Keys are namespaced so that several registries (and test runs) share one Redis.
					prefix: `registry-${namespace || "default"}`,
					ttl: 300,
					redis: redisClientOptions(cacher, source),
					monitor: false,
				})
			: { type: "Memory", options: { ttl: 300, clone: false } },
		logger: {
			type: "Console",
			options: { level: env("LOG_LEVEL", source), formatter: "short", colors: false, moduleColors: false },
		},
		requestTimeout: envNumber("REQUEST_TIMEOUT", source),
		// A node that dies without a goodbye is noticed when its heartbeats stop: sent every
		// second, a node is gone after 4 s without one (found 3–9 s after it died, less than
		// REQUEST_TIMEOUT's 10 s default). The calls still waiting for it are then rejected, and
		// reads (and calls a stopping node refused) are tried again on another node by the
		// RetryReads middleware (src/platform/retry-policy.ts), so losing one of two nodes fails no read.
		// Lower values would find a dead node sooner but would mistake a busy event loop for a
		// dead node. Moleculer's own retryPolicy stays off: it would re-run local actions too.
		heartbeatInterval: 1,
		heartbeatTimeout: 4,
		retryPolicy: { enabled: false },
		middlewares: [retryReadsMiddleware()],
		circuitBreaker: { enabled: false },
		registry: {
			strategy: "RoundRobin",
			// Co-located services answer locally: a lookup node's gateway calls its own lookup service,
			// never another node's.
			preferLocal: true,
		},
		// Graceful shutdown: wait for in-flight requests before leaving the cluster.
		tracking: { enabled: true, shutdownTimeout: SHUTDOWN_TIMEOUT_MS },
		validator: {
			type: "Fastest",
			options: { useNewCustomCheckerFunction: true, haltOnFirstError: false },
		} as never,
		// GET /metrics renders this registry and the action calls' (src/metrics/request-metrics.ts, prom-client,
		// which also measures the process: Moleculer's process and OS figures stay off). Percentiles come from the
		// histograms' buckets in Prometheus (k8s/monitoring). Moleculer's own quantile windows (null: none) would
		// keep every time for a minute and sort them all at each scrape.
		metrics: { enabled: metrics, collectProcessMetrics: false, defaultQuantiles: null as unknown as number[] },
		tracing: { enabled: false },
		errorHandler(error) {
			throw error;
		},
	};
}

export default brokerOptions();
