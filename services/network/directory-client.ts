/**
 * The Peppol Directory's indexer (decisions §14): told that a participant's business card
 * changed (PUT, the Directory then fetches the card from this SMP) or that it is gone (DELETE),
 * with the client certificate. Any 2xx is done; anything else throws, for the delivery's retry.
 */
import type https from "node:https";
import { clientAgent, httpsCall, type TlsPair } from "./connections";
import { PARTICIPANT_SCHEME } from "./dns-names";

export class DirectoryClient {
	private readonly agent: https.Agent;
	calls = 0;

	constructor(
		private readonly url: string,
		tls: TlsPair,
	) {
		this.agent = clientAgent(tls);
	}

	private async send(method: "PUT" | "DELETE", path: string, body?: string): Promise<void> {
		this.calls++;
		const headers: Record<string, string> =
			body === undefined ? {} : { "Content-Type": "text/plain;charset=UTF-8" };
		const answer = await httpsCall(this.agent, `${this.url}/indexer/1.0/${path}`, method, headers, body);
		// A DELETE of a card the Directory never had is done too.
		if ((answer.status >= 200 && answer.status < 300) || (method === "DELETE" && answer.status === 404)) return;
		throw new Error(
			`the Directory answered HTTP ${answer.status}${answer.text ? `: ${answer.text.slice(0, 200)}` : ""}`,
		);
	}

	/** `value` is `<icd>:<organizationIdentifier>` (lower case). */
	changed(value: string): Promise<void> {
		return this.send("PUT", "", `${PARTICIPANT_SCHEME}::${value}`);
	}

	removed(value: string): Promise<void> {
		return this.send("DELETE", encodeURIComponent(`${PARTICIPANT_SCHEME}::${value}`));
	}

	close(): void {
		this.agent.destroy();
	}
}
