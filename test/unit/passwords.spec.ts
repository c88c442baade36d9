/**
 * Password hashing (decisions §3): scrypt with a per-user salt, constant-time checks, and
 * an unknown user costing as much as a wrong password.
 */
import {
	hashPassword,
	isPasswordHash,
	spendVerificationTime,
	verifyPassword,
	SCRYPT_DEFAULTS,
} from "../../src/platform/passwords";

let hash: string;
beforeAll(async () => {
	hash = await hashPassword("correct horse battery staple");
});

test("a hash is encoded as scrypt$N$r$p$salt$hash with the current parameters", () => {
	const [scheme, N, r, p, salt, digest] = hash.split("$");
	expect([scheme, Number(N), Number(r), Number(p)]).toEqual([
		"scrypt",
		SCRYPT_DEFAULTS.N,
		SCRYPT_DEFAULTS.r,
		SCRYPT_DEFAULTS.p,
	]);
	expect(Buffer.from(salt, "base64url")).toHaveLength(SCRYPT_DEFAULTS.saltLength);
	expect(Buffer.from(digest, "base64url")).toHaveLength(SCRYPT_DEFAULTS.keyLength);
	expect(isPasswordHash(hash)).toBe(true);
});

test("the same password hashes differently every time (per-user random salt)", async () => {
	const again = await hashPassword("correct horse battery staple");
	expect(again).not.toBe(hash);
	expect(await verifyPassword("correct horse battery staple", again)).toBe(true);
});

test("the right password verifies, a wrong or differently cased one does not", async () => {
	expect(await verifyPassword("correct horse battery staple", hash)).toBe(true);
	expect(await verifyPassword("Correct horse battery staple", hash)).toBe(false);
	expect(await verifyPassword("", hash)).toBe(false);
});

test("a tampered or malformed hash never verifies", async () => {
	const parts = hash.split("$");
	const flipped = Buffer.from(parts[5], "base64url");
	flipped[0] ^= 1;
	const tampered = [...parts.slice(0, 5), flipped.toString("base64url")].join("$");
	expect(await verifyPassword("correct horse battery staple", tampered)).toBe(false);
	for (const bad of [
		"",
		"plain",
		"scrypt$1$8$1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		`bcrypt$${parts.slice(1).join("$")}`,
	]) {
		expect(isPasswordHash(bad)).toBe(false);
		expect(await verifyPassword("correct horse battery staple", bad)).toBe(false);
	}
});

test("a hash asking for absurd scrypt costs is not a hash (a seed file cannot exhaust memory)", () => {
	const parts = hash.split("$");
	expect(isPasswordHash(["scrypt", 2 ** 24, ...parts.slice(2)].join("$"))).toBe(false);
});

test("checking for an unknown user takes about as long as checking a wrong password", async () => {
	await spendVerificationTime("warm-up");
	const time = async (check: () => Promise<unknown>) => {
		const start = process.hrtime.bigint();
		await check();
		return Number(process.hrtime.bigint() - start) / 1e6;
	};
	const wrong: number[] = [];
	const unknown: number[] = [];
	for (let round = 0; round < 5; round++) {
		wrong.push(await time(() => verifyPassword("wrong password", hash)));
		unknown.push(await time(() => spendVerificationTime("wrong password")));
	}
	const median = (values: number[]) => [...values].sort((a, b) => a - b)[2];
	expect(await spendVerificationTime("anything")).toBe(false);
	// Generous bounds (other suites share the CPU): the point is "a real scrypt check", not a benchmark.
	expect(median(unknown)).toBeGreaterThan(median(wrong) / 4);
	expect(median(unknown)).toBeLessThan(median(wrong) * 4);
});
