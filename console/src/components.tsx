/** Pieces every page uses: the session, failures shown plainly, and a table that pages and sorts on the server. */
import { Alert, Button, Group, Pagination, Table, Text, UnstyledButton } from "@mantine/core";
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { ApiFailure, type Page, type Session } from "./api";
import type { Failure } from "./errors";

export interface SessionState {
	session: Session | null;
	setSession(session: Session | null): void;
}

export const SessionContext = createContext<SessionState>({ session: null, setSession: () => undefined });

export function useSession(): SessionState {
	return useContext(SessionContext);
}

/** The signed-in session; pages behind a role only render with one. */
export function useSignedIn(): Session {
	const { session } = useSession();
	if (!session) throw new Error("this page needs a signed-in account");
	return session;
}

export function failureOf(error: unknown): Failure {
	if (error instanceof ApiFailure) return error.failure;
	return { status: 0, message: error instanceof Error ? error.message : String(error), fields: {} };
}

export function FailureAlert({ failure, title = "Not done" }: { failure: Failure | null; title?: string }) {
	if (!failure) return null;
	return (
		<Alert color="red" title={title} role="alert" data-status={failure.status} mb="md">
			{failure.message}
		</Alert>
	);
}

export function Notice({ children }: { children: ReactNode }) {
	if (!children) return null;
	return (
		<Alert color="green" role="status" mb="md">
			{children}
		</Alert>
	);
}

export interface Column<T> {
	label: string;
	/** The API's sortable name, when the column sorts. */
	sort?: string;
	render(row: T): ReactNode;
}

export interface Sorting {
	field?: string;
	descending: boolean;
}

/** A page of rows from the server; `reloadKey` changes reload it from the first page. */
export function PagedTable<T>({
	caption,
	columns,
	load,
	reloadKey,
	initialSort,
	rowKey,
	size = 10,
}: {
	caption: string;
	columns: Column<T>[];
	load(page: number, size: number, sorting: Sorting): Promise<Page<T>>;
	reloadKey?: unknown;
	initialSort?: Sorting;
	rowKey(row: T): string;
	size?: number;
}) {
	const [page, setPage] = useState(0);
	const [sorting, setSorting] = useState<Sorting>(initialSort ?? { descending: false });
	const [answer, setAnswer] = useState<Page<T> | null>(null);
	const [failure, setFailure] = useState<Failure | null>(null);
	const [loading, setLoading] = useState(true);

	useEffect(() => setPage(0), [reloadKey]);
	useEffect(() => {
		let current = true;
		setLoading(true);
		load(page, size, sorting)
			.then((found) => current && (setAnswer(found), setFailure(null)))
			.catch((error) => current && setFailure(failureOf(error)))
			.finally(() => current && setLoading(false));
		return () => {
			current = false;
		};
		// `load` is a new function on each render of the page; the inputs that matter are these.
	}, [page, size, sorting, reloadKey]);

	const sortBy = useCallback(
		(field: string) =>
			setSorting((before) => ({ field, descending: before.field === field ? !before.descending : false })),
		[],
	);

	return (
		<div aria-busy={loading} data-testid={`table-${caption}`}>
			<FailureAlert failure={failure} title="Could not load" />
			<Table striped highlightOnHover withTableBorder captionSide="top">
				<Table.Caption>{caption}</Table.Caption>
				<Table.Thead>
					<Table.Tr>
						{columns.map((column) => (
							<Table.Th
								key={column.label}
								aria-sort={
									column.sort && sorting.field === column.sort
										? sorting.descending
											? "descending"
											: "ascending"
										: undefined
								}
							>
								{column.sort ? (
									<UnstyledButton onClick={() => sortBy(column.sort as string)} fw={700}>
										{column.label}
										{sorting.field === column.sort ? (sorting.descending ? " ▼" : " ▲") : " ↕"}
									</UnstyledButton>
								) : (
									column.label
								)}
							</Table.Th>
						))}
					</Table.Tr>
				</Table.Thead>
				<Table.Tbody>
					{(answer?.content ?? []).map((row) => (
						<Table.Tr key={rowKey(row)}>
							{columns.map((column) => (
								<Table.Td key={column.label}>{column.render(row)}</Table.Td>
							))}
						</Table.Tr>
					))}
				</Table.Tbody>
			</Table>
			{answer && answer.content.length === 0 && !loading ? <Text mt="sm">Nothing found.</Text> : null}
			<Group justify="space-between" mt="sm">
				<Text size="sm">
					{answer
						? `${answer.totalElements} in all, page ${answer.totalPages === 0 ? 0 : answer.number + 1} of ${answer.totalPages}`
						: ""}
				</Text>
				{answer && answer.totalPages > 1 ? (
					<Pagination
						total={answer.totalPages}
						value={page + 1}
						onChange={(value) => setPage(value - 1)}
						getControlProps={(control) => ({ "aria-label": `${control} page` })}
					/>
				) : null}
			</Group>
		</div>
	);
}

/** Copies `text` and says so (the key of a transfer, a provider's identifier). */
export function CopyButton({ text, label }: { text: string; label: string }) {
	const [copied, setCopied] = useState(false);
	return (
		<Button
			variant="light"
			size="xs"
			onClick={() =>
				navigator.clipboard.writeText(text).then(
					() => setCopied(true),
					() => setCopied(false),
				)
			}
		>
			{copied ? "Copied" : label}
		</Button>
	);
}
