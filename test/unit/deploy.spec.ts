/**
 * The deployment files agree with the code (issue 4): docker-compose.yml, k8s/*.yaml, the
 * Dockerfile and docs/operations.md are parsed and checked against SERVICE_SCHEMAS
 * (src/platform/broker.ts) and ENV_VARS (src/config/settings.ts), the single source of truth.
 */
import fs from "node:fs";
import path from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { SERVICE_SCHEMAS } from "../../services";
import { ENV_VARS, placeholderSecrets } from "../../src/config/settings";
import { clusterKeyProblem } from "../../src/platform/cluster-key";

const ROOT = path.join(__dirname, "..", "..");
const IMAGE = "registry/participant-registry:0.1.0";
/** Set by the image or the platform, read by Node or moleculer.config.ts, not in ENV_VARS. */
const EXTRA_ENV = new Set(["NODE_ENV", "NODE_ID"]);
const DECLARED = new Set(ENV_VARS.map((variable) => variable.name));

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function read(file: string): string {
	return fs.readFileSync(path.join(ROOT, file), "utf8");
}

// ---- docker-compose.yml -------------------------------------------------------------------

/** `merge: true`: the file writes the common environment once with YAML anchors and `<<`. */
const compose = parse(read("docker-compose.yml"), { merge: true }) as Obj;
const composeServices = Object.entries(compose.services as Record<string, Obj>);
/** Containers built from the registry image (the rest are nats, redis, mongo). */
const registryContainers = composeServices.filter(([, service]) => service.image === IMAGE || service.build);
const longRunning = registryContainers.filter(([, service]) => service.restart !== "no");
const oneShot = registryContainers.filter(([, service]) => service.restart === "no");

function composeEnv(service: Obj): Record<string, string> {
	const environment = service.environment ?? {};
	if (Array.isArray(environment)) {
		return Object.fromEntries(
			environment.map((entry: string) => {
				const at = entry.indexOf("=");
				return at < 0 ? [entry, ""] : [entry.slice(0, at), entry.slice(at + 1)];
			}),
		);
	}
	return Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, String(value)]));
}

function servicesOf(list: string | undefined): string[] {
	return (list ?? "")
		.split(",")
		.map((name) => name.trim())
		.filter(Boolean);
}

// ---- k8s/ ---------------------------------------------------------------------------------

const K8S_DIR = path.join(ROOT, "k8s");
const k8sFiles = fs
	.readdirSync(K8S_DIR)
	.filter((file) => /\.ya?ml$/.test(file))
	.sort();
const k8sDocs: { file: string; doc: Obj }[] = k8sFiles
	.flatMap((file) =>
		parseAllDocuments(fs.readFileSync(path.join(K8S_DIR, file), "utf8")).map((document) => {
			if (document.errors.length) throw new Error(`k8s/${file}: ${document.errors[0].message}`);
			return { file, doc: document.toJS() as Obj };
		}),
	)
	.filter(({ doc }) => doc && typeof doc === "object");

