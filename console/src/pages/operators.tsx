/** ADMIN and NETWORK_AUTHORITY: process replacement jobs; ADMIN: accounts and service providers. */
import {
	Button,
	Checkbox,
	Group,
	Modal,
	MultiSelect,
	PasswordInput,
	Progress,
	Select,
	Stack,
	Text,
	TextInput,
	Title,
} from "@mantine/core";
import { useEffect, useState, type FormEvent } from "react";
import { ok, sortParam, type Account, type Page, type Process } from "../api";
import { FailureAlert, Notice, PagedTable, failureOf, useSignedIn } from "../components";
import type { Failure } from "../errors";
import type { Schemas } from "../../../client/index";

type Job = Schemas["ProcessReplacementJob"];
type JobResult = Schemas["ProcessReplacementResult"];
type ServiceProvider = Schemas["ServiceProvider"];
type AccessPoint = Schemas["AccessPoint"];

/** How often the page reads a running job again. */
const FOLLOW_MS = 400;

export function JobsPage() {
	const { client } = useSignedIn();
	const [processes, setProcesses] = useState<Process[]>([]);
	const [from, setFrom] = useState<string | null>(null);
	const [to, setTo] = useState<string | null>(null);
	const [dryRun, setDryRun] = useState(true);
	const [job, setJob] = useState<Job | null>(null);
	const [failure, setFailure] = useState<Failure | null>(null);
	const [version, setVersion] = useState(0);

	useEffect(() => {
		ok<Page<Process>>(
			client.GET("/rest/api/processes", { params: { query: { page: 0, size: 200, sort: ["title,ASC"] } } }),
		).then(
			(page) => setProcesses(page.content),
			() => undefined,
		);
	}, [client]);

	// Follows a running job until it ends, then shows its results.
	useEffect(() => {
		if (!job || job.state !== "RUNNING") return;
		const timer = setTimeout(() => {
			ok<Job>(
				client.GET("/rest/api/jobs/process-replacements/{identifier}", {
					params: { path: { identifier: job.identifier } },
				}),
			).then(
				(next) => {
					setJob(next);
					if (next.state !== "RUNNING") setVersion((value) => value + 1);
				},
				(error) => setFailure(failureOf(error)),
			);
		}, FOLLOW_MS);
		return () => clearTimeout(timer);
	}, [client, job]);

	const start = async (event: FormEvent) => {
		event.preventDefault();
		try {
			setJob(
				await ok<Job>(
					client.POST("/rest/api/jobs/process-replacements", {
						body: { from: from ?? "", to: to ?? "", dryRun },
					}),
				),
			);
			setFailure(null);
		} catch (error) {
			setFailure(failureOf(error));
		}
	};

	const options = processes.map((process) => ({
		value: process.identifier,
		label: `${process.title ?? process.identifier}${process.restricted ? " (restricted)" : ""}`,
	}));
	const percent = job
		? Math.round(job.progress.total === 0 ? 100 : (100 * job.progress.done) / job.progress.total)
		: 0;
	return (
		<Stack>
			<Title order={1}>Process replacement</Title>
			<Text>
				Replace a process with another for every participant holding it. A dry run only tells what would happen.
			</Text>
			<form onSubmit={start}>
				<Group align="flex-end">
					<Select
						label="Replace process"
						data={options}
						value={from}
						onChange={setFrom}
						error={failure?.fields.from}
						searchable
						required
						w={320}
					/>
					<Select
						label="With process"
						data={options}
						value={to}
						onChange={setTo}
						error={failure?.fields.to}
						searchable
						required
						w={320}
					/>
					<Checkbox
						label="Dry run"
						checked={dryRun}
						onChange={(event) => setDryRun(event.currentTarget.checked)}
					/>
					<Button type="submit" disabled={job?.state === "RUNNING"}>
						{dryRun ? "Start dry run" : "Start replacement"}
					</Button>
				</Group>
			</form>
			<FailureAlert failure={failure} />
			{job ? (
				<Stack gap="xs" data-testid="job">
					<Group>
						<Text>{job.dryRun ? "Dry run" : "Replacement"}</Text>
						<Text span fw={700} data-testid="job-state">
							{job.state}
						</Text>
						<Text>{`${job.progress.done} of ${job.progress.total} participants`}</Text>
					</Group>
					<Progress value={percent} aria-label="Job progress" animated={job.state === "RUNNING"} />
					<Text size="sm">
						{Object.entries(job.counts)
							.map(([outcome, count]) => `${outcome}: ${count}`)
							.join(" · ")}
					</Text>
					<PagedTable<JobResult>
						caption="Results per participant"
						reloadKey={`${job.identifier}|${version}`}
						rowKey={(row) => row.participant.identifier}
						load={(page, size, sorting) =>
							ok<Page<JobResult>>(
								client.GET("/rest/api/jobs/process-replacements/{identifier}/results", {
									params: {
										path: { identifier: job.identifier },
										query: { page, size, sort: sortParam(sorting.field, sorting.descending) },
									},
								}),
							)
						}
						columns={[
							{
								label: "Participant",
								sort: "participant.qualifiedIdentifier",
								render: (row) => row.participant.qualifiedIdentifier,
							},
							{ label: "Outcome", sort: "outcome", render: (row) => row.outcome },
							{ label: "Reason", render: (row) => row.reason ?? "" },
						]}
					/>
				</Stack>
			) : null}
		</Stack>
	);
}

