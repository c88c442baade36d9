/**
 * ADMIN and NETWORK_AUTHORITY: every provider's participants (decisions §4: operators see them all),
 * searched and paged like a service provider's; a drawer with one participant and its organization
 * in the network (SML, Directory, DNS names); ADMIN deletes any, by UUID.
 */
import { Button, Drawer, Group, Modal, Stack, Table, Title } from "@mantine/core";
import { useState } from "react";
import { ok, type Participant } from "../api";
import { FailureAlert, Notice, PagedTable, failureOf, useSignedIn } from "../components";
import type { Failure } from "../errors";
import { NetworkStatePanel } from "../network-panel";
import { ParticipantSearch, findParticipants } from "./participants";

const nameOf = (participant: Participant) => participant.name ?? participant.qualifiedIdentifier;

function ParticipantFacts({ participant }: { participant: Participant }) {
	const rows: [string, string | undefined | null][] = [
		["Organization", participant.qualifiedIdentifier],
		["Service provider", participant.provider ? participant.provider.title : undefined],
		["Provider identifier", participant.provider?.identifier],
		["Participant UUID", participant.identifier],
		["Registered", participant.registrationDate],
		["Changed", participant.lastModificationDate],
		[
			"Contact",
			[participant.contact?.name, participant.contact?.email, participant.contact?.phoneNumber]
				.filter(Boolean)
				.join(", "),
		],
	];
	return (
		<Table withTableBorder captionSide="top">
			<Table.Caption>The participant</Table.Caption>
			<Table.Tbody>
				{rows.map(([label, value]) => (
					<Table.Tr key={label}>
						<Table.Th scope="row">{label}</Table.Th>
						<Table.Td>{value ?? ""}</Table.Td>
					</Table.Tr>
				))}
			</Table.Tbody>
		</Table>
	);
}

export function AllParticipantsPage() {
	const { client, account } = useSignedIn();
	const mayDelete = account.role === "ADMIN";
	const [search, setSearch] = useState("");
	const [version, setVersion] = useState(0);
	const [shown, setShown] = useState<Participant | null>(null);
	const [deleting, setDeleting] = useState<Participant | null>(null);
	const [failure, setFailure] = useState<Failure | null>(null);
	const [notice, setNotice] = useState("");

	const remove = async () => {
		const participant = deleting as Participant;
		setDeleting(null);
		setShown(null);
		try {
			// By UUID: the one form of delete ADMIN has (an organization may have a participant per provider).
			await ok(
				client.DELETE("/rest/api/participants/{participant}", {
					params: { path: { participant: participant.identifier } },
				}),
			);
			setNotice(`${nameOf(participant)} (${participant.provider?.title ?? "its provider"}) deleted.`);
			setFailure(null);
			setVersion((value) => value + 1);
		} catch (error) {
			setFailure(failureOf(error));
		}
	};

	return (
		<Stack>
			<Title order={1}>All participants</Title>
			<ParticipantSearch onSearch={setSearch} />
			<Notice>{notice}</Notice>
			<FailureAlert failure={failure} />
			<PagedTable<Participant>
				caption="Every service provider's participants"
				reloadKey={`${search}|${version}`}
				rowKey={(row) => row.identifier}
				initialSort={{ field: "name", descending: false }}
				load={(page, size, sorting) =>
					findParticipants(client, { page, size, sorting, search, withProcesses: false })
				}
				columns={[
					{ label: "Name", sort: "name", render: (row) => row.name },
					{ label: "Organization", sort: "organizationIdentifier", render: (row) => row.qualifiedIdentifier },
					{ label: "Service provider", render: (row) => row.provider?.title ?? "" },
					{ label: "Changed", sort: "lastModificationDate", render: (row) => row.lastModificationDate },
					{
						label: "Actions",
						render: (row) => (
							<Group gap="xs" wrap="nowrap">
								<Button
									size="compact-sm"
									variant="subtle"
									onClick={() => setShown(row)}
									aria-label={`Details of ${nameOf(row)} (${row.provider?.title ?? ""})`}
								>
									Details
								</Button>
								{mayDelete ? (
									<Button
										size="compact-sm"
										variant="subtle"
										color="red"
										onClick={() => setDeleting(row)}
										aria-label={`Delete ${nameOf(row)} (${row.provider?.title ?? ""})`}
									>
										Delete
									</Button>
								) : null}
							</Group>
						),
					},
				]}
			/>
			<Drawer
				lockScroll={false}
				closeButtonProps={{ "aria-label": "Close" }}
				opened={shown !== null}
				onClose={() => setShown(null)}
				position="right"
				size="lg"
				title={shown ? nameOf(shown) : ""}
			>
				{shown ? (
					<Stack>
						<ParticipantFacts participant={shown} />
						<NetworkStatePanel qualifiedIdentifier={shown.qualifiedIdentifier} />
						{mayDelete ? (
							<Group>
								<Button color="red" variant="light" onClick={() => setDeleting(shown)}>
									Delete this participant
								</Button>
							</Group>
						) : null}
					</Stack>
				) : null}
			</Drawer>
			<Modal
				lockScroll={false}
				closeButtonProps={{ "aria-label": "Close" }}
				opened={deleting !== null}
				onClose={() => setDeleting(null)}
				title={`Delete ${deleting ? nameOf(deleting) : ""}?`}
			>
				<p>
					{`The participant of ${deleting?.provider?.title ?? "its provider"} stops receiving documents through the registry.`}
				</p>
				<Group>
					<Button color="red" onClick={() => void remove()}>
						Yes, delete
					</Button>
					<Button variant="default" onClick={() => setDeleting(null)}>
						Keep it
					</Button>
				</Group>
			</Modal>
		</Stack>
	);
}
