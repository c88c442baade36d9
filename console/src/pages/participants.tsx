/** SERVICE_PROVIDER: its participants (search, sort, page), register, edit with If-Match, delete, transfer. */
import {
	Anchor,
	Button,
	Checkbox,
	Code,
	Group,
	Modal,
	MultiSelect,
	Radio,
	Stack,
	TextInput,
	Title,
} from "@mantine/core";
import { useEffect, useState, type FormEvent, type ReactNode } from "react";
import { Link, useLocation } from "wouter";
import { ok, sortParam, withTag, type Page, type Participant, type Process } from "../api";
import type { RegistryClient } from "../../../client/index";
import { CopyButton, FailureAlert, Notice, PagedTable, failureOf, useSignedIn, type Sorting } from "../components";
import { NetworkStatePanel } from "../network-panel";
import type { Failure } from "../errors";

export function ParticipantsPage() {
	const { client } = useSignedIn();
	const [search, setSearch] = useState("");
	const [withProcesses, setWithProcesses] = useState(false);
	const [version, setVersion] = useState(0);
	const [deleting, setDeleting] = useState<Participant | null>(null);
	const [transferring, setTransferring] = useState<Participant | null>(null);
	const [failure, setFailure] = useState<Failure | null>(null);
	const [notice, setNotice] = useState("");

	const remove = async () => {
		const participant = deleting as Participant;
		setDeleting(null);
		try {
			await ok(
				client.DELETE("/rest/api/participants/{participant}", {
					params: { path: { participant: participant.qualifiedIdentifier } },
				}),
			);
			setNotice(`${participant.name ?? participant.qualifiedIdentifier} deleted.`);
			setFailure(null);
			setVersion((value) => value + 1);
		} catch (error) {
			setFailure(failureOf(error));
		}
	};

	return (
		<Stack>
			<Group justify="space-between">
				<Title order={1}>Participants</Title>
				<Button component={Link} href="/participants/new">
					Register a participant
				</Button>
			</Group>
			<ParticipantSearch onSearch={setSearch}>
				<Checkbox
					label="Show processes"
					checked={withProcesses}
					onChange={(event) => setWithProcesses(event.currentTarget.checked)}
				/>
			</ParticipantSearch>
			<Notice>{notice}</Notice>
			<FailureAlert failure={failure} />
			<PagedTable<Participant>
				caption="Your participants"
				reloadKey={`${search}|${withProcesses}|${version}`}
				rowKey={(row) => row.identifier}
				initialSort={{ field: "name", descending: false }}
				load={(page, size, sorting) => findParticipants(client, { page, size, sorting, search, withProcesses })}
				columns={[
					{ label: "Name", sort: "name", render: (row) => row.name },
					{ label: "Organization", sort: "organizationIdentifier", render: (row) => row.qualifiedIdentifier },
					{ label: "Registered", sort: "registrationDate", render: (row) => row.registrationDate },
					{ label: "Changed", sort: "lastModificationDate", render: (row) => row.lastModificationDate },
					...(withProcesses
						? [
								{
									label: "Processes",
									render: (row: Participant) =>
										(row.processes ?? []).map((process) => process.title).join(", "),
								},
							]
						: []),
					{
						label: "Actions",
						render: (row) => (
							<Group gap="xs" wrap="nowrap">
								<Anchor
									component={Link}
									href={`/participants/${encodeURIComponent(row.qualifiedIdentifier)}/edit`}
									aria-label={`Edit ${row.name ?? row.qualifiedIdentifier}`}
								>
									Edit
								</Anchor>
								<Button
									size="compact-sm"
									variant="subtle"
									onClick={() => setTransferring(row)}
									aria-label={`Transfer ${row.name ?? row.qualifiedIdentifier}`}
								>
									Transfer
								</Button>
								<Button
									size="compact-sm"
									variant="subtle"
									color="red"
									onClick={() => setDeleting(row)}
									aria-label={`Delete ${row.name ?? row.qualifiedIdentifier}`}
								>
									Delete
								</Button>
							</Group>
						),
					},
				]}
			/>
			<Modal
				lockScroll={false}
				closeButtonProps={{ "aria-label": "Close" }}
				opened={deleting !== null}
				onClose={() => setDeleting(null)}
				title={`Delete ${deleting?.name ?? ""}?`}
			>
				<p>The participant stops receiving documents through the registry.</p>
				<Group>
					<Button color="red" onClick={() => void remove()}>
						Yes, delete
					</Button>
					<Button variant="default" onClick={() => setDeleting(null)}>
						Keep it
					</Button>
				</Group>
			</Modal>
			{transferring ? (
				<TransferDialog
					participant={transferring}
					onClose={(message) => {
						setTransferring(null);
						if (message) {
							setNotice(message);
							setVersion((value) => value + 1);
						}
					}}
				/>
			) : null}
		</Stack>
	);
}

