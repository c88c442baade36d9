/**
 * The SML's two SOAP services over HTTPS with the SMP's client certificate (decisions §14):
 * the SMP's own record, and its participants one at a time, as lists, and page by page.
 * A fault is thrown as SmlFault (the SML refused); anything else that fails is an Error (it
 * was not reached, or answered something that is not SOAP).
 */
import type https from "node:https";
import type { Element } from "@xmldom/xmldom";
import { clientAgent, httpsCall, type TlsPair } from "./connections";
import {
	answerOf,
	participantPageOf,
	smlCalls,
	SmlFault,
	smpRecordOf,
	type SmpRecord,
	type SoapCall,
} from "./sml-soap";

export class SmlClient {
	private readonly agent: https.Agent;
	/** Calls made, for the bench and the tests' figures. */
	calls = 0;

	constructor(
		private readonly url: string,
		private readonly smpId: string,
		tls: TlsPair,
	) {
		this.agent = clientAgent(tls);
	}

	private async send(call: SoapCall): Promise<Element | null> {
		this.calls++;
		const answer = await httpsCall(
			this.agent,
			`${this.url}/${call.endpoint}`,
			"POST",
			{ "Content-Type": "text/xml;charset=UTF-8", SOAPAction: `"${call.action}"` },
			call.body,
		);
		// SOAP 1.1 answers a fault with 500; a 500 that is no SOAP fault is an outage like any other.
		if (answer.status !== 200 && answer.status !== 500) throw new Error(`the SML answered HTTP ${answer.status}`);
		try {
			return answerOf(answer.text);
		} catch (error) {
			if (error instanceof SmlFault || answer.status === 200) throw error;
			throw new Error(`the SML answered HTTP ${answer.status}`);
		}
	}

	/** The SMP's record, or null when the SML has none. */
	async readSmp(): Promise<SmpRecord | null> {
		try {
			return smpRecordOf(await this.send(smlCalls.readSmp(this.smpId)));
		} catch (error) {
			if (error instanceof SmlFault && error.kind === "NotFoundFault") return null;
			throw error;
		}
	}

	async createSmp(record: SmpRecord): Promise<void> {
		await this.send(smlCalls.createSmp(record));
	}

	async updateSmp(record: SmpRecord): Promise<void> {
		await this.send(smlCalls.updateSmp(record));
	}

	/** Creates one participant; "already exists" counts as done. */
	async create(value: string): Promise<void> {
		try {
			await this.send(smlCalls.create(this.smpId, value));
		} catch (error) {
			if (!(error instanceof SmlFault && error.alreadyExists)) throw error;
		}
	}

	/** Deletes one participant; "does not exist" counts as done. */
	async delete(value: string): Promise<void> {
		try {
			await this.send(smlCalls.delete(this.smpId, value));
		} catch (error) {
			if (!(error instanceof SmlFault && error.doesNotExist)) throw error;
		}
	}

	async createList(values: string[]): Promise<void> {
		await this.send(smlCalls.createList(this.smpId, values));
	}

	async deleteList(values: string[]): Promise<void> {
		await this.send(smlCalls.deleteList(this.smpId, values));
	}

	/** Every participant the SML holds for this SMP, following NextPageIdentifier. */
	async list(): Promise<Set<string>> {
		const values = new Set<string>();
		let nextPage: string | undefined;
		for (let pages = 0; pages < 1_000_000; pages++) {
			const page = participantPageOf(await this.send(smlCalls.list(this.smpId, nextPage)));
			for (const value of page.values) values.add(value);
			if (!page.nextPage || page.values.length === 0) return values;
			nextPage = page.nextPage;
		}
		throw new Error("the SML's list does not end");
	}

	close(): void {
		this.agent.destroy();
	}
}
