/** Transfers, the change feed, the audit trail and the caller's own account. */
import { Button, Code, Group, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useEffect, useState, type FormEvent } from "react";
import { ok, sortParam, type Page } from "../api";
import { CopyButton, FailureAlert, Notice, PagedTable, failureOf, useSignedIn } from "../components";
import type { Failure } from "../errors";
import type { Schemas } from "../../../client/index";

type Transfer = Schemas["Transfer"];
type AuditEvent = Schemas["AuditEvent"];
type Change = Schemas["Change"];

export function TransfersPage() {
	const { client, account } = useSignedIn();
	const [version, setVersion] = useState(0);
	const [identifier, setIdentifier] = useState("");
	const [key, setKey] = useState("");
	const [failure, setFailure] = useState<Failure | null>(null);
	const [notice, setNotice] = useState("");
	const act = async (work: () => Promise<unknown>, done: string) => {
		try {
			await work();
			setFailure(null);
			setNotice(done);
			setVersion((value) => value + 1);
		} catch (error) {
			setFailure(failureOf(error));
		}
	};
	const receive = (event: FormEvent) => {
		event.preventDefault();
		void act(
			() =>
				ok(
					client.POST("/rest/api/transfers/{identifier}/complete", {
						params: { path: { identifier: identifier.trim() } },
						body: { key: key.trim() },
					}),
				),
			"Transfer completed: the participant is yours.",
		);
	};
	return (
		<Stack>
			<Title order={1}>Transfers</Title>
			<Text>
				Start a transfer from the participant list. The receiving provider completes it here with the key.
			</Text>
			<Notice>{notice}</Notice>
			<FailureAlert failure={failure} />
			<form onSubmit={receive}>
				<Title order={2}>Receive a participant</Title>
				<Group align="flex-end">
					<TextInput
						label="Transfer identifier"
						value={identifier}
						onChange={(event) => setIdentifier(event.currentTarget.value)}
						error={failure?.fields.identifier}
						required
						w={360}
					/>
					<TextInput
						label="Key"
						value={key}
						onChange={(event) => setKey(event.currentTarget.value)}
						error={failure?.fields.key}
						required
						w={280}
					/>
					<Button type="submit">Complete transfer</Button>
				</Group>
			</form>
			<PagedTable<Transfer>
				caption="Transfers you send or receive"
				reloadKey={version}
				rowKey={(row) => row.identifier}
				initialSort={{ field: "createdDate", descending: true }}
				load={(page, size, sorting) =>
					ok<Page<Transfer>>(
						client.GET("/rest/api/transfers", {
							params: { query: { page, size, sort: sortParam(sorting.field, sorting.descending) } },
						}),
					)
				}
				columns={[
					{ label: "Participant", render: (row) => row.participant.qualifiedIdentifier },
					{ label: "From", render: (row) => row.from.name ?? row.from.identifier },
					{ label: "To", render: (row) => row.to.name ?? row.to.identifier },
					{
						label: "State",
						sort: "state",
						render: (row) => (
							<Text span fw={700}>
								{row.state}
							</Text>
						),
					},
					{ label: "Expires", sort: "expiresDate", render: (row) => row.expiresDate },
					{ label: "Identifier", render: (row) => <Code>{row.identifier}</Code> },
					{
						label: "Actions",
						render: (row) =>
							row.state === "PENDING" && row.to.identifier === account.serviceProvider ? (
								<Button
									size="compact-sm"
									variant="subtle"
									onClick={() => setIdentifier(row.identifier)}
									aria-label={`Receive ${row.participant.qualifiedIdentifier}`}
								>
									Receive
								</Button>
							) : row.state === "PENDING" && row.from.identifier === account.serviceProvider ? (
								<Button
									size="compact-sm"
									variant="subtle"
									color="red"
									aria-label={`Cancel the transfer of ${row.participant.qualifiedIdentifier}`}
									onClick={() =>
										void act(
											() =>
												ok(
													client.POST("/rest/api/transfers/{identifier}/cancel", {
														params: { path: { identifier: row.identifier } },
													}),
												),
											"Transfer cancelled.",
										)
									}
								>
									Cancel
								</Button>
							) : null,
					},
				]}
			/>
		</Stack>
	);
}

