/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: "node",
	roots: ["<rootDir>/test"],
	testMatch: ["**/*.spec.ts"],
	transform: { "^.+\\.ts$": ["ts-jest", { diagnostics: false }] },
	testTimeout: 30000,
	// One worker per core on a 2-core machine; integration suites start real servers.
	maxWorkers: 2,
};
