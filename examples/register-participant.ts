/**
 * Example: a service provider registers an organization through the typed client, then
 * anyone reads which processes that organization receives (the anonymous lookup).
 *
 *   npm run example -- http://localhost:3000 [organizationNumber]
 *
 * Runs against the demo data (docs/demo-data.md) as `sp1`. Running it twice is fine: an
 * organization sp1 already registered is read back instead (409 on the second add).
 */
import { createRegistryClient, type RegistryError, type Schemas } from "../client";

const SP1 = { username: "sp1", password: "sp1-demo-password" };
/** Demo processes: Peppol BIS Billing 3.0 and Invoice Response 3.0 (which depends on Billing). */
const BILLING = "55555555-0000-4000-8000-000000000001";
const INVOICE_RESPONSE = "55555555-0000-4000-8000-000000000006";

export interface Registered {
	participant: Schemas["Participant"];
	/** true when this run added it, false when sp1 already had it. */
	added: boolean;
	/** What the organization lookup answers for it. */
	lookup: Schemas["Process"][];
}

function explain(error: RegistryError | undefined, response: Response): Error {
	const details = error?.errors?.map((item) => `${item.field}: ${item.code} (${item.defaultMessage})`).join("; ");
	return new Error(
		`${response.status} ${error?.exception ?? response.statusText}: ${error?.message ?? ""}${details ? ` [${details}]` : ""}`,
	);
}

export async function registerParticipant(
	baseUrl: string,
	{
		organizationIdentifier = "974760673",
		log = (line: string) => console.log(line),
	}: { organizationIdentifier?: string; log?: (line: string) => void } = {},
): Promise<Registered> {
	const registry = createRegistryClient(baseUrl, SP1);
	const qualifiedIdentifier = `iso6523-actorid-upis::0192:${organizationIdentifier}`;

	// 1. Register the organization as a participant of sp1's (POST, 201 with the participant).
	const added = await registry.POST("/rest/api/participants", {
		body: {
			icd: "0192",
			organizationIdentifier,
			name: "Brønnøysundregistrene",
			processes: [{ identifier: BILLING }, { identifier: INVOICE_RESPONSE }],
			contact: { name: "Kari Nordmann", email: "kari@example.no", phoneNumber: "+47 75 00 75 00" },
		},
	});
	let participant: Schemas["Participant"];
	if (added.data) {
		participant = added.data;
		log(
			`registered ${participant.qualifiedIdentifier} as participant ${participant.identifier} (${added.response.headers.get("Location")})`,
		);
	} else if (added.response.status === 409) {
		// Already registered (an earlier run): read sp1's participant for that organization.
		const existing = await registry.GET("/rest/api/participants/{participant}", {
			params: { path: { participant: qualifiedIdentifier } },
		});
		if (!existing.data) throw explain(existing.error as RegistryError, existing.response);
		participant = existing.data;
		log(`${participant.qualifiedIdentifier} was already registered as participant ${participant.identifier}`);
	} else {
		throw explain(added.error as RegistryError, added.response);
	}

	// 2. The organization lookup, anonymously. In a distributed registry it follows the change
	//    within moments, so a client that just registered waits for it.
	const anonymous = createRegistryClient(baseUrl);
	const wanted = (participant.processes ?? []).map((process) => process.identifier);
	const deadline = Date.now() + 15000;
	for (;;) {
		const lookup = await anonymous.GET("/rest/api/organizations/{qualifiedIdentifier}/processes", {
			params: { path: { qualifiedIdentifier } },
		});
		const processes = lookup.data ?? [];
		if (
			lookup.data &&
			wanted.every((identifier) => processes.some((process) => process.identifier === identifier))
		) {
			log(`${qualifiedIdentifier} receives:`);
			for (const process of processes)
				log(
					`  ${process.title ?? process.identifier} (${process.qualifiedIdentifier ?? "no qualified identifier"})`,
				);
			return { participant, added: Boolean(added.data), lookup: processes };
		}
		if (lookup.error && lookup.response.status !== 404)
			throw explain(lookup.error as RegistryError, lookup.response);
		if (Date.now() > deadline)
			throw new Error(`the lookup of ${qualifiedIdentifier} did not show the registered processes within 15 s`);
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
}

if (require.main === module) {
	const [baseUrl = "http://localhost:3000", organizationIdentifier] = process.argv.slice(2);
	registerParticipant(baseUrl, { organizationIdentifier }).catch((error: unknown) => {
		console.error(String(error instanceof Error ? error.message : error));
		process.exit(1);
	});
}
