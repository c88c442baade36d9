/**
 * Transfers (docs/decisions.md "Transfers"): the key, the expiry arithmetic, and the participants
 * service's transfers on an in-memory broker read at a later instant: a PENDING transfer past its
 * expiry is EXPIRED on every read before anything stored it, and a completion then is refused.
 */
import type { ServiceBroker } from "moleculer";
import { createRegistryBroker } from "../../services";
import type { Transfers } from "../../services/participants/transfers";
import {
	newTransferKey,
	transferExpiry,
	transferKeyHash,
	transferKeyMatches,
	transferStateAt,
} from "../../services/participants/transfers";
import type { Caller } from "../../src/contract/model";
import { importSeed } from "../../src/exchange/seed";
import { callerMeta } from "../../src/platform/caller-signature";
import { organizationNumberSource } from "../support/bulk";
import { demoSeed } from "../support/registry";

const SP1 = "11111111-0000-4000-8000-000000000001";
const SP2 = "11111111-0000-4000-8000-000000000002";
const sp1: Caller = { username: "sp1", role: "SERVICE_PROVIDER", serviceProvider: SP1 };
const sp2: Caller = { username: "sp2", role: "SERVICE_PROVIDER", serviceProvider: SP2 };
const DAY = 86_400_000;
const organizationNumber = organizationNumberSource(53_000_000);

describe("the key", () => {
	test("20 base32 characters in four groups, at most 24 characters, different every time", () => {
		const keys = new Set(Array.from({ length: 1000 }, () => newTransferKey()));
		expect(keys.size).toBe(1000);
		for (const key of keys) {
			expect(key).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}$/);
			expect(key.length).toBeLessThanOrEqual(24);
		}
		// Every character of the alphabet turns up (the 5 bits of a byte are uniform).
		expect(new Set([...keys].join("").replace(/-/g, "")).size).toBe(32);
	});

	test("its hash is matched whatever the case, hyphens and blanks, and O/0, I/L/1 misreadings; nothing else matches", () => {
		const hash = transferKeyHash("7KQ2M-XR41D-0W9PB-HC3NV");
		expect(hash).toMatch(/^[0-9a-f]{64}$/);
		for (const typed of [
			"7KQ2M-XR41D-0W9PB-HC3NV",
			"7kq2mxr41d0w9pbhc3nv",
			"7KQ2M XR4ID OW9PB HC3NV",
			"7KQ2M-XR4LD-0W9PB-HC3NV",
		])
			expect(transferKeyMatches(typed, hash)).toBe(true);
		for (const typed of ["7KQ2M-XR41D-0W9PB-HC3NW", "7KQ2M-XR41D-0W9PB-HC3N", "", "7KQ2M-XR41D-0W9PB-HC3NV-0"])
			expect(transferKeyMatches(typed, hash)).toBe(false);
	});
});

describe("expiry", () => {
	const now = new Date("2030-03-10T15:30:00.000Z");

	test("validDays after now, or after the effective date's start when that is later", () => {
		expect(transferExpiry(now, null, 7)).toBe("2030-03-17T15:30:00.000Z");
		expect(transferExpiry(now, "2030-03-10", 1)).toBe("2030-03-11T15:30:00.000Z");
		expect(transferExpiry(now, "2030-03-20", 7)).toBe("2030-03-27T00:00:00.000Z");
	});

	test("a PENDING transfer is EXPIRED once its expiry has passed; a final state stays", () => {
		const expiresAt = "2030-03-17T15:30:00.000Z";
		expect(transferStateAt({ state: "PENDING", expiresAt }, new Date("2030-03-17T15:30:00.000Z"))).toBe("PENDING");
		expect(transferStateAt({ state: "PENDING", expiresAt }, new Date("2030-03-17T15:30:00.001Z"))).toBe("EXPIRED");
		expect(transferStateAt({ state: "COMPLETED", expiresAt }, new Date("2031-01-01T00:00:00.000Z"))).toBe(
			"COMPLETED",
		);
		expect(transferStateAt({ state: "CANCELLED", expiresAt }, new Date("2031-01-01T00:00:00.000Z"))).toBe(
			"CANCELLED",
		);
	});
});

describe("the participants service's transfers, read later", () => {
	let broker: ServiceBroker;

	beforeAll(async () => {
		broker = createRegistryBroker({
			env: { DATA_DIR: ":memory:" },
			services: ["catalog", "accounts", "accessPoints", "participants", "lookup"],
			overrides: { logger: false },
		});
		await broker.start();
		await importSeed(broker, demoSeed());
	});
	afterAll(() => broker.stop());

	function transfers(): Transfers {
		return (broker.getLocalService("participants") as unknown as { transfers: Transfers }).transfers;
	}

	test("past its expiry a pending transfer reads EXPIRED at once, before the sweeper stored it; completing it is 409 and stores it", async () => {
		const participant = await broker.call<{ identifier: string }, object>(
			"participants.add",
			{
				body: {
					icd: "0192",
					organizationIdentifier: organizationNumber(),
					processes: [],
					contact: { name: "Kari", email: "kari@example.no", phoneNumber: "+47 22 33 44 55" },
				},
			},
			{ meta: callerMeta(broker, sp1) },
		);
		const started = await transfers().start(
			sp1,
			{ participant: participant.identifier, serviceProviderIdentifier: SP2, validDays: 1 },
			new Date(),
		);
		const later = new Date(Date.now() + 2 * DAY);
		expect((await transfers().get(sp2, started.identifier, new Date())).state).toBe("PENDING");
		expect((await transfers().get(sp2, started.identifier, later)).state).toBe("EXPIRED");
		expect((await transfers().get(sp1, started.identifier, later)).state).toBe("EXPIRED");
		// Nothing stored it yet: the stored state is still PENDING, and reading now still says so.
		expect(
			(await transfers().find(sp1, { page: 0, size: 1000, sort: [] }, undefined, later)).content.find(
				(item) => item.identifier === started.identifier,
			)?.state,
		).toBe("EXPIRED");
		expect((await transfers().get(sp1, started.identifier, new Date())).state).toBe("PENDING");

		await expect(transfers().complete(sp2, started.identifier, started.key as string, later)).rejects.toMatchObject(
			{ code: 409, message: expect.stringMatching(/expired/) },
		);
		// The refused completion stored EXPIRED: now it reads EXPIRED at the present instant too.
		expect((await transfers().get(sp2, started.identifier, new Date())).state).toBe("EXPIRED");
		const owner = await broker.call<{ provider: { identifier: string } }, object>(
			"participants.get",
			{ identifier: participant.identifier },
			{ meta: callerMeta(broker, { username: "admin", role: "ADMIN" }) },
		);
		expect(owner.provider.identifier).toBe(SP1);
	});
});