const ofKind = (kind: string) => k8sDocs.filter(({ doc }) => doc.kind === kind).map(({ doc }) => doc);
const deployments = ofKind("Deployment");
const k8sServices = ofKind("Service");
/** The registry's ConfigMaps (those its Deployments read with envFrom); nats.yaml's config file is not one. */
const configMaps = ofKind("ConfigMap").filter((map) =>
	ofKind("Deployment").some((deployment) =>
		(deployment.spec.template.spec.containers as Obj[]).some((container) =>
			((container.envFrom ?? []) as Obj[]).some((source) => source.configMapRef?.name === map.metadata.name),
		),
	),
);
/** The registry's environment Secrets (read with envFrom); the SMP signing pair is a Secret of files. */
const secrets = ofKind("Secret").filter((secret) =>
	deployments.some((deployment) =>
		containersOf(deployment).some((container) =>
			((container.envFrom ?? []) as Obj[]).some((source) => source.secretRef?.name === secret.metadata.name),
		),
	),
);
const smpSigningSecret = ofKind("Secret").find((secret) => secret.metadata.name === "registry-smp-signing");
const hpas = ofKind("HorizontalPodAutoscaler");
const statefulSets = ofKind("StatefulSet");
const networkPolicies = ofKind("NetworkPolicy");
/** Variables that hold a credential (ENV_VARS `secret`): the Secret's, never the ConfigMap's. */
const SECRET_VARS = new Set(ENV_VARS.filter((variable) => variable.secret).map((variable) => variable.name));
/** `scheme://user:password@…`: a URL carrying credentials. */
const URL_WITH_CREDENTIALS = /[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i;
const pdbs = ofKind("PodDisruptionBudget");

function containersOf(deployment: Obj): Obj[] {
	return deployment.spec.template.spec.containers as Obj[];
}

function k8sServicesEnv(deployment: Obj): string[] {
	return containersOf(deployment).flatMap((container) =>
		servicesOf(((container.env ?? []) as Obj[]).find((entry) => entry.name === "SERVICES")?.value),
	);
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
	return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

/** A probe's or targetPort's port, named or numbered, resolved against the container's ports. */
function portNumber(container: Obj, port: string | number): number | undefined {
	if (typeof port === "number") return port;
	if (/^\d+$/.test(port)) return Number(port);
	return ((container.ports ?? []) as Obj[]).find((candidate) => candidate.name === port)?.containerPort;
}

/** The file a pod sees at `file`: the secret volume mounted over its folder, and the key that lands there. */
function mountedSecretFile(workload: Obj, container: Obj, file: string): { secret: string; key: string } | null {
	const mount = ((container.volumeMounts ?? []) as Obj[]).find(
		(candidate) => candidate.mountPath === path.posix.dirname(file),
	);
	const volume = ((workload.spec.template.spec.volumes ?? []) as Obj[]).find(
		(candidate) => candidate.name === mount?.name,
	);
	if (!mount || !volume?.secret) return null;
	const name = path.posix.basename(file);
	const items = volume.secret.items as Obj[] | undefined;
	const key = items ? items.find((item) => item.path === name)?.key : name;
	return key ? { secret: volume.secret.secretName, key } : null;
}

describe("deployment files agree with the code", () => {
	it("parses docker-compose.yml and finds registry containers and k8s documents", () => {
		expect(registryContainers.length).toBeGreaterThan(0);
		expect(deployments.length).toBeGreaterThan(0);
	});

	describe("services", () => {
		it.each(Object.keys(SERVICE_SCHEMAS))("service %s is run by some compose container (SERVICES)", (name) => {
			const runners = longRunning.filter(([, service]) =>
				servicesOf(composeEnv(service).SERVICES).includes(name),
			);
			expect(runners.map(([container]) => container)).not.toHaveLength(0);
		});

		it.each(Object.keys(SERVICE_SCHEMAS))("service %s is run by some k8s Deployment (SERVICES)", (name) => {
			const runners = deployments.filter((deployment) => k8sServicesEnv(deployment).includes(name));
			expect(runners.map((deployment) => deployment.metadata.name)).not.toHaveLength(0);
		});

		it("every SERVICES list in compose and k8s names only known services", () => {
			const lists = [
				...longRunning.map(([, service]) => servicesOf(composeEnv(service).SERVICES)),
				...deployments.map(k8sServicesEnv),
			];
			for (const list of lists) {
				expect(list.length).toBeGreaterThan(0);
				for (const name of list) expect(Object.keys(SERVICE_SCHEMAS)).toContain(name);
			}
		});

		it("the gateway runs the API alone and the lookup nodes the lookup alone, in compose and in k8s (decisions §12)", () => {
			const composeLists = longRunning.map(([, service]) => servicesOf(composeEnv(service).SERVICES).join(","));
			const k8sLists = deployments.map((deployment) => k8sServicesEnv(deployment).join(","));
			for (const lists of [composeLists, k8sLists])
				expect(lists).toEqual(expect.arrayContaining(["api", "lookup"]));
		});

		it("the ingress sends the organization lookup to the lookup nodes and everything else to the gateway", () => {
			const ingress = ofKind("Ingress")[0];
			const paths = (ingress.spec.rules as Obj[]).flatMap((rule) => rule.http.paths as Obj[]);
			const backendOf = (prefix: string) => paths.find((entry) => entry.path === prefix)?.backend.service;
			const serviceNamed = (name: string) => ofKind("Service").find((service) => service.metadata.name === name);
			const deploymentBehind = (name: string) =>
				deployments.find((deployment) =>
					matches(serviceNamed(name)?.spec.selector ?? {}, deployment.spec.template.metadata.labels),
				);
			const lookupBackend = backendOf("/rest/api/organizations/");
			const rest = backendOf("/");
			expect(k8sServicesEnv(deploymentBehind(lookupBackend.name)!)).toEqual(["lookup"]);
			expect(k8sServicesEnv(deploymentBehind(rest.name)!)).toEqual(["api"]);
			for (const backend of [lookupBackend, rest])
				expect((serviceNamed(backend.name)?.spec.ports as Obj[]).map((port) => port.port)).toContain(
					backend.port.number,
				);
		});
	});

	describe("environment variables", () => {
		const allowed = (name: string) => DECLARED.has(name) || EXTRA_ENV.has(name);

		it("every variable set on a compose registry container is declared in ENV_VARS", () => {
			const names = registryContainers.flatMap(([, service]) => Object.keys(composeEnv(service)));
			expect(names.length).toBeGreaterThan(0);
			expect(names.filter((name) => !allowed(name))).toEqual([]);
		});

		it("every variable set in a k8s container env is declared in ENV_VARS", () => {
			const names = deployments.flatMap((deployment) =>
				containersOf(deployment).flatMap((container) =>
					((container.env ?? []) as Obj[]).map((entry) => entry.name as string),
				),
			);
			expect(names.filter((name) => !allowed(name))).toEqual([]);
		});

		it("every key of the k8s ConfigMap data is declared in ENV_VARS", () => {
			expect(configMaps.length).toBeGreaterThan(0);
			const names = configMaps.flatMap((map) => Object.keys(map.data ?? {}));
			expect(names.filter((name) => !allowed(name))).toEqual([]);
		});

		it("every key of the k8s Secret stringData is declared in ENV_VARS", () => {
			expect(secrets.length).toBeGreaterThan(0);
			const names = secrets.flatMap((secret) => [
				...Object.keys(secret.stringData ?? {}),
				...Object.keys(secret.data ?? {}),
			]);
			expect(names).toContain("MONGO_URI");
			expect(names.filter((name) => !allowed(name))).toEqual([]);
		});

		it("every Deployment takes its environment from the ConfigMap and the Secret", () => {
			const mapNames = configMaps.map((map) => map.metadata.name);
			const secretNames = secrets.map((secret) => secret.metadata.name);
			for (const deployment of deployments) {
				for (const container of containersOf(deployment)) {
					const from = (container.envFrom ?? []) as Obj[];
					expect(from.some((source) => mapNames.includes(source.configMapRef?.name))).toBe(true);
					expect(from.some((source) => secretNames.includes(source.secretRef?.name))).toBe(true);
				}
			}
		});

		it("the ConfigMap sets RATE_LIMIT (decisions §3: k8s/ turns the per-caller limit on)", () => {
			const limit = configMaps.map((map) => map.data?.RATE_LIMIT).find(Boolean);
			expect(Number(limit)).toBeGreaterThan(0);
		});
	});

	describe("docs/operations.md", () => {
		const docs = read("docs/operations.md");
		/** Rows of the environment table: | `NAME` | default | description | */
		const rows = new Map(
			docs
				.split("\n")
				.map((line) => /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|([^|]*)\|/.exec(line))
				.filter((match): match is RegExpExecArray => match !== null)
				.map((match) => [match[1], match[2].trim()]),
		);

		it.each(ENV_VARS.map((variable) => [variable.name, variable.default]))(
			"ENV_VARS entry %s is documented in docs/operations.md with its default",
			(name, fallback) => {
				expect(rows.has(name)).toBe(true);
				expect(rows.get(name)).toBe(fallback === "" ? "(unset)" : `\`${fallback}\``);
			},
		);

		it("the environment table of docs/operations.md names no undeclared variable", () => {
			expect([...rows.keys()].filter((name) => !DECLARED.has(name))).toEqual([]);
		});
	});

	describe("k8s Deployments", () => {
		it.each(deployments.map((deployment) => [deployment.metadata.name, deployment]))(
			"Deployment %s has liveness and readiness probes on /health/live and /health/ready at its OPERATIONS_PORT",
			(_name, deployment) => {
				const operationsPort = Number(configMaps[0].data.OPERATIONS_PORT);
				for (const container of containersOf(deployment as Obj)) {
					const ports = ((container.ports ?? []) as Obj[]).map((port) => port.containerPort);
					expect(ports).toContain(operationsPort);
					expect(portNumber(container, container.readinessProbe.httpGet.port)).toBe(operationsPort);
					expect(container.livenessProbe?.httpGet?.path).toBe("/health/live");
					expect(container.readinessProbe?.httpGet?.path).toBe("/health/ready");
					expect(ports).toContain(portNumber(container, container.livenessProbe.httpGet.port));
					expect(ports).toContain(portNumber(container, container.readinessProbe.httpGet.port));
					if (container.startupProbe)
						expect(ports).toContain(portNumber(container, container.startupProbe.httpGet.port));
				}
			},
		);

		it.each(deployments.map((deployment) => [deployment.metadata.name, deployment]))(
			"Deployment %s sets resource requests and limits (cpu and memory)",
			(_name, deployment) => {
				for (const container of containersOf(deployment as Obj)) {
					for (const kind of ["requests", "limits"]) {
						expect(container.resources?.[kind]?.cpu).toBeDefined();
						expect(container.resources?.[kind]?.memory).toBeDefined();
					}
				}
			},
		);

		it("every Deployment uses the same image, registry/participant-registry:0.1.0", () => {
			const images = deployments.flatMap((deployment) =>
				containersOf(deployment).map((container) => container.image),
			);
			expect(new Set(images)).toEqual(new Set([IMAGE]));
		});

		it.each(deployments.map((deployment) => [deployment.metadata.name, deployment]))(
			"Deployment %s runs as non-root with a read-only root filesystem, PORT and a writable /data",
			(_name, deployment) => {
				const pod = (deployment as Obj).spec.template.spec;
				for (const container of containersOf(deployment as Obj)) {
					expect(pod.securityContext?.runAsNonRoot ?? container.securityContext?.runAsNonRoot).toBe(true);
					expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
					const port = ((container.env ?? []) as Obj[]).find((entry) => entry.name === "PORT")?.value;
					expect(Number(port)).toBe(3000);
					const dataMount = ((container.volumeMounts ?? []) as Obj[]).find(
						(mount) => mount.mountPath === "/data",
					);
					expect(dataMount).toBeDefined();
					const volume = ((pod.volumes ?? []) as Obj[]).find(
						(candidate) => candidate.name === dataMount!.name,
					);
					expect(volume?.emptyDir).toBeDefined();
				}
			},
		);

		it.each(deployments.map((deployment) => [deployment.metadata.name, deployment]))(
			"Deployment %s drains on shutdown: terminationGracePeriodSeconds >= 30 and a preStop hook",
			(_name, deployment) => {
				const pod = (deployment as Obj).spec.template.spec;
				expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
				for (const container of containersOf(deployment as Obj))
					expect(container.lifecycle?.preStop).toBeDefined();
			},
		);

		it.each(deployments.map((deployment) => [deployment.metadata.name, deployment]))(
			"Deployment %s selector matches its pod template labels",
			(_name, deployment) => {
				const spec = (deployment as Obj).spec;
				expect(matches(spec.selector.matchLabels, spec.template.metadata.labels)).toBe(true);
			},
		);

		it.each(deployments.map((deployment) => [deployment.metadata.name, deployment]))(
			"Deployment %s has a Service whose selector picks its pods and whose targetPort matches the containerPort",
			(_name, deployment) => {
				const spec = (deployment as Obj).spec;
				const container = containersOf(deployment as Obj)[0];
				const service = k8sServices.find(
					(candidate) =>
						candidate.spec?.selector && matches(candidate.spec.selector, spec.template.metadata.labels),
				);
				expect(service).toBeDefined();
				const targets = ((service!.spec.ports ?? []) as Obj[]).map((port) =>
					portNumber(container, port.targetPort ?? port.port),
				);
				const containerPorts = ((container.ports ?? []) as Obj[]).map((port) => port.containerPort);
				expect(targets.length).toBeGreaterThan(0);
				for (const target of targets) expect(containerPorts).toContain(target);
			},
		);
	});

	describe("k8s scaling and disruption", () => {
		const deploymentNames = deployments.map((deployment) => deployment.metadata.name);

		it("each HorizontalPodAutoscaler (autoscaling/v2) targets an existing Deployment", () => {
			expect(hpas.length).toBeGreaterThan(0);
			for (const hpa of hpas) {
				expect(hpa.apiVersion).toBe("autoscaling/v2");
				expect(hpa.spec.scaleTargetRef.kind).toBe("Deployment");
				expect(deploymentNames).toContain(hpa.spec.scaleTargetRef.name);
				expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
			}
		});

		it("the gateway Deployment and the lookup Deployment each have an HPA on CPU 70%", () => {
			const scaled = hpas.map((hpa) =>
				deployments.find((deployment) => deployment.metadata.name === hpa.spec.scaleTargetRef.name)!,
			);
			const servicesLists = scaled.map((deployment) => k8sServicesEnv(deployment).sort().join(","));
			expect(servicesLists).toEqual(expect.arrayContaining(["api", "lookup"]));
			for (const hpa of hpas) {
				const cpu = (hpa.spec.metrics as Obj[]).find((metric) => metric.resource?.name === "cpu");
				expect(cpu?.resource.target.averageUtilization).toBe(70);
			}
		});

		it("each PodDisruptionBudget selects the pods of an existing Deployment (gateway and lookup, minAvailable 1)", () => {
			const selected = pdbs.map((pdb) => {
				const targets = deployments.filter((deployment) =>
					matches(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels),
				);
				expect(targets).toHaveLength(1);
				expect(pdb.spec.minAvailable).toBe(1);
				return k8sServicesEnv(targets[0]).sort().join(",");
			});
			expect(selected).toEqual(expect.arrayContaining(["api", "lookup"]));
		});

		it("kustomization.yaml lists every k8s file, and every file it lists exists", () => {
			const kustomization = parse(fs.readFileSync(path.join(K8S_DIR, "kustomization.yaml"), "utf8")) as Obj;
			const listed = (kustomization.resources as string[]).slice().sort();
			expect(listed).toEqual(k8sFiles.filter((file) => !/^kustomization\.ya?ml$/.test(file)));
		});
	});

	describe("k8s credentials and network policy (issue 23)", () => {
		const podLabels = (workload: Obj): Record<string, string> => workload.spec.template.metadata.labels;
		const selecting = (labels: Record<string, string>, type: string) =>
			networkPolicies.filter(
				(policy) =>
					(policy.spec.policyTypes as string[]).includes(type) &&
					matches(policy.spec.podSelector?.matchLabels ?? {}, labels),
			);
		/** The ports of `type` rules of the policies selecting `labels` whose peers match `peer`. */
		const allowedPorts = (
			labels: Record<string, string>,
			type: "ingress" | "egress",
			peer: (entry: Obj | undefined) => boolean,
		): number[] =>
			selecting(labels, type === "ingress" ? "Ingress" : "Egress").flatMap((policy) =>
				((policy.spec[type] ?? []) as Obj[])
					.filter((rule) => {
						const peers = (rule[type === "ingress" ? "from" : "to"] ?? []) as Obj[];
						return peers.length === 0 ? peer(undefined) : peers.some((entry) => peer(entry));
					})
					.flatMap((rule) => ((rule.ports ?? []) as Obj[]).map((port) => Number(port.port))),
			);
		const fromNamespace = (name: string) => (entry: Obj | undefined) =>
			entry?.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"] === name;
		const toPods = (labels: Record<string, string>) => (entry: Obj | undefined) =>
			entry !== undefined && !entry.namespaceSelector && matches(entry.podSelector?.matchLabels ?? {}, labels);
		const registryPods = deployments.map((deployment) => [deployment.metadata.name, deployment] as const);
		const natsSet = statefulSets.find((set) => set.metadata.name === "nats");
		const redisSet = statefulSets.find((set) => set.metadata.name === "redis");

		it("no credential in the ConfigMap: no secret variable, no URL with a password", () => {
			for (const map of configMaps) {
				for (const [name, value] of Object.entries((map.data ?? {}) as Record<string, string>)) {
					expect({ name, secret: SECRET_VARS.has(name) }).toEqual({ name, secret: false });
					expect({ name, credentialsInUrl: URL_WITH_CREDENTIALS.test(String(value)) }).toEqual({
						name,
						credentialsInUrl: false,
					});
				}
			}
		});

		it("the Secret carries the NATS and Redis credentials, as placeholders only", () => {
			const data = Object.assign({}, ...secrets.map((secret) => secret.stringData ?? {})) as Record<
				string,
				string
			>;
			expect(Object.keys(data)).toEqual(
				expect.arrayContaining(["NATS_USER", "NATS_PASSWORD", "REDIS_PASSWORD", "MONGO_URI"]),
			);
			for (const name of ["NATS_PASSWORD", "REDIS_PASSWORD", "MONGO_URI"])
				expect(data[name]).toContain("CHANGE-ME");
		});

		it("every registry container has CLUSTER_KEY from the Secret, shipped as the placeholder the start refuses", () => {
			const withKey = secrets.filter((secret) => (secret.stringData ?? {}).CLUSTER_KEY !== undefined);
			expect(withKey.map((secret) => secret.stringData.CLUSTER_KEY)).toEqual(["CHANGE-ME"]);
			expect(placeholderSecrets({ TRANSPORTER: "nats://nats:4222", CLUSTER_KEY: "CHANGE-ME" })).toContain(
				"CLUSTER_KEY",
			);
			const secretName = withKey[0].metadata.name;
			for (const deployment of deployments) {
				for (const container of containersOf(deployment)) {
					const fromSecret = ((container.envFrom ?? []) as Obj[]).some(
						(source) => source.secretRef?.name === secretName,
					);
					const byName = ((container.env ?? []) as Obj[]).find((entry) => entry.name === "CLUSTER_KEY");
					expect({
						deployment: deployment.metadata.name,
						container: container.name,
						clusterKeyFromSecret:
							byName === undefined ? fromSecret : byName.valueFrom?.secretKeyRef?.name === secretName,
					}).toEqual({
						deployment: deployment.metadata.name,
						container: container.name,
						clusterKeyFromSecret: true,
					});
				}
			}
		});

		it("NATS and Redis run with authentication from the Secret", () => {
			expect(natsSet && redisSet).toBeTruthy();
			const natsConfig = ofKind("ConfigMap").find((map) => map.metadata.name === "nats-config")?.data?.[
				"nats.conf"
			] as string;
			expect(natsConfig).toMatch(/authorization\s*{[^}]*user:\s*\$NATS_USER[^}]*password:\s*\$NATS_PASSWORD/s);
			expect(natsConfig).toMatch(/jetstream/);
			const fromSecret = (set: Obj, name: string) =>
				containersOf(set)[0].env.find((entry: Obj) => entry.name === name)?.valueFrom?.secretKeyRef?.name as
					string | undefined;
			expect(fromSecret(natsSet!, "NATS_PASSWORD")).toBe("registry-secrets");
			expect(fromSecret(redisSet!, "REDIS_PASSWORD")).toBe("registry-secrets");
			expect(containersOf(redisSet!)[0].args.join(" ")).toContain("--requirepass $(REDIS_PASSWORD)");
		});

		it("a default-deny policy selects every pod of the namespace, for ingress and egress", () => {
			const denyAll = networkPolicies.find(
				(policy) =>
					Object.keys(policy.spec.podSelector ?? {}).length === 0 ||
					Object.keys(policy.spec.podSelector.matchLabels ?? {}).length === 0,
			);
			expect(denyAll).toBeDefined();
			const all = networkPolicies.filter(
				(policy) =>
					Object.keys(policy.spec.podSelector?.matchLabels ?? {}).length === 0 &&
					!policy.spec.ingress &&
					!policy.spec.egress,
			);
			expect(all.flatMap((policy) => policy.spec.policyTypes)).toEqual(
				expect.arrayContaining(["Ingress", "Egress"]),
			);
		});

		it.each(registryPods)(
			"Deployment %s may reach NATS:4222, Redis:6379 and MongoDB:27017, and Prometheus may scrape its metrics port",
			(_name, deployment) => {
				const labels = podLabels(deployment);
				expect(allowedPorts(labels, "egress", toPods(podLabels(natsSet!)))).toContain(4222);
				expect(allowedPorts(labels, "egress", toPods(podLabels(redisSet!)))).toContain(6379);
				expect(allowedPorts(labels, "egress", (entry) => entry === undefined)).toContain(27017);
				const metricsPort = Number(deployment.spec.template.metadata.annotations["prometheus.io/port"]);
				expect(allowedPorts(labels, "ingress", fromNamespace("monitoring"))).toContain(metricsPort);
			},
		);

		it.each(registryPods)(
			"Deployment %s takes requests from the ingress controller only if it runs a gateway (the API or a lookup node)",
			(_name, deployment) => {
				const fromIngress = allowedPorts(podLabels(deployment), "ingress", fromNamespace("ingress-nginx"));
				const services = k8sServicesEnv(deployment);
				if (services.includes("api") || services.includes("lookup")) expect(fromIngress).toContain(3000);
				else expect(fromIngress).toEqual([]);
			},
		);

		it("NATS and Redis take connections from the registry's pods only", () => {
			const registry = podLabels(deployments[0]);
			for (const [set, port] of [
				[natsSet!, 4222],
				[redisSet!, 6379],
			] as const) {
				expect(allowedPorts(podLabels(set), "ingress", toPods(registry))).toContain(port);
				expect(
					allowedPorts(
						podLabels(set),
						"ingress",
						(entry) => entry === undefined || fromNamespace("ingress-nginx")(entry),
					),
				).toEqual([]);
			}
		});
	});

	describe("SMP signing (decisions §13): the lookup nodes read the pair the Secret names", () => {
		const data = Object.assign({}, ...secrets.map((secret) => secret.stringData ?? {})) as Record<string, string>;
		const lookup = deployments.find((deployment) => deployment.metadata.name === "lookup") as Obj;

		it("SMP_KEY_FILE and SMP_CERTIFICATE_FILE are files of registry-smp-signing mounted in the lookup Deployment", () => {
			expect(smpSigningSecret?.type).toBe("kubernetes.io/tls");
			for (const [variable, key] of [
				["SMP_KEY_FILE", "tls.key"],
				["SMP_CERTIFICATE_FILE", "tls.crt"],
			]) {
				const file = data[variable];
				expect(path.posix.basename(file)).toBe(key);
				const mount = (containersOf(lookup)[0].volumeMounts as Obj[]).find(
					(candidate) => candidate.mountPath === path.posix.dirname(file),
				);
				const volume = (lookup.spec.template.spec.volumes as Obj[]).find(
					(candidate) => candidate.name === mount?.name,
				);
				expect(volume?.secret?.secretName).toBe("registry-smp-signing");
				expect(Object.keys(smpSigningSecret?.stringData ?? {})).toContain(key);
			}
		});

		it("the SMP host goes to the lookup Service, and its links say so (SMP_PUBLIC_URL)", () => {
			const publicUrl = new URL(configMaps[0].data.SMP_PUBLIC_URL);
			const rule = (ofKind("Ingress")[0].spec.rules as Obj[]).find(
				(candidate) => candidate.host === publicUrl.host,
			);
			expect(rule?.http.paths).toEqual([
				expect.objectContaining({
					path: "/",
					backend: { service: { name: "lookup", port: { number: 3000 } } },
				}),
			]);
			expect(publicUrl.protocol).toBe("https:");
		});
	});

	describe("the SML and the Directory (decisions §14): the network Deployment's client certificate and egress", () => {
		const secretData = Object.assign({}, ...secrets.map((secret) => secret.stringData ?? {})) as Record<
			string,
			string
		>;
		const network = deployments.filter((deployment) => k8sServicesEnv(deployment).includes("network"));
		const smlClient = ofKind("Secret").find((secret) => secret.metadata.name === "sml-client");
		/** The client TLS files the Secret sets (SML_CA_FILE and the Directory's pair only when set). */
		const files = [
			"SML_CLIENT_KEY_FILE",
			"SML_CLIENT_CERTIFICATE_FILE",
			"SML_CA_FILE",
			"DIRECTORY_CLIENT_KEY_FILE",
			"DIRECTORY_CLIENT_CERTIFICATE_FILE",
		].filter((variable) => secretData[variable] !== undefined);

		it("one Deployment runs network, and the Secret names its client certificate's key and certificate", () => {
			expect(network.map((deployment) => deployment.metadata.name)).toEqual(["network"]);
			expect(files).toEqual(expect.arrayContaining(["SML_CLIENT_KEY_FILE", "SML_CLIENT_CERTIFICATE_FILE"]));
		});

		it.each(files)(
			"%s is a file of the Secret sml-client, mounted read-only in the network Deployment",
			(variable) => {
				const [deployment] = network;
				const [container] = containersOf(deployment);
				const file = mountedSecretFile(deployment, container, secretData[variable]);
				expect(file?.secret).toBe("sml-client");
				expect(Object.keys(smlClient?.stringData ?? {})).toContain(file?.key);
				const mount = (container.volumeMounts as Obj[]).find(
					(candidate) => candidate.mountPath === path.posix.dirname(secretData[variable]),
				);
				expect(mount?.readOnly).toBe(true);
			},
		);

		it("only the network Deployment mounts sml-client, and the Secret ships placeholders only", () => {
			const mounting = deployments.filter((deployment) =>
				((deployment.spec.template.spec.volumes ?? []) as Obj[]).some(
					(volume) => volume.secret?.secretName === "sml-client",
				),
			);
			expect(mounting.map((deployment) => deployment.metadata.name)).toEqual(["network"]);
			for (const value of Object.values((smlClient?.stringData ?? {}) as Record<string, string>))
				expect(value).toBe("CHANGE-ME");
		});

		it("the network pods may reach public addresses on 443 (the SML, the Directory); the policy selects no other pods", () => {
			const publicAddress = (entry: Obj | undefined) =>
				entry?.ipBlock !== undefined &&
				/^(0\.0\.0\.0|::)\/0$/.test(entry.ipBlock.cidr) &&
				!((entry.ipBlock.except ?? []) as string[]).some((range) => /\/0$/.test(range));
			const labels = network[0].spec.template.metadata.labels as Record<string, string>;
			const grants = networkPolicies.filter(
				(policy) =>
					(policy.spec.policyTypes as string[]).includes("Egress") &&
					matches(policy.spec.podSelector?.matchLabels ?? {}, labels) &&
					((policy.spec.egress ?? []) as Obj[]).some(
						(rule) =>
							((rule.to ?? []) as Obj[]).some(publicAddress) &&
							((rule.ports ?? []) as Obj[]).some((port) => Number(port.port) === 443),
					),
			);
			expect(grants.length).toBeGreaterThan(0);
			for (const policy of grants) {
				const selected = deployments.filter((deployment) =>
					matches(policy.spec.podSelector.matchLabels ?? {}, deployment.spec.template.metadata.labels),
				);
				expect(selected.map((deployment) => deployment.metadata.name)).toEqual(["network"]);
			}
		});

		it("the ConfigMap leaves SML_URL and DIRECTORY_URL empty (off until the operator sets them)", () => {
			for (const map of configMaps) {
				expect(map.data.SML_URL ?? "").toBe("");
				expect(map.data.DIRECTORY_URL ?? "").toBe("");
			}
		});
	});

	describe("NATS over TLS: every file the configuration names is mounted where it says", () => {
		const secretData = Object.assign({}, ...secrets.map((secret) => secret.stringData ?? {})) as Record<
			string,
			string
		>;
		const caFile = secretData.NATS_TLS_CA_FILE;
		const natsSet = statefulSets.find((set) => set.metadata.name === "nats") as Obj;

		it("the registry dials NATS with tls:// and trusts the CA file the Secret names", () => {
			for (const map of configMaps) expect(map.data.TRANSPORTER).toMatch(/^tls:\/\//);
			expect(caFile).toMatch(/^\/.+\.crt$/);
		});

		it.each(deployments.map((deployment) => [deployment.metadata.name, deployment]))(
			"Deployment %s mounts ca.crt of the Secret nats-tls at NATS_TLS_CA_FILE, and no key",
			(_name, deployment) => {
				for (const container of containersOf(deployment as Obj)) {
					expect(mountedSecretFile(deployment as Obj, container, caFile)).toEqual({
						secret: "nats-tls",
						key: "ca.crt",
					});
					const volume = ((deployment as Obj).spec.template.spec.volumes as Obj[]).find(
						(candidate) => candidate.secret?.secretName === "nats-tls",
					);
					expect((volume?.secret.items as Obj[]).map((item) => item.key)).toEqual(["ca.crt"]);
				}
			},
		);

		it("NATS requires TLS with the certificate and key of that Secret, mounted where nats.conf reads them", () => {
			const natsConfig = ofKind("ConfigMap").find((map) => map.metadata.name === "nats-config")?.data?.[
				"nats.conf"
			] as string;
			const block = /^\s*tls\s*{([^}]*)}/m.exec(natsConfig)?.[1] ?? "";
			const fileOf = (name: string) => new RegExp(`${name}:\\s*"?([^"\\s]+)"?`).exec(block)?.[1] ?? "";
			const [container] = containersOf(natsSet);
			expect(mountedSecretFile(natsSet, container, fileOf("cert_file"))).toEqual({
				secret: "nats-tls",
				key: "tls.crt",
			});
			expect(mountedSecretFile(natsSet, container, fileOf("key_file"))).toEqual({
				secret: "nats-tls",
				key: "tls.key",
			});
			// And the NATS process reads it: the config file is the one passed to nats-server.
			expect(container.args).toEqual(["-c", "/etc/nats/nats.conf"]);
		});

		it("compose: NATS requires TLS, and every registry container dials tls:// with the CA mounted where NATS_TLS_CA_FILE says", () => {
			const services = compose.services as Record<string, Obj>;
			const mountsOf = (service: Obj) =>
				((service.volumes ?? []) as string[]).map((volume) => {
					const [source, target] = volume.split(":");
					return { source, target };
				});
			const hostFile = (service: Obj, file: string) => {
				const mount = mountsOf(service).find(({ target }) => file === target || file.startsWith(`${target}/`));
				return mount ? `${mount.source}${file.slice(mount.target.length)}` : null;
			};
			const command = services.nats.command as string[];
			const after = (flag: string) => command[command.indexOf(flag) + 1];
			expect(command).toContain("--tls");
			const certificate = hostFile(services.nats, after("--tlscert"));
			const key = hostFile(services.nats, after("--tlskey"));
			expect(certificate).toMatch(/^\.\/nats-tls\//);
			expect(key).toMatch(/^\.\/nats-tls\//);
			for (const [name, service] of registryContainers) {
				const environment = composeEnv(service);
				expect({ name, transporter: environment.TRANSPORTER }).toEqual({
					name,
					transporter: expect.stringMatching(/^tls:\/\//),
				});
				// The CA sits beside the server's certificate, in the folder the operator made (docs/operations.md).
				expect({ name, ca: hostFile(service, environment.NATS_TLS_CA_FILE) }).toEqual({
					name,
					ca: `${path.posix.dirname(certificate as string)}/ca.pem`,
				});
			}
		});

		it("the certificates stay out of git and out of the image", () => {
			expect(read(".gitignore").split("\n")).toContain("nats-tls/");
			expect(read(".dockerignore").split("\n")).toContain("nats-tls");
		});
	});

	describe("docker-compose.yml", () => {
		it("every registry container uses the same image and build", () => {
			for (const [name, service] of registryContainers) {
				expect({ name, image: service.image }).toEqual({ name, image: IMAGE });
				const build = typeof service.build === "string" ? { context: service.build } : service.build;
				expect({ name, context: build?.context }).toEqual({ name, context: "." });
			}
		});

		it("every long-running registry container has a healthcheck and waits for its infrastructure to be healthy", () => {
			expect(longRunning.length).toBeGreaterThanOrEqual(Object.keys(SERVICE_SCHEMAS).length);
			for (const [name, service] of longRunning) {
				expect({
					name,
					healthcheck: Boolean(service.healthcheck?.test) && !service.healthcheck?.disable,
				}).toEqual({ name, healthcheck: true });
				for (const infrastructure of ["nats", "redis", "mongo"]) {
					expect({
						name,
						infrastructure,
						condition: service.depends_on?.[infrastructure]?.condition,
					}).toEqual({
						name,
						infrastructure,
						condition: "service_healthy",
					});
				}
			}
		});

		it("nats (JetStream), redis and mongo (replica set) have healthchecks", () => {
			const services = compose.services as Record<string, Obj>;
			expect(services.nats.command).toContain("-js");
			expect(services.mongo.command).toEqual(expect.arrayContaining(["--replSet", "rs0"]));
			for (const name of ["nats", "redis", "mongo"]) expect(services[name].healthcheck?.test).toBeDefined();
		});

		it("the one-shot seed container runs once every registry container is healthy", () => {
			expect(oneShot.length).toBe(1);
			const [, seed] = oneShot[0];
			expect((seed.command as string[]).join(" ")).toContain("dist/cli/seed.js");
			for (const [name] of longRunning) expect(seed.depends_on?.[name]?.condition).toBe("service_healthy");
		});

		it("nats and redis require credentials, and every registry container has them", () => {
			const services = compose.services as Record<string, Obj>;
			expect((services.nats.command as string[]).join(" ")).toMatch(/--user \S+ --pass \S+/);
			expect((services.redis.command as string[]).join(" ")).toMatch(/--requirepass \S+/);
			for (const [name, service] of registryContainers) {
				const environment = composeEnv(service);
				expect({
					name,
					credentials: ["NATS_USER", "NATS_PASSWORD", "REDIS_PASSWORD"].every((variable) =>
						Boolean(environment[variable]),
					),
				}).toEqual({ name, credentials: true });
			}
		});

		it("every registry container has the same CLUSTER_KEY, one the start accepts", () => {
			const keys = registryContainers.map(([, service]) => composeEnv(service).CLUSTER_KEY);
			expect(keys.every((key) => key === keys[0] && Boolean(key))).toBe(true);
			// `${CLUSTER_KEY:-default}`: the default is what runs without a .env.
			const fallback = /^\$\{CLUSTER_KEY:-(.+)\}$/.exec(keys[0])?.[1] ?? keys[0];
			expect(clusterKeyProblem({ TRANSPORTER: "tls://nats:4222", CLUSTER_KEY: fallback })).toBeNull();
		});

		it("the gateway container publishes port 3000", () => {
			const gateway = longRunning.find(([, service]) => servicesOf(composeEnv(service).SERVICES).includes("api"));
			expect(gateway?.[1].ports).toContain("3000:3000");
		});
	});

	describe("Dockerfile", () => {
		const dockerfile = read("Dockerfile");
		const instructions = dockerfile
			.replace(/\\\n/g, " ")
			.split("\n")
			.map((line) => line.trim())
			.filter((line) => line && !line.startsWith("#"));
		const froms = instructions.filter((line) => /^FROM\s/i.test(line));
		const lastStage = instructions.slice(instructions.lastIndexOf(froms[froms.length - 1]));

		it("has two or more FROM stages", () => {
			expect(froms.length).toBeGreaterThanOrEqual(2);
		});

		it("runs the final stage as a non-root USER", () => {
			const users = lastStage.filter((line) => /^USER\s/i.test(line));
			expect(users.length).toBeGreaterThan(0);
			expect(users[users.length - 1]).not.toMatch(/^USER\s+(root|0)(:|\s|$)/i);
		});

		it("has a HEALTHCHECK on /health/live", () => {
			const healthcheck = lastStage.find((line) => /^HEALTHCHECK\s/i.test(line));
			expect(healthcheck).toMatch(/\/health\/live/);
		});

		it("installs runtime dependencies with npm ci --omit=dev", () => {
			expect(instructions.some((line) => /^RUN\s.*npm ci\b.*--omit=dev/.test(line))).toBe(true);
		});

		it("starts with node dist/server.js and exposes 3000", () => {
			expect(lastStage).toContain('CMD ["node", "dist/server.js"]');
			expect(lastStage.some((line) => /^EXPOSE\s+3000\b/.test(line))).toBe(true);
		});
	});
});