export function AccountsPage() {
	const { client } = useSignedIn();
	const [version, setVersion] = useState(0);
	const [form, setForm] = useState({ username: "", password: "", role: "SERVICE_PROVIDER", serviceProvider: "" });
	const [providerTitle, setProviderTitle] = useState("");
	const [resetting, setResetting] = useState<Account | null>(null);
	const [newPassword, setNewPassword] = useState("");
	// The OAuth client whose access tokens act as the account (decisions §15).
	const [mapping, setMapping] = useState<Account | null>(null);
	const [clientId, setClientId] = useState("");
	const [failure, setFailure] = useState<Failure | null>(null);
	const [notice, setNotice] = useState("");
	// The access points a provider may receive through (decisions §13): every one, by title.
	const [accessPoints, setAccessPoints] = useState<AccessPoint[]>([]);
	const [linking, setLinking] = useState<ServiceProvider | null>(null);
	const [linked, setLinked] = useState<string[]>([]);
	useEffect(() => {
		ok<Page<AccessPoint>>(
			client.GET("/rest/api/accessPoints", { params: { query: { page: 0, size: 1000, sort: ["title,ASC"] } } }),
		).then(
			(page) => setAccessPoints(page.content),
			(error) => setFailure(failureOf(error)),
		);
	}, [client]);
	const accessPointTitle = (identifier: string) =>
		accessPoints.find((accessPoint) => accessPoint.identifier === identifier)?.title ?? identifier;
	const act = async (work: () => Promise<unknown>, done: string) => {
		try {
			await work();
			setFailure(null);
			setNotice(done);
			setVersion((value) => value + 1);
			return true;
		} catch (error) {
			setFailure(failureOf(error));
			setNotice("");
			return false;
		}
	};
	const addAccount = (event: FormEvent) => {
		event.preventDefault();
		const body = {
			username: form.username,
			password: form.password,
			role: form.role as Account["role"],
			...(form.serviceProvider ? { serviceProvider: form.serviceProvider } : {}),
		};
		void act(() => ok(client.POST("/rest/api/accounts", { body })), `Account ${form.username} added.`).then(
			(done) => done && setForm({ ...form, username: "", password: "" }),
		);
	};
	const addProvider = (event: FormEvent) => {
		event.preventDefault();
		void act(
			() => ok(client.POST("/rest/api/service-providers", { body: { title: providerTitle } })),
			`Service provider ${providerTitle} added.`,
		).then((done) => done && setProviderTitle(""));
	};
	const errors = failure?.fields ?? {};
	return (
		<Stack>
			<Title order={1}>Accounts and service providers</Title>
			<Notice>{notice}</Notice>
			<FailureAlert failure={failure} />
			<form onSubmit={addAccount}>
				<Title order={2}>Add an account</Title>
				<Group align="flex-start">
					<TextInput
						label="Username"
						value={form.username}
						onChange={(event) => setForm({ ...form, username: event.currentTarget.value })}
						error={errors.username}
						required
					/>
					<PasswordInput
						label="Password"
						description="At least 12 characters"
						value={form.password}
						onChange={(event) => setForm({ ...form, password: event.currentTarget.value })}
						error={errors.password}
						required
					/>
					<Select
						label="Role"
						data={["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", "ADMIN", "NETWORK_AUTHORITY"]}
						value={form.role}
						onChange={(role) => setForm({ ...form, role: role ?? "SERVICE_PROVIDER" })}
						error={errors.role}
						allowDeselect={false}
					/>
					<TextInput
						label="Service provider identifier"
						value={form.serviceProvider}
						onChange={(event) => setForm({ ...form, serviceProvider: event.currentTarget.value })}
						error={errors.serviceProvider}
					/>
					<Button type="submit" mt={24}>
						Add account
					</Button>
				</Group>
			</form>
			<PagedTable<Account>
				caption="Accounts"
				reloadKey={version}
				rowKey={(row) => row.identifier}
				initialSort={{ field: "username", descending: false }}
				load={(page, size, sorting) =>
					ok<Page<Account>>(
						client.GET("/rest/api/accounts", {
							params: { query: { page, size, sort: sortParam(sorting.field, sorting.descending) } },
						}),
					)
				}
				columns={[
					{ label: "Username", sort: "username", render: (row) => row.username },
					{ label: "Role", sort: "role", render: (row) => row.role },
					{ label: "Provider", render: (row) => row.serviceProvider ?? row.accessPointProvider ?? "" },
					{ label: "OAuth client", render: (row) => row.oauthClientId ?? "" },
					{
						label: "State",
						render: (row) =>
							row.disabled ? (
								<Text span fw={700}>
									disabled
								</Text>
							) : (
								<Text span fw={700}>
									active
								</Text>
							),
					},
					{
						label: "Actions",
						render: (row) => (
							<Group gap="xs" wrap="nowrap">
								<Button
									size="compact-sm"
									variant="subtle"
									onClick={() => setResetting(row)}
									aria-label={`Reset the password of ${row.username}`}
								>
									Reset password
								</Button>
								<Button
									size="compact-sm"
									variant="subtle"
									onClick={() => {
										setClientId(row.oauthClientId ?? "");
										setMapping(row);
									}}
									aria-label={`Set the OAuth client of ${row.username}`}
								>
									OAuth client
								</Button>
								{row.disabled ? null : (
									<Button
										size="compact-sm"
										variant="subtle"
										color="red"
										aria-label={`Disable ${row.username}`}
										onClick={() =>
											void act(
												() =>
													ok(
														client.POST("/rest/api/accounts/{identifier}/disable", {
															params: { path: { identifier: row.identifier } },
														}),
													),
												`${row.username} disabled.`,
											)
										}
									>
										Disable
									</Button>
								)}
							</Group>
						),
					},
				]}
			/>
			<form onSubmit={addProvider}>
				<Title order={2}>Add a service provider</Title>
				<Group align="flex-end">
					<TextInput
						label="Title"
						value={providerTitle}
						onChange={(event) => setProviderTitle(event.currentTarget.value)}
						error={errors.title}
						required
						w={360}
					/>
					<Button type="submit">Add service provider</Button>
				</Group>
			</form>
			<PagedTable<ServiceProvider>
				caption="Service providers"
				reloadKey={version}
				rowKey={(row) => row.identifier}
				initialSort={{ field: "title", descending: false }}
				load={(page, size, sorting) =>
					ok<Page<ServiceProvider>>(
						client.GET("/rest/api/service-providers", {
							params: { query: { page, size, sort: sortParam(sorting.field, sorting.descending) } },
						}),
					)
				}
				columns={[
					{ label: "Title", sort: "title", render: (row) => row.title },
					{ label: "Identifier", render: (row) => row.identifier },
					{
						label: "Receives through",
						render: (row) =>
							(row.accessPoints ?? [])
								.map((accessPoint) => accessPointTitle(accessPoint.identifier))
								.join(", "),
					},
					{
						label: "Actions",
						render: (row) => (
							<Button
								size="compact-sm"
								variant="subtle"
								aria-label={`Choose the access points of ${row.title}`}
								onClick={() => {
									setLinked((row.accessPoints ?? []).map((accessPoint) => accessPoint.identifier));
									setLinking(row);
								}}
							>
								Access points
							</Button>
						),
					},
				]}
			/>
			<Modal
				lockScroll={false}
				closeButtonProps={{ "aria-label": "Close" }}
				opened={linking !== null}
				onClose={() => setLinking(null)}
				title={`Access points of ${linking?.title ?? ""}`}
			>
				<form
					onSubmit={(event) => {
						event.preventDefault();
						const provider = linking as ServiceProvider;
						setLinking(null);
						void act(
							() =>
								ok(
									client.PUT("/rest/api/service-providers/{identifier}/access-points", {
										params: { path: { identifier: provider.identifier } },
										body: { accessPoints: linked.map((identifier) => ({ identifier })) },
									}),
								),
							`${provider.title} receives through ${linked.length} access point(s).`,
						);
					}}
				>
					<Stack>
						<MultiSelect
							label="Its participants receive through"
							description="The SMP answers publish these access points' endpoints for the provider's participants"
							data={accessPoints.map((accessPoint) => ({
								value: accessPoint.identifier,
								label: `${accessPoint.title} (${accessPoint.provider.title})`,
							}))}
							value={linked}
							onChange={setLinked}
							searchable
							clearable
						/>
						<Button type="submit">Save access points</Button>
					</Stack>
				</form>
			</Modal>
			<Modal
				lockScroll={false}
				closeButtonProps={{ "aria-label": "Close" }}
				opened={mapping !== null}
				onClose={() => setMapping(null)}
				title={`OAuth client of ${mapping?.username ?? ""}`}
			>
				<form
					onSubmit={(event) => {
						event.preventDefault();
						const account = mapping as Account;
						const oauthClientId = clientId.trim() || null;
						setMapping(null);
						void act(
							() =>
								ok(
									client.PUT("/rest/api/accounts/{username}/oauth-client", {
										params: { path: { username: account.username } },
										body: { oauthClientId },
									}),
								),
							oauthClientId
								? `OAuth client ${oauthClientId} now acts as ${account.username}.`
								: `No OAuth client acts as ${account.username}.`,
						);
					}}
				>
					<Stack>
						<TextInput
							label="Client ID"
							description="The client_id of the access tokens that act as this account; empty: none"
							value={clientId}
							onChange={(event) => setClientId(event.currentTarget.value)}
						/>
						<Button type="submit">Save OAuth client</Button>
					</Stack>
				</form>
			</Modal>
			<Modal
				lockScroll={false}
				closeButtonProps={{ "aria-label": "Close" }}
				opened={resetting !== null}
				onClose={() => setResetting(null)}
				title={`New password for ${resetting?.username ?? ""}`}
			>
				<form
					onSubmit={(event) => {
						event.preventDefault();
						const account = resetting as Account;
						setResetting(null);
						void act(
							() =>
								ok(
									client.PUT("/rest/api/accounts/{identifier}/password", {
										params: { path: { identifier: account.identifier } },
										body: { password: newPassword },
									}),
								),
							`Password of ${account.username} set.`,
						).then(() => setNewPassword(""));
					}}
				>
					<Stack>
						<PasswordInput
							label="New password"
							description="At least 12 characters"
							value={newPassword}
							onChange={(event) => setNewPassword(event.currentTarget.value)}
							required
						/>
						<Button type="submit">Set password</Button>
					</Stack>
				</form>
			</Modal>
		</Stack>
	);
}
