/** An organization in the network (decisions §14): its SML and Directory state and the DNS names access points look up. */
import { Badge, Button, Code, Group, Table, Text } from "@mantine/core";
import { useEffect, useState } from "react";
import { ok, type NetworkState } from "./api";
import { FailureAlert, failureOf, useSignedIn } from "./components";
import type { Failure } from "./errors";
import { describeDelivery, type Delivery } from "./network";

function DeliveryCell({ delivery, target, testId }: { delivery: Delivery; target: string; testId: string }) {
	const { label, detail, color } = describeDelivery(delivery, target);
	return (
		<Group gap="xs" wrap="nowrap" data-testid={testId} data-state={delivery.state}>
			<Badge color={color}>{label}</Badge>
			{detail ? <Text size="sm">{detail}</Text> : null}
		</Group>
	);
}

/** Read when shown and again on "Check again"; `title` names the organization in the table's caption. */
export function NetworkStatePanel({ qualifiedIdentifier, title }: { qualifiedIdentifier: string; title?: string }) {
	const { client } = useSignedIn();
	const [state, setState] = useState<NetworkState | null>(null);
	const [failure, setFailure] = useState<Failure | null>(null);
	const [version, setVersion] = useState(0);

	useEffect(() => {
		let current = true;
		ok<NetworkState>(
			client.GET("/rest/api/network/{qualifiedIdentifier}", { params: { path: { qualifiedIdentifier } } }),
		).then(
			(found) => current && (setState(found), setFailure(null)),
			(error) => current && setFailure(failureOf(error)),
		);
		return () => {
			current = false;
		};
	}, [client, qualifiedIdentifier, version]);

	return (
		<div aria-busy={state === null && failure === null} data-testid="network-state">
			<FailureAlert failure={failure} title="Could not read the network state" />
			<Table withTableBorder captionSide="top">
				<Table.Caption>{title ? `${title} in the network` : "In the network"}</Table.Caption>
				<Table.Tbody>
					<Table.Tr>
						<Table.Th scope="row">SML</Table.Th>
						<Table.Td>
							{state ? <DeliveryCell delivery={state.sml} target="SML" testId="sml-state" /> : null}
						</Table.Td>
					</Table.Tr>
					<Table.Tr>
						<Table.Th scope="row">Peppol Directory</Table.Th>
						<Table.Td>
							{state ? (
								<DeliveryCell delivery={state.directory} target="Directory" testId="directory-state" />
							) : null}
						</Table.Td>
					</Table.Tr>
					<Table.Tr>
						<Table.Th scope="row">DNS name (NAPTR)</Table.Th>
						<Table.Td>{state ? <Code data-testid="dns-naptr">{state.dns.naptr}</Code> : null}</Table.Td>
					</Table.Tr>
					<Table.Tr>
						<Table.Th scope="row">DNS name (legacy CNAME)</Table.Th>
						<Table.Td>{state ? <Code data-testid="dns-cname">{state.dns.cname}</Code> : null}</Table.Td>
					</Table.Tr>
				</Table.Tbody>
			</Table>
			<Button mt="sm" size="xs" variant="light" onClick={() => setVersion((value) => value + 1)}>
				Check again
			</Button>
		</div>
	);
}
