/** Facts about the running registry that its entry points and gateway share. */
import packageJson from "../../package.json";

/** The registry's version, as served by /health, /metrics and the OpenAPI document. */
export const REGISTRY_VERSION: string = packageJson.version;

/**
 * How long a stopping process waits for the requests it took: the gateway's HTTP drain
 * (services/api/api.service.ts) and Moleculer's request tracking each wait at most this long.
 */
export const SHUTDOWN_TIMEOUT_MS = 10000;
