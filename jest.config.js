/**
 * Two projects: "one-process" runs every suite in this process (Moleculer's in-memory
 * broker for unit tests, the real gateway on an ephemeral port for HTTP tests);
 * "distributed" runs the HTTP suites again against the gateway and every service as separate
 * OS processes over the real NATS and Redis of this machine (test/support/cluster.ts).
 * Without those servers the distributed project is skipped and says so, except in CI
 * (CI=true), where it runs and fails.
 */
const net = require("node:net");

function reachable(port) {
	return new Promise((resolve) => {
		const socket = net.connect({ host: "127.0.0.1", port });
		const done = (ok) => {
			socket.destroy();
			resolve(ok);
		};
		socket.setTimeout(1000, () => done(false));
		socket.once("connect", () => done(true));
		socket.once("error", () => done(false));
	});
}

const common = {
	testEnvironment: "node",
	roots: ["<rootDir>/test"],
	transform: { "^.+\\.ts$": ["ts-jest", { diagnostics: false }] },
};

module.exports = async () => {
	const serversUp = (await reachable(4222)) && (await reachable(6379));
	const runDistributed = serversUp || process.env.CI === "true";
	if (!runDistributed) {
		// eslint-disable-next-line no-console
		console.log("distributed-mode suites skipped: NATS (127.0.0.1:4222) or Redis (127.0.0.1:6379) not reachable");
	}
	const projects = [
		{
			...common,
			displayName: "one-process",
			testMatch: ["<rootDir>/test/**/*.spec.ts"],
			testPathIgnorePatterns: ["/test/distributed/"],
		},
	];
	if (runDistributed) {
		projects.push({
			...common,
			displayName: "distributed",
			testMatch: ["<rootDir>/test/integration/**/*.http.spec.ts", "<rootDir>/test/distributed/**/*.spec.ts"],
			globalSetup: "<rootDir>/test/support/global-setup.ts",
			setupFiles: ["<rootDir>/test/support/distributed-env.js"],
		});
	}
	return {
		projects,
		testTimeout: 60000,
		// Two cores: the distributed suites start several processes each.
		maxWorkers: 2,
	};
};
