/** The cluster key and the keys each process derives from it (docs/operations.md "The cluster key"). */
import { hkdfSync, randomBytes } from "node:crypto";
import type { ServiceBroker } from "moleculer";
import { env, SECRET_PLACEHOLDER } from "../config/settings";

/** Shorter keys are refused: `openssl rand -base64 48` gives 64 characters. */
export const MIN_CLUSTER_KEY_LENGTH = 32;

/** The keys derived from one CLUSTER_KEY. */
export interface DerivedKeys {
	/** Names the key in sealed packets and messages (4 bytes of its own derivation: says nothing of the key). */
	id: Buffer;
	packets: Buffer;
	channels: Buffer;
	callers: Buffer;
}

export interface ClusterKeys {
	/** What this process seals and signs with: CLUSTER_KEY_PREVIOUS while it is set, else CLUSTER_KEY. */
	sealing: DerivedKeys;
	/** Every key it accepts. */
	accepted: DerivedKeys[];
}

/** A start refused for the cluster key; the message names the variable, never its value. */
class ClusterKeyRefused extends Error {}

const HOW_TO_MAKE = 'make one with `openssl rand -base64 48` (docs/operations.md "The cluster key")';

/** Why this environment's cluster key cannot be used, or null. */
export function clusterKeyProblem(source: NodeJS.ProcessEnv = process.env): string | null {
	const key = env("CLUSTER_KEY", source);
	const previous = env("CLUSTER_KEY_PREVIOUS", source);
	if (!key && env("TRANSPORTER", source))
		return `CLUSTER_KEY is not set: every process of a cluster (TRANSPORTER is set) needs the key the cluster shares; ${HOW_TO_MAKE}`;
	if (!key && previous) return "CLUSTER_KEY_PREVIOUS is set without CLUSTER_KEY: a rotation names both keys";
	for (const [name, value] of Object.entries({ CLUSTER_KEY: key, CLUSTER_KEY_PREVIOUS: previous })) {
		if (value.toUpperCase().includes(SECRET_PLACEHOLDER))
			return `${name} still holds the placeholder ${SECRET_PLACEHOLDER} of k8s/secret.yaml; ${HOW_TO_MAKE}`;
		if (value && value.length < MIN_CLUSTER_KEY_LENGTH)
			return `${name} is too short (${value.length} characters, at least ${MIN_CLUSTER_KEY_LENGTH}); ${HOW_TO_MAKE}`;
	}
	return null;
}

export function refuseClusterKeyProblems(source: NodeJS.ProcessEnv = process.env): void {
	const problem = clusterKeyProblem(source);
	if (problem) throw new ClusterKeyRefused(problem);
}

function derive(secret: Buffer, namespace: string, use: string, length = 32): Buffer {
	return Buffer.from(hkdfSync("sha256", secret, `participant-registry:${namespace}`, `registry ${use} v1`, length));
}

/** One key's derivations. The namespace is the salt: a key reused by two registries opens neither's traffic to the other. */
export function deriveKeys(secret: string | Buffer, namespace = ""): DerivedKeys {
	const material = typeof secret === "string" ? Buffer.from(secret, "utf8") : secret;
	return {
		id: derive(material, namespace, "key id", 4),
		packets: derive(material, namespace, "transporter packets"),
		channels: derive(material, namespace, "channel messages"),
		callers: derive(material, namespace, "caller signatures"),
	};
}

let processKey: Buffer | undefined;

/** The keys of an environment, or in one process without them its random key; throws ClusterKeyRefused. */
export function clusterKeys(source: NodeJS.ProcessEnv = process.env): ClusterKeys {
	refuseClusterKeyProblems(source);
	const namespace = env("NAMESPACE", source);
	const key = env("CLUSTER_KEY", source);
	const previous = env("CLUSTER_KEY_PREVIOUS", source);
	const current = deriveKeys(key || (processKey ??= randomBytes(32)), namespace);
	if (!previous) return { sealing: current, accepted: [current] };
	const old = deriveKeys(previous, namespace);
	return { sealing: old, accepted: [old, current] };
}

/** The keys of `source`, derived at the first use (after the start's checks have said why they cannot be). */
export function lazyClusterKeys(source: NodeJS.ProcessEnv): () => ClusterKeys {
	let keys: ClusterKeys | undefined;
	return () => (keys ??= clusterKeys(source));
}

/** The keys a registry broker's middlewares use (set by src/platform/broker.ts). */
export const brokerKeys = new WeakMap<ServiceBroker, () => ClusterKeys>();

/** A broker's keys; a broker not built by createBroker (a test's) has the process's. */
export function keysOf(broker: ServiceBroker): ClusterKeys {
	let keys = brokerKeys.get(broker);
	if (!keys) brokerKeys.set(broker, (keys = lazyClusterKeys({})));
	return keys();
}
