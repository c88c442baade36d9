/** Pages for anyone: the organization lookup, the catalog to browse, sign-in. */
import { Button, Group, PasswordInput, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { useState, type FormEvent } from "react";
import { useLocation } from "wouter";
import { anonymousClient, ok, signIn, sortParam, type DocumentType, type Page, type Process } from "../api";
import { FailureAlert, PagedTable, failureOf, useSession } from "../components";
import type { Failure } from "../errors";
import { CatalogEditor } from "./catalog-admin";

export function LookupPage() {
	const { session } = useSession();
	const [identifier, setIdentifier] = useState("");
	const [processes, setProcesses] = useState<Process[] | null>(null);
	const [failure, setFailure] = useState<Failure | null>(null);
	const lookUp = async (event: FormEvent) => {
		event.preventDefault();
		const client = session?.client ?? anonymousClient();
		try {
			setProcesses(
				await ok<Process[]>(
					client.GET("/rest/api/organizations/{qualifiedIdentifier}/processes", {
						params: { path: { qualifiedIdentifier: identifier.trim() } },
					}),
				),
			);
			setFailure(null);
		} catch (error) {
			setProcesses(null);
			setFailure(failureOf(error));
		}
	};
	return (
		<Stack>
			<Title order={1}>Organization lookup</Title>
			<form onSubmit={lookUp}>
				<Group align="flex-end">
					<TextInput
						label="Organization (qualified identifier)"
						description="For example iso6523-actorid-upis::0192:991825827"
						value={identifier}
						onChange={(event) => setIdentifier(event.currentTarget.value)}
						required
						w={460}
					/>
					<Button type="submit">Look up</Button>
				</Group>
			</form>
			<FailureAlert failure={failure} title="Lookup failed" />
			{processes ? (
				<Table withTableBorder captionSide="top">
					<Table.Caption>{`Processes the organization receives (${processes.length})`}</Table.Caption>
					<Table.Thead>
						<Table.Tr>
							<Table.Th>Title</Table.Th>
							<Table.Th>Domain</Table.Th>
							<Table.Th>Identifier</Table.Th>
						</Table.Tr>
					</Table.Thead>
					<Table.Tbody>
						{processes.map((process) => (
							<Table.Tr key={process.identifier}>
								<Table.Td>{process.title}</Table.Td>
								<Table.Td>{process.domain}</Table.Td>
								<Table.Td>{process.qualifiedIdentifier}</Table.Td>
							</Table.Tr>
						))}
					</Table.Tbody>
				</Table>
			) : null}
		</Stack>
	);
}

/** How long typing must pause before a catalog search is sent. */
const SEARCH_DEBOUNCE_MS = 300;

/**
 * A catalog search box: the API's `query` (title words or the qualified identifier), sent once
 * typing pauses or at once on Enter; the table it feeds starts again at its first page.
 */
function useCatalogSearch(label: string) {
	const [text, setText] = useState("");
	const [debounced] = useDebouncedValue(text.trim(), SEARCH_DEBOUNCE_MS);
	const [submitted, setSubmitted] = useState<string | null>(null);
	// Enter sends what is typed now; further typing goes back to the debounced value.
	const search = submitted ?? debounced;
	const box = (
		<form
			role="search"
			aria-label={label}
			onSubmit={(event) => {
				event.preventDefault();
				setSubmitted(text.trim());
			}}
		>
			<TextInput
				type="search"
				label={label}
				description="Title words, or the qualified identifier"
				value={text}
				onChange={(event) => {
					setText(event.currentTarget.value);
					setSubmitted(null);
				}}
				w={460}
			/>
		</form>
	);
	return { search, box, query: search ? { query: search } : {} };
}

export function CatalogPage() {
	const { session } = useSession();
	const client = session?.client ?? anonymousClient();
	const editor = session && (session.account.role === "ADMIN" || session.account.role === "NETWORK_AUTHORITY");
	const [version, setVersion] = useState(0);
	const changed = () => setVersion((value) => value + 1);
	const processSearch = useCatalogSearch("Search processes");
	const documentTypeSearch = useCatalogSearch("Search document types");
	return (
		<Stack>
			<Title order={1}>Catalog</Title>
			{editor ? <CatalogEditor onChanged={changed} version={version} /> : null}
			<Title order={2}>Processes</Title>
			{processSearch.box}
			<PagedTable<Process>
				caption="Processes"
				reloadKey={`${version}|${processSearch.search}`}
				rowKey={(row) => row.identifier}
				initialSort={{ field: "title", descending: false }}
				load={(page, size, sorting) =>
					ok<Page<Process>>(
						client.GET("/rest/api/processes", {
							params: {
								query: {
									page,
									size,
									sort: sortParam(sorting.field, sorting.descending),
									...processSearch.query,
								},
							},
						}),
					)
				}
				columns={[
					{ label: "Title", sort: "title", render: (row) => row.title },
					{ label: "Domain", sort: "domain", render: (row) => row.domain },
					{
						label: "Qualified identifier",
						sort: "qualifiedIdentifier",
						render: (row) => row.qualifiedIdentifier,
					},
					{
						label: "State",
						render: (row) =>
							row.restricted ? (
								<Text span fw={700}>
									restricted
								</Text>
							) : (
								<Text span fw={700}>
									open
								</Text>
							),
					},
					{ label: "Identifier", render: (row) => row.identifier },
				]}
			/>
			<Title order={2}>Document types</Title>
			{documentTypeSearch.box}
			<PagedTable<DocumentType>
				caption="Document types"
				reloadKey={`${version}|${documentTypeSearch.search}`}
				rowKey={(row) => row.identifier}
				initialSort={{ field: "title", descending: false }}
				load={(page, size, sorting) =>
					ok<Page<DocumentType>>(
						client.GET("/rest/api/document-types", {
							params: {
								query: {
									page,
									size,
									sort: sortParam(sorting.field, sorting.descending),
									...documentTypeSearch.query,
								},
							},
						}),
					)
				}
				columns={[
					{ label: "Title", sort: "title", render: (row) => row.title },
					{
						label: "Qualified identifier",
						sort: "qualifiedIdentifier",
						render: (row) => row.qualifiedIdentifier,
					},
					{
						label: "Processes",
						render: (row) => row.processes.map((process) => process.title ?? process.identifier).join(", "),
					},
					{ label: "Identifier", render: (row) => row.identifier },
				]}
			/>
		</Stack>
	);
}

export function SignInPage() {
	const { setSession } = useSession();
	const [, navigate] = useLocation();
	const [username, setUsername] = useState("");
	const [password, setPassword] = useState("");
	const [failure, setFailure] = useState<Failure | null>(null);
	const [busy, setBusy] = useState(false);
	const submit = async (event: FormEvent) => {
		event.preventDefault();
		setBusy(true);
		try {
			const session = await signIn({ username, password });
			setPassword("");
			setSession(session);
			navigate(homeOf(session.account.role));
		} catch (error) {
			setFailure(failureOf(error));
		} finally {
			setBusy(false);
		}
	};
	return (
		<Stack maw={420}>
			<Title order={1}>Sign in</Title>
			<form onSubmit={submit}>
				<Stack>
					<TextInput
						label="Username"
						autoComplete="username"
						value={username}
						onChange={(event) => setUsername(event.currentTarget.value)}
						required
					/>
					<PasswordInput
						label="Password"
						autoComplete="current-password"
						value={password}
						onChange={(event) => setPassword(event.currentTarget.value)}
						required
					/>
					<Button type="submit" loading={busy}>
						Sign in
					</Button>
				</Stack>
			</form>
			<FailureAlert failure={failure} title="Sign-in failed" />
		</Stack>
	);
}

export function homeOf(role: string): string {
	if (role === "SERVICE_PROVIDER") return "/participants";
	if (role === "ACCESS_POINT_PROVIDER") return "/access-points";
	if (role === "ADMIN" || role === "NETWORK_AUTHORITY") return "/catalog";
	return "/";
}
