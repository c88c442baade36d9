/**
 * Storage mixin (architecture "Storage"): gives a service its own store and declared
 * collections.
 *
 *   const models = { participants: participantModel } satisfies Record<string, ModelSpec>;
 *   type This = DbService<keyof typeof models>;
 *   export default { name: "participants", mixins: [DbMixin(models)], ... };
 *   // actions may declare `this: This`; lifecycle hooks are typed `this: Service` by
 *   // moleculer, so cast there: `const self = this as This;`
 *
 * The store opens in `started` (a mixin's started hook runs before the service's own), so
 * the service's started hook may already use `this.collections`. It closes in `stopped`.
 */
import type { Service, ServiceSchema } from "moleculer";
import { brokerEnv } from "../src/platform/broker";
import { PeriodicTask } from "../src/platform/periodic-task";
import { REGISTRY_METRICS, setMetric } from "../src/platform/registry-metrics";
import { createStore, type LocatedStore } from "../src/store";
import type { Collection, ModelSpec, Store } from "../src/store/types";

/** What the mixin adds to `this`. */
export interface DbThis<K extends string = string> {
	store: Store;
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	collections: Record<K, Collection<any>>;
}

/** `this` of a service using DbMixin(models): `Service & DbThis<keyof typeof models>`. */
export type DbService<K extends string = string> = Service & DbThis<K>;

type Lifecycle = Service & Partial<DbThis> & { store?: LocatedStore; storeUsage?: PeriodicTask };

/** How often the store's size and its filesystem's room are measured (registry_store_*). */
const USAGE_INTERVAL_MS = 15000;

async function reportUsage(service: Lifecycle): Promise<void> {
	const usage = await service.store?.usage();
	if (!usage) return;
	const labels = { service: service.name };
	setMetric(service.broker, REGISTRY_METRICS.storeSize, usage.sizeBytes, labels);
	if (usage.filesystemFreeBytes !== null)
		setMetric(service.broker, REGISTRY_METRICS.storeFilesystemFree, usage.filesystemFreeBytes, labels);
	if (usage.filesystemSizeBytes !== null)
		setMetric(service.broker, REGISTRY_METRICS.storeFilesystemSize, usage.filesystemSizeBytes, labels);
}

export function DbMixin<K extends string>(models: Record<K, ModelSpec>): Partial<ServiceSchema> {
	return {
		created(this: Lifecycle) {
			this.store = undefined;
			this.collections = undefined;
		},
		async started(this: Lifecycle) {
			const store = await createStore(this.name, brokerEnv(this.broker));
			this.store = store;
			try {
				const collections = {} as Record<K, Collection<any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
				for (const key of Object.keys(models) as K[]) collections[key] = await store.collection(models[key]);
				this.collections = collections;
			} catch (error) {
				this.store = undefined;
				await store.close().catch(() => undefined);
				throw error;
			}
			this.logger.info(`store: ${store.kind} at ${store.location} (${Object.keys(models).length} collection(s))`);
			if (this.broker.isMetricsEnabled()) {
				this.storeUsage = new PeriodicTask(
					() => reportUsage(this),
					() => undefined,
				);
				this.storeUsage.start(USAGE_INTERVAL_MS);
				await reportUsage(this).catch(() => undefined);
			}
		},
		async stopped(this: Lifecycle) {
			await this.storeUsage?.stop();
			const store = this.store;
			this.store = undefined;
			this.collections = undefined;
			if (store) await store.close();
		},
	};
}
