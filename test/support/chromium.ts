/**
 * Debian's Chromium for the browser suites: where it is, the flags it needs on this closed
 * network, and the rule every browser suite keeps (skipped with the install command where it is
 * missing; a failure in CI, where .ci/run installs it).
 */
import fs from "node:fs";

export const CHROMIUM = "/usr/bin/chromium";

/** Without the background-networking flags Chromium's own connections are refused here, many at a time. */
export const CHROMIUM_ARGS = [
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
];

/** `describe` when Chromium is here, `describe.skip` (saying so) when not; throws in CI. */
export function describeWithChromium(suite: string): jest.Describe {
	if (fs.existsSync(CHROMIUM)) return describe;
	if (process.env.CI === "true")
		throw new Error(`${CHROMIUM} is missing; in CI the ${suite} must run (.ci/run installs chromium)`);
	// eslint-disable-next-line no-console
	console.log(`${suite} skipped: ${CHROMIUM} not found (install it with: apt-get install -y chromium)`);
	return describe.skip;
}