/** The search box of a participants page (name words or an organization number); `children` go beside it. */
export function ParticipantSearch({ onSearch, children }: { onSearch(search: string): void; children?: ReactNode }) {
	const [query, setQuery] = useState("");
	return (
		<form
			onSubmit={(event) => {
				event.preventDefault();
				onSearch(query.trim());
			}}
		>
			<Group align="flex-end">
				<TextInput
					label="Search by name or organization number"
					value={query}
					onChange={(event) => setQuery(event.currentTarget.value)}
					w={360}
				/>
				<Button type="submit" variant="light">
					Search
				</Button>
				{children}
			</Group>
		</form>
	);
}

/** One page of findParticipants: the caller's own participants, or every provider's for the operators. */
export function findParticipants(
	client: RegistryClient,
	{
		page,
		size,
		sorting,
		search,
		withProcesses,
	}: { page: number; size: number; sorting: Sorting; search: string; withProcesses: boolean },
): Promise<Page<Participant>> {
	return ok<Page<Participant>>(
		client.GET("/rest/api/participants", {
			params: {
				query: {
					page,
					size,
					sort: sortParam(sorting.field, sorting.descending),
					...(search ? { query: search } : {}),
					processes: withProcesses,
				},
			},
		}),
	);
}

function TransferDialog({ participant, onClose }: { participant: Participant; onClose(message?: string): void }) {
	const { client } = useSignedIn();
	const [mode, setMode] = useState("consented");
	const [receiver, setReceiver] = useState("");
	const [key, setKey] = useState<string | null>(null);
	const [failure, setFailure] = useState<Failure | null>(null);
	const submit = async (event: FormEvent) => {
		event.preventDefault();
		try {
			if (mode === "consented") {
				const transfer = await ok<{ key?: string }>(
					client.POST("/rest/api/transfers", {
						body: {
							participant: participant.qualifiedIdentifier,
							serviceProviderIdentifier: receiver.trim(),
						},
					}),
				);
				setKey(transfer.key ?? "");
			} else {
				await ok(
					client.PUT("/rest/api/participants/{participant}/transfer/{serviceProviderIdentifier}", {
						params: {
							path: {
								participant: participant.qualifiedIdentifier,
								serviceProviderIdentifier: receiver.trim(),
							},
						},
					}),
				);
				onClose(`${participant.name ?? participant.qualifiedIdentifier} transferred.`);
			}
		} catch (error) {
			setFailure(failureOf(error));
		}
	};
	return (
		<Modal
			lockScroll={false}
			closeButtonProps={{ "aria-label": "Close" }}
			opened
			onClose={() => onClose(key ? "Transfer started: the receiver completes it with the key." : undefined)}
			title={`Transfer ${participant.name ?? participant.qualifiedIdentifier}`}
			size="lg"
		>
			{key ? (
				<Stack>
					<p>Give this key to the receiving provider. It is shown only once.</p>
					<Group>
						<Code fz="lg" data-testid="transfer-key">
							{key}
						</Code>
						<CopyButton text={key} label="Copy key" />
					</Group>
					<Button onClick={() => onClose("Transfer started: the receiver completes it with the key.")}>
						Done
					</Button>
				</Stack>
			) : (
				<form onSubmit={submit}>
					<Stack>
						<Radio.Group label="How" value={mode} onChange={setMode}>
							<Stack gap="xs" mt="xs">
								<Radio
									value="consented"
									label="With the receiver's consent (a key the receiver completes it with)"
								/>
								<Radio value="direct" label="At once (one step)" />
							</Stack>
						</Radio.Group>
						<TextInput
							label="Receiving service provider (identifier)"
							value={receiver}
							onChange={(event) => setReceiver(event.currentTarget.value)}
							error={failure?.fields.serviceProviderIdentifier}
							required
						/>
						<FailureAlert failure={failure} />
						<Button type="submit">{mode === "consented" ? "Start transfer" : "Transfer now"}</Button>
					</Stack>
				</form>
			)}
		</Modal>
	);
}

interface Form {
	icd: string;
	organizationIdentifier: string;
	name: string;
	processes: string[];
	contactName: string;
	email: string;
	phoneNumber: string;
}

const EMPTY: Form = {
	icd: "0192",
	organizationIdentifier: "",
	name: "",
	processes: [],
	contactName: "",
	email: "",
	phoneNumber: "",
};

