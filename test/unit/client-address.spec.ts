import { clientAddress, trustedProxies } from "../../services/api/client-address";

describe("client address for throttling (decisions §3)", () => {
	test("without TRUST_PROXY the socket peer counts and X-Forwarded-For is ignored", () => {
		expect(clientAddress("::ffff:10.0.0.5", "1.2.3.4", trustedProxies(""))).toBe("10.0.0.5");
	});

	test("connections from different peers in turn each count as their own address", () => {
		const none = trustedProxies("");
		const peers = ["::ffff:10.0.0.5", "::ffff:10.0.0.6", "10.0.0.5", "::1", "::ffff:10.0.0.5", "::ffff:10.0.0.5"];
		expect(peers.map((peer) => clientAddress(peer, undefined, none))).toEqual([
			"10.0.0.5",
			"10.0.0.6",
			"10.0.0.5",
			"::1",
			"10.0.0.5",
			"10.0.0.5",
		]);
		expect(clientAddress(undefined, undefined, none)).toBe("unknown");
	});

	test("behind a trusted proxy range the right-most untrusted hop counts", () => {
		const trusted = trustedProxies("10.0.0.0/8, 192.168.1.1");
		expect(clientAddress("10.1.2.3", "6.6.6.6, 1.2.3.4, 192.168.1.1", trusted)).toBe("1.2.3.4");
	});

	test("a peer outside the trusted ranges cannot spoof its address", () => {
		expect(clientAddress("8.8.8.8", "1.2.3.4", trustedProxies("10.0.0.0/8"))).toBe("8.8.8.8");
	});

	test("a malformed TRUST_PROXY entry is refused at start", () => {
		expect(() => trustedProxies("not-an-address")).toThrow(/TRUST_PROXY/);
	});
});
