/**
 * Access points: every authenticated role reads them, with each endpoint certificate's subject and
 * end and a warning when it ends within 30 days; an ACCESS_POINT_PROVIDER (and ADMIN) replaces
 * its own access points' endpoints, the data the SMP answers publish (decisions §13).
 */
import { Badge, Button, Fieldset, Group, Stack, Text, TextInput, Textarea, Title } from "@mantine/core";
import { useEffect, useState, type FormEvent } from "react";
import { Link } from "wouter";
import { ok, sortParam, type Account, type Page } from "../api";
import { certificateSummary, certificateWarning, pemOf } from "../certificate";
import { FailureAlert, Notice, PagedTable, failureOf, useSignedIn } from "../components";
import type { Failure } from "../errors";
import type { Schemas } from "../../../client/index";

type AccessPoint = Schemas["AccessPoint"];
type Endpoint = AccessPoint["endpoints"][number];
type EndpointRequest = Schemas["accessPointEndpointsFormDTO"]["endpoints"][number];

/** May this account change the access point's endpoints? Its own provider, or ADMIN (the operation's roles). */
function mayEdit(account: Account, accessPoint: AccessPoint): boolean {
	return (
		account.role === "ADMIN" ||
		(account.role === "ACCESS_POINT_PROVIDER" && account.accessPointProvider === accessPoint.provider.identifier)
	);
}

/** A certificate's subject and end, with the warning the registry's alert also raises. */
function CertificateLine({ certificate }: { certificate: string }) {
	const summary = certificateSummary(certificate);
	if (!summary)
		return (
			<Text size="sm" c="red.9">
				The certificate cannot be read.
			</Text>
		);
	const warning = certificateWarning(summary);
	return (
		<Group gap="xs" data-testid="certificate">
			<Text size="sm">
				Certificate <span data-testid="certificate-subject">{summary.subject}</span>, until{" "}
				{summary.notAfter.toISOString().slice(0, 10)}
			</Text>
			{warning ? (
				// Dark enough for white text (WCAG AA contrast; the browser test checks it with axe).
				<Badge color={warning === "expired" ? "red.9" : "#8f3b00"} data-testid="certificate-warning">
					{warning === "expired" ? "Expired" : "Expires within 30 days"}
				</Badge>
			) : null}
		</Group>
	);
}

function EndpointSummary({ endpoint }: { endpoint: Endpoint }) {
	return (
		<Stack gap={2}>
			<Text size="sm">{`${endpoint.url} (${endpoint.transportProfile.value ?? ""})`}</Text>
			{endpoint.certificate ? <CertificateLine certificate={endpoint.certificate} /> : null}
		</Stack>
	);
}

export function AccessPointsPage() {
	const { client, account } = useSignedIn();
	return (
		<Stack>
			<Title order={1}>Access points</Title>
			<PagedTable<AccessPoint>
				caption="Access points"
				rowKey={(row) => row.identifier}
				initialSort={{ field: "title", descending: false }}
				load={(page, size, sorting) =>
					ok<Page<AccessPoint>>(
						client.GET("/rest/api/accessPoints", {
							params: { query: { page, size, sort: sortParam(sorting.field, sorting.descending) } },
						}),
					)
				}
				columns={[
					{ label: "Title", sort: "title", render: (row) => row.title },
					{ label: "Provider", render: (row) => row.provider.title },
					{
						label: "Endpoints",
						render: (row) => (
							<Stack gap="xs">
								{row.endpoints.map((endpoint, index) => (
									<EndpointSummary key={index} endpoint={endpoint} />
								))}
							</Stack>
						),
					},
					{
						label: "Actions",
						render: (row) =>
							mayEdit(account, row) ? (
								<Button
									component={Link}
									href={`/access-points/${row.identifier}/endpoints`}
									size="compact-sm"
									variant="subtle"
									aria-label={`Edit the endpoints of ${row.title}`}
								>
									Edit endpoints
								</Button>
							) : null,
					},
				]}
			/>
		</Stack>
	);
}

/** One endpoint as the form edits it: every field a string. */
interface EndpointForm {
	url: string;
	profileValue: string;
	profileTitle: string;
	certificateTypes: string;
	certificate: string;
	activationDate: string;
	expirationDate: string;
	description: string;
	technicalContactUrl: string;
}

const NEW_ENDPOINT: EndpointForm = {
	url: "",
	profileValue: "peppol-transport-as4-v2_0",
	profileTitle: "Peppol AS4 profile v2",
	certificateTypes: "Peppol AP",
	certificate: "",
	activationDate: "",
	expirationDate: "",
	description: "",
	technicalContactUrl: "",
};

function formOf(endpoint: Endpoint): EndpointForm {
	return {
		url: endpoint.url,
		profileValue: endpoint.transportProfile.value ?? "",
		profileTitle: endpoint.transportProfile.title ?? "",
		certificateTypes: (endpoint.transportProfile.certificateTypes ?? []).join(", "),
		certificate: endpoint.certificate ? pemOf(endpoint.certificate) : "",
		activationDate: endpoint.activationDate ?? "",
		expirationDate: endpoint.expirationDate ?? "",
		description: endpoint.description ?? "",
		technicalContactUrl: endpoint.technicalContactUrl ?? "",
	};
}