/** Register (no `qualifiedIdentifier`) or edit one participant; every field error at its field. */
export function ParticipantFormPage({ qualifiedIdentifier }: { qualifiedIdentifier?: string }) {
	const { client } = useSignedIn();
	const [, navigate] = useLocation();
	const [form, setForm] = useState<Form>(EMPTY);
	const [etag, setEtag] = useState<string | null>(null);
	const [processes, setProcesses] = useState<Process[]>([]);
	const [failure, setFailure] = useState<Failure | null>(null);
	const [busy, setBusy] = useState(false);

	useEffect(() => {
		ok<Page<Process>>(
			client.GET("/rest/api/processes", { params: { query: { page: 0, size: 200, sort: ["title,ASC"] } } }),
		).then(
			(page) => setProcesses(page.content),
			() => undefined,
		);
		if (!qualifiedIdentifier) return;
		withTag<Participant>(
			client.GET("/rest/api/participants/{participant}", {
				params: { path: { participant: qualifiedIdentifier } },
			}),
		).then(
			({ value, etag: tag }) => {
				setEtag(tag);
				setForm({
					icd: value.icd,
					organizationIdentifier: value.organizationIdentifier,
					name: value.name ?? "",
					processes: (value.processes ?? []).map((process) => process.identifier),
					contactName: value.contact?.name ?? "",
					email: value.contact?.email ?? "",
					phoneNumber: value.contact?.phoneNumber ?? "",
				});
			},
			(error) => setFailure(failureOf(error)),
		);
	}, [client, qualifiedIdentifier]);

	const submit = async (event: FormEvent) => {
		event.preventDefault();
		setBusy(true);
		const contact = { name: form.contactName, email: form.email, phoneNumber: form.phoneNumber };
		const chosen = form.processes.map((identifier) => ({ identifier }));
		try {
			if (qualifiedIdentifier) {
				await ok(
					client.PUT("/rest/api/participants/{participant}", {
						params: { path: { participant: qualifiedIdentifier } },
						body: { processes: chosen, contact },
						headers: etag ? { "If-Match": etag } : undefined,
					}),
				);
			} else {
				await ok(
					client.POST("/rest/api/participants", {
						body: {
							icd: form.icd,
							organizationIdentifier: form.organizationIdentifier,
							name: form.name || null,
							processes: chosen,
							contact,
						},
					}),
				);
			}
			navigate("/participants");
		} catch (error) {
			setFailure(failureOf(error));
		} finally {
			setBusy(false);
		}
	};

	const errors = failure?.fields ?? {};
	const input = (name: keyof Form) => ({
		value: form[name] as string,
		onChange: (event: { currentTarget: { value: string } }) =>
			setForm({ ...form, [name]: event.currentTarget.value }),
	});
	return (
		<Stack maw={640}>
			<Title order={1}>
				{qualifiedIdentifier ? `Edit ${form.name || qualifiedIdentifier}` : "Register a participant"}
			</Title>
			<FailureAlert failure={failure} title={failure?.status === 412 ? "Changed by someone else" : "Not saved"} />
			{failure?.status === 412 ? (
				<Button variant="light" onClick={() => window.location.reload()}>
					Reload the current version
				</Button>
			) : null}
			<form onSubmit={submit} noValidate>
				<Stack>
					<Group grow>
						<TextInput
							label="ICD"
							{...input("icd")}
							error={errors.icd}
							disabled={Boolean(qualifiedIdentifier)}
							required
						/>
						<TextInput
							label="Organization number"
							{...input("organizationIdentifier")}
							error={errors.organizationIdentifier}
							disabled={Boolean(qualifiedIdentifier)}
							required
						/>
					</Group>
					<TextInput
						label="Name"
						{...input("name")}
						error={errors.name}
						disabled={Boolean(qualifiedIdentifier)}
					/>
					<MultiSelect
						label="Processes"
						data={processes.map((process) => ({
							value: process.identifier,
							label: `${process.title ?? process.identifier}${process.restricted ? " (restricted)" : ""}`,
						}))}
						value={form.processes}
						onChange={(chosen) => setForm({ ...form, processes: chosen })}
						error={errors.processes}
						searchable
					/>
					<TextInput
						label="Contact name"
						{...input("contactName")}
						error={errors["contact.name"] ?? errors.contact}
						required
					/>
					<TextInput
						label="Contact e-mail"
						type="email"
						{...input("email")}
						error={errors["contact.email"]}
						required
					/>
					<TextInput
						label="Contact phone number"
						type="tel"
						{...input("phoneNumber")}
						error={errors["contact.phoneNumber"]}
						required
					/>
					<Group>
						<Button type="submit" loading={busy}>
							{qualifiedIdentifier ? "Save changes" : "Register"}
						</Button>
						<Button component={Link} href="/participants" variant="default">
							Cancel
						</Button>
					</Group>
				</Stack>
			</form>
			{qualifiedIdentifier ? (
				<section aria-label="In the network">
					<Title order={2} size="h3" mb="xs">
						In the network
					</Title>
					<NetworkStatePanel
						qualifiedIdentifier={qualifiedIdentifier}
						title={form.name || qualifiedIdentifier}
					/>
				</section>
			) : null}
		</Stack>
	);
}
