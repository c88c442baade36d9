/** Password hashes: scrypt with a random salt, `scrypt$<N>$<r>$<p>$<salt>$<hash>` so that the parameters can grow. */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/** N = 2^15, r = 8: 32 MiB and tens of milliseconds per check; the gateway caches verified credentials. */
export const SCRYPT_DEFAULTS = { N: 2 ** 15, r: 8, p: 1, keyLength: 32, saltLength: 16 };

/** Upper bounds on parameters read from a stored hash, so a crafted seed cannot exhaust memory or CPU. */
const MAX = { N: 2 ** 20, r: 32, p: 16, keyLength: 128 };

interface ParsedHash {
	N: number;
	r: number;
	p: number;
	salt: Buffer;
	hash: Buffer;
}

function derive(
	password: string,
	salt: Buffer,
	keyLength: number,
	options: ScryptOptions & { N: number; r: number },
): Promise<Buffer> {
	// Room for scrypt's 128·N·r working set, which the 32 MiB default would refuse at N = 2^15.
	const maxmem = 256 * options.N * options.r + 1024 * 1024;
	return new Promise((resolve, reject) => {
		scrypt(password.normalize("NFC"), salt, keyLength, { ...options, maxmem }, (error, key) =>
			error ? reject(error) : resolve(key),
		);
	});
}

const isPowerOfTwo = (value: number) => value > 1 && (value & (value - 1)) === 0;

function parseHash(encoded: string): ParsedHash | null {
	const parts = encoded.split("$");
	if (parts.length !== 6 || parts[0] !== "scrypt") return null;
	const [N, r, p] = parts.slice(1, 4).map((part) => (/^\d{1,8}$/.test(part) ? Number(part) : NaN));
	const salt = Buffer.from(parts[4], "base64url");
	const hash = Buffer.from(parts[5], "base64url");
	const valid =
		isPowerOfTwo(N) &&
		N <= MAX.N &&
		r >= 1 &&
		r <= MAX.r &&
		p >= 1 &&
		p <= MAX.p &&
		salt.length >= 8 &&
		hash.length >= 16 &&
		hash.length <= MAX.keyLength;
	return valid ? { N, r, p, salt, hash } : null;
}

/** Is this a hash this module can verify (seed files may carry `passwordHash`)? */
export function isPasswordHash(encoded: unknown): boolean {
	return typeof encoded === "string" && parseHash(encoded) !== null;
}

export async function hashPassword(password: string): Promise<string> {
	const { N, r, p, keyLength, saltLength } = SCRYPT_DEFAULTS;
	const salt = randomBytes(saltLength);
	const hash = await derive(password, salt, keyLength, { N, r, p });
	return ["scrypt", N, r, p, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

let dummyHash: Promise<string> | undefined;

/** The hash of a random secret nobody knows, made once (at start: the first unknown-username check is not slower). */
export function prepareDummyHash(): Promise<string> {
	return (dummyHash ??= hashPassword(randomBytes(32).toString("base64url")));
}

/** Verifies against a hash nobody matches: spends a real check's time, always false. */
export async function spendVerificationTime(password: string): Promise<false> {
	await verifyPassword(password, await prepareDummyHash());
	return false;
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
	const parsed = parseHash(encoded);
	if (!parsed) return spendVerificationTime(password);
	const { N, r, p, salt, hash } = parsed;
	const candidate = await derive(password, salt, hash.length, { N, r, p });
	return timingSafeEqual(candidate, hash);
}