/** The request's endpoint: optional fields left out when empty (the registry stores only what is set). */
function endpointOf(form: EndpointForm): EndpointRequest {
	const optional = {
		certificate: form.certificate.trim(),
		activationDate: form.activationDate.trim(),
		expirationDate: form.expirationDate.trim(),
		description: form.description.trim(),
		technicalContactUrl: form.technicalContactUrl.trim(),
	};
	return {
		url: form.url.trim(),
		transportProfile: {
			title: form.profileTitle.trim(),
			value: form.profileValue.trim(),
			certificateTypes: form.certificateTypes
				.split(",")
				.map((type) => type.trim())
				.filter(Boolean),
		},
		...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== "")),
	};
}

export function AccessPointEndpointsPage({ identifier }: { identifier: string }) {
	const { client } = useSignedIn();
	const [accessPoint, setAccessPoint] = useState<AccessPoint | null>(null);
	const [endpoints, setEndpoints] = useState<EndpointForm[]>([]);
	const [failure, setFailure] = useState<Failure | null>(null);
	const [notice, setNotice] = useState("");
	const [busy, setBusy] = useState(false);

	const show = (value: AccessPoint) => {
		setAccessPoint(value);
		setEndpoints(value.endpoints.map(formOf));
	};
	useEffect(() => {
		ok<AccessPoint>(
			client.GET("/rest/api/accessPoints/{accessPoint}", { params: { path: { accessPoint: identifier } } }),
		).then(show, (error) => setFailure(failureOf(error)));
	}, [client, identifier]);

	const change = (index: number, field: keyof EndpointForm, value: string) =>
		setEndpoints((before) => before.map((entry, at) => (at === index ? { ...entry, [field]: value } : entry)));

	const submit = async (event: FormEvent) => {
		event.preventDefault();
		setBusy(true);
		try {
			const saved = await ok<AccessPoint>(
				client.PUT("/rest/api/accessPoints/{accessPoint}/endpoints", {
					params: { path: { accessPoint: identifier } },
					body: { endpoints: endpoints.map(endpointOf) },
				}),
			);
			show(saved);
			setFailure(null);
			setNotice(`Endpoints of ${saved.title} saved.`);
		} catch (error) {
			setFailure(failureOf(error));
			setNotice("");
		} finally {
			setBusy(false);
		}
	};

	const paths = failure?.paths ?? {};
	return (
		<Stack>
			<Title order={1}>{accessPoint ? `Endpoints of ${accessPoint.title}` : "Endpoints"}</Title>
			<Text>
				<Link href="/access-points">Back to access points</Link>
			</Text>
			<Notice>{notice}</Notice>
			<FailureAlert failure={failure} />
			{accessPoint ? (
				<form onSubmit={submit} aria-busy={busy}>
					<Stack>
						{endpoints.length === 0 ? <Text>No endpoints: this access point receives nothing.</Text> : null}
						{endpoints.map((endpoint, index) => {
							const at = (field: string) => paths[`endpoints[${index}].${field}`];
							const input = (field: keyof EndpointForm, label: string, description?: string) => (
								<TextInput
									label={label}
									description={description}
									value={endpoint[field]}
									onChange={(event) => change(index, field, event.currentTarget.value)}
									error={at(field)}
								/>
							);
							const summary = endpoint.certificate.trim()
								? certificateSummary(endpoint.certificate)
								: null;
							return (
								<Fieldset key={index} legend={`Endpoint ${index + 1}`} data-testid="endpoint">
									<Stack gap="sm">
										<TextInput
											label="URL"
											value={endpoint.url}
											onChange={(event) => change(index, "url", event.currentTarget.value)}
											error={at("url")}
											required
										/>
										<Group grow align="flex-start">
											<TextInput
												label="Transport profile"
												value={endpoint.profileValue}
												onChange={(event) =>
													change(index, "profileValue", event.currentTarget.value)
												}
												error={at("transportProfile.value") ?? at("transportProfile")}
												required
											/>
											<TextInput
												label="Transport profile title"
												value={endpoint.profileTitle}
												onChange={(event) =>
													change(index, "profileTitle", event.currentTarget.value)
												}
												error={at("transportProfile.title")}
												required
											/>
											{input("certificateTypes", "Certificate types", "Separated by commas")}
										</Group>
										<Textarea
											label="Certificate"
											description="The access point's X.509 certificate: paste the PEM (-----BEGIN CERTIFICATE----- …)"
											value={endpoint.certificate}
											onChange={(event) =>
												change(index, "certificate", event.currentTarget.value)
											}
											error={at("certificate")}
											autosize
											minRows={3}
											maxRows={10}
											styles={{ input: { fontFamily: "monospace", fontSize: 12 } }}
										/>
										{summary ? <CertificateLine certificate={endpoint.certificate} /> : null}
										<Group grow align="flex-start">
											{input(
												"activationDate",
												"Activation date",
												"YYYY-MM-DD or an ISO date-time",
											)}
											{input(
												"expirationDate",
												"Expiration date",
												"YYYY-MM-DD or an ISO date-time",
											)}
										</Group>
										{input("description", "Description")}
										{input("technicalContactUrl", "Technical contact URL", "https://…")}
										<Group>
											<Button
												variant="subtle"
												color="red"
												onClick={() =>
													setEndpoints((before) =>
														before.filter((_entry, at) => at !== index),
													)
												}
											>
												{`Remove endpoint ${index + 1}`}
											</Button>
										</Group>
									</Stack>
								</Fieldset>
							);
						})}
						<Group>
							<Button
								variant="default"
								onClick={() => setEndpoints((before) => [...before, NEW_ENDPOINT])}
							>
								Add endpoint
							</Button>
							<Button type="submit" loading={busy}>
								Save endpoints
							</Button>
						</Group>
					</Stack>
				</form>
			) : null}
		</Stack>
	);
}