export function ChangesPage() {
	const { client } = useSignedIn();
	const [changes, setChanges] = useState<Change[]>([]);
	const [cursor, setCursor] = useState<string | undefined>(undefined);
	const [failure, setFailure] = useState<Failure | null>(null);
	const more = async (after: string | undefined, reset: boolean) => {
		try {
			const page = await ok<{ changes: Change[]; cursor: string }>(
				client.GET("/rest/api/changes", { params: { query: { limit: 20, ...(after ? { after } : {}) } } }),
			);
			setChanges((before) => (reset ? page.changes : [...before, ...page.changes]));
			setCursor(page.cursor);
		} catch (error) {
			setFailure(failureOf(error));
		}
	};
	useEffect(() => {
		void more(undefined, true);
	}, [client]);
	return (
		<Stack>
			<Title order={1}>Change feed</Title>
			<FailureAlert failure={failure} />
			<Table withTableBorder captionSide="top">
				<Table.Caption>Changes of your participants and the catalog, oldest first</Table.Caption>
				<Table.Thead>
					<Table.Tr>
						<Table.Th>Id</Table.Th>
						<Table.Th>At</Table.Th>
						<Table.Th>Kind</Table.Th>
						<Table.Th>Record</Table.Th>
					</Table.Tr>
				</Table.Thead>
				<Table.Tbody>
					{changes.map((change) => (
						<Table.Tr key={change.sequence}>
							<Table.Td>{change.sequence}</Table.Td>
							<Table.Td>{change.at}</Table.Td>
							<Table.Td>{`${change.resource} ${change.deleted ? "deleted" : change.operation}`}</Table.Td>
							<Table.Td>{change.identifier}</Table.Td>
						</Table.Tr>
					))}
				</Table.Tbody>
			</Table>
			<Group>
				<Button variant="light" onClick={() => void more(cursor, false)}>
					Load newer changes
				</Button>
			</Group>
		</Stack>
	);
}

export function AuditPage() {
	const { client } = useSignedIn();
	const [filters, setFilters] = useState({ participant: "", operation: "", from: "", to: "" });
	const [applied, setApplied] = useState(filters);
	return (
		<Stack>
			<Title order={1}>Audit trail</Title>
			<form
				onSubmit={(event) => {
					event.preventDefault();
					setApplied(filters);
				}}
			>
				<Group align="flex-end">
					<TextInput
						label="Participant"
						description="Qualified identifier or UUID"
						value={filters.participant}
						onChange={(event) => setFilters({ ...filters, participant: event.currentTarget.value })}
					/>
					<TextInput
						label="Operation"
						description="e.g. addParticipant"
						value={filters.operation}
						onChange={(event) => setFilters({ ...filters, operation: event.currentTarget.value })}
					/>
					<TextInput
						label="From"
						description="YYYY-MM-DD"
						value={filters.from}
						onChange={(event) => setFilters({ ...filters, from: event.currentTarget.value })}
					/>
					<TextInput
						label="To"
						description="YYYY-MM-DD"
						value={filters.to}
						onChange={(event) => setFilters({ ...filters, to: event.currentTarget.value })}
					/>
					<Button type="submit">Filter</Button>
				</Group>
			</form>
			<PagedTable<AuditEvent>
				caption="Audit events"
				reloadKey={JSON.stringify(applied)}
				rowKey={(row) => row.identifier}
				initialSort={{ field: "at", descending: true }}
				size={20}
				load={(page, size, sorting) => {
					const query = Object.fromEntries(
						Object.entries(applied).filter(([, value]) => value.trim() !== ""),
					);
					return ok<Page<AuditEvent>>(
						client.GET("/rest/api/events", {
							params: {
								query: { page, size, sort: sortParam(sorting.field, sorting.descending), ...query },
							},
						}),
					);
				}}
				columns={[
					{ label: "At", sort: "at", render: (row) => row.at },
					{ label: "Operation", sort: "operation", render: (row) => row.operation },
					{ label: "By", render: (row) => row.actor?.username ?? "" },
					{ label: "Record", render: (row) => `${row.resource} ${row.resourceId}` },
				]}
			/>
		</Stack>
	);
}

export function AccountPage() {
	const { account } = useSignedIn();
	return (
		<Stack>
			<Title order={1}>Your account</Title>
			<Table withTableBorder variant="vertical" maw={720}>
				<Table.Tbody>
					<Table.Tr>
						<Table.Th>Username</Table.Th>
						<Table.Td>{account.username}</Table.Td>
					</Table.Tr>
					<Table.Tr>
						<Table.Th>Role</Table.Th>
						<Table.Td>{account.role}</Table.Td>
					</Table.Tr>
					{account.serviceProvider ? (
						<Table.Tr>
							<Table.Th>Service provider</Table.Th>
							<Table.Td>
								<Group>
									<span>{account.serviceProviderTitle}</span>
									<Code>{account.serviceProvider}</Code>
									<CopyButton text={account.serviceProvider} label="Copy identifier" />
								</Group>
								<Text size="sm">
									Another provider needs this identifier to transfer a participant to you.
								</Text>
							</Table.Td>
						</Table.Tr>
					) : null}
					{account.accessPointProvider ? (
						<Table.Tr>
							<Table.Th>Access point provider</Table.Th>
							<Table.Td>
								<Code>{account.accessPointProvider}</Code>
							</Table.Td>
						</Table.Tr>
					) : null}
				</Table.Tbody>
			</Table>
		</Stack>
	);
}
