/** The address throttling and rate limits count by: the peer, or behind TRUST_PROXY its right-most untrusted hop. */
import net from "node:net";

/** Is an address one of TRUST_PROXY's proxies? null when none is trusted. */
export type TrustedProxies = ((address: string) => boolean) | null;

/** An IPv4 peer of a dual-stack socket as its plain IPv4 address. */
function normalize(address: string): string {
	return address.startsWith("::ffff:") ? address.slice(7) : address;
}

export function trustedProxies(setting: string): TrustedProxies {
	const entries = setting
		.split(",")
		.map((entry) => entry.trim())
		.filter(Boolean);
	if (entries.length === 0) return null;
	const list = new net.BlockList();
	for (const entry of entries) {
		const [address, prefix] = entry.split("/");
		const family = net.isIPv6(address) ? "ipv6" : "ipv4";
		if (!net.isIP(address)) throw new Error(`TRUST_PROXY: '${entry}' is not an address or CIDR range`);
		if (prefix === undefined) list.addAddress(address, family);
		else list.addSubnet(address, Number(prefix), family);
	}
	return (address) => {
		const plain = normalize(address);
		if (!net.isIP(plain)) return false;
		return list.check(plain, net.isIPv6(plain) ? "ipv6" : "ipv4");
	};
}

export function clientAddress(
	peer: string | undefined,
	forwardedFor: string | string[] | undefined,
	trusted: TrustedProxies,
): string {
	const socketPeer = normalize(peer ?? "unknown");
	if (!trusted || !trusted(socketPeer) || typeof forwardedFor !== "string") return socketPeer;
	const hops = forwardedFor
		.split(",")
		.map((hop) => normalize(hop.trim()))
		.filter(Boolean);
	for (let index = hops.length - 1; index >= 0; index--) if (!trusted(hops[index])) return hops[index];
	return hops[0] ?? socketPeer;
}
