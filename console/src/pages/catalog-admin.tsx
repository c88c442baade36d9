/** ADMIN and NETWORK_AUTHORITY: processes and document types added, edited (If-Match) and deleted, with their links. */
import { Button, Checkbox, Group, Modal, MultiSelect, Paper, Select, Stack, TextInput, Title } from "@mantine/core";
import { useEffect, useState, type FormEvent } from "react";
import { ok, withTag, type DocumentType, type Page, type Process } from "../api";
import { FailureAlert, Notice, failureOf, useSignedIn } from "../components";
import type { Failure } from "../errors";

type Kind = "process" | "documentType";

interface Draft {
	title: string;
	domain: string;
	qualifiedIdentifier: string;
	visible: boolean;
	restricted: boolean;
	/** Process: its document types; document type: its processes. */
	links: string[];
	dependencies: string[];
}

const EMPTY: Draft = {
	title: "",
	domain: "",
	qualifiedIdentifier: "",
	visible: true,
	restricted: false,
	links: [],
	dependencies: [],
};
const refs = (identifiers: string[]) => identifiers.map((identifier) => ({ identifier }));

export function CatalogEditor({ onChanged, version }: { onChanged(): void; version: number }) {
	const { client } = useSignedIn();
	const [kind, setKind] = useState<Kind>("process");
	const [editing, setEditing] = useState<string | null>(null);
	const [etag, setEtag] = useState<string | null>(null);
	const [draft, setDraft] = useState<Draft>(EMPTY);
	const [processes, setProcesses] = useState<Process[]>([]);
	const [documentTypes, setDocumentTypes] = useState<DocumentType[]>([]);
	const [failure, setFailure] = useState<Failure | null>(null);
	const [notice, setNotice] = useState("");
	const [confirming, setConfirming] = useState(false);

	useEffect(() => {
		// The link pickers offer the first 200 of each, by title: the catalog is small.
		const query = { page: 0, size: 200, sort: ["title,ASC"] };
		ok<Page<Process>>(client.GET("/rest/api/processes", { params: { query } })).then(
			(page) => setProcesses(page.content),
			() => undefined,
		);
		ok<Page<DocumentType>>(client.GET("/rest/api/document-types", { params: { query } })).then(
			(page) => setDocumentTypes(page.content),
			() => undefined,
		);
	}, [client, version]);

	const processOptions = processes.map((process) => ({
		value: process.identifier,
		label: process.title ?? process.identifier,
	}));
	const documentTypeOptions = documentTypes.map((type) => ({ value: type.identifier, label: type.title }));

	const open = async (identifier: string | null) => {
		setFailure(null);
		setNotice("");
		setEditing(identifier);
		if (!identifier) {
			setDraft(EMPTY);
			setEtag(null);
			return;
		}
		try {
			if (kind === "process") {
				const { value, etag: tag } = await withTag<Process>(
					client.GET("/rest/api/processes/{identifier}", { params: { path: { identifier } } }),
				);
				setDraft({
					title: value.title ?? "",
					domain: value.domain,
					qualifiedIdentifier: value.qualifiedIdentifier ?? "",
					visible: value.visible !== false,
					restricted: value.restricted === true,
					links: value.documentTypes.map((link) => link.identifier),
					dependencies: value.dependencies.map((link) => link.identifier),
				});
				setEtag(tag);
			} else {
				const { value, etag: tag } = await withTag<DocumentType>(
					client.GET("/rest/api/document-types/{identifier}", { params: { path: { identifier } } }),
				);
				setDraft({
					...EMPTY,
					title: value.title,
					qualifiedIdentifier: value.qualifiedIdentifier ?? "",
					visible: value.visible !== false,
					links: value.processes.map((link) => link.identifier),
				});
				setEtag(tag);
			}
		} catch (error) {
			setFailure(failureOf(error));
		}
	};

	const save = async (event: FormEvent) => {
		event.preventDefault();
		setFailure(null);
		const ifMatch = etag ? { "If-Match": etag } : undefined;
		try {
			if (kind === "process") {
				const body = {
					domain: draft.domain,
					title: draft.title || null,
					qualifiedIdentifier: draft.qualifiedIdentifier || null,
					visible: draft.visible,
					restricted: draft.restricted,
					documentTypes: refs(draft.links),
					dependencies: refs(draft.dependencies),
				};
				if (editing)
					await ok(
						client.PUT("/rest/api/processes/{identifier}", {
							params: { path: { identifier: editing } },
							body,
							headers: ifMatch,
						}),
					);
				else await ok(client.POST("/rest/api/processes", { body }));
			} else {
				const body = {
					title: draft.title,
					qualifiedIdentifier: draft.qualifiedIdentifier || null,
					visible: draft.visible,
					processes: refs(draft.links),
				};
				if (editing)
					await ok(
						client.PUT("/rest/api/document-types/{identifier}", {
							params: { path: { identifier: editing } },
							body,
							headers: ifMatch,
						}),
					);
				else await ok(client.POST("/rest/api/document-types", { body }));
			}
			setNotice(editing ? "Saved." : "Added.");
			setEditing(null);
			setDraft(EMPTY);
			onChanged();
		} catch (error) {
			setFailure(failureOf(error));
		}
	};

	const remove = async () => {
		setConfirming(false);
		if (!editing) return;
		const headers = etag ? { "If-Match": etag } : undefined;
		try {
			if (kind === "process")
				await ok(
					client.DELETE("/rest/api/processes/{identifier}", {
						params: { path: { identifier: editing } },
						headers,
					}),
				);
			else
				await ok(
					client.DELETE("/rest/api/document-types/{identifier}", {
						params: { path: { identifier: editing } },
						headers,
					}),
				);
			setNotice("Deleted.");
			setEditing(null);
			setDraft(EMPTY);
			onChanged();
		} catch (error) {
			setFailure(failureOf(error));
		}
	};

	const field = (name: keyof Draft) => (event: { currentTarget: { value: string } }) =>
		setDraft({ ...draft, [name]: event.currentTarget.value });
	const errors = failure?.fields ?? {};
	return (
		<Paper withBorder p="md">
			<Title order={2}>Edit the catalog</Title>
			<Group align="flex-end" my="sm">
				<Select
					label="What"
					data={[
						{ value: "process", label: "Process" },
						{ value: "documentType", label: "Document type" },
					]}
					value={kind}
					onChange={(value) => {
						setKind((value as Kind) ?? "process");
						setEditing(null);
						setDraft(EMPTY);
					}}
					allowDeselect={false}
				/>
				<Select
					label="Record to edit"
					placeholder="New record"
					data={kind === "process" ? processOptions : documentTypeOptions}
					value={editing}
					onChange={(value) => void open(value)}
					searchable
					clearable
					w={360}
				/>
			</Group>
			<Notice>{notice}</Notice>
			<FailureAlert failure={failure} />
			<form onSubmit={save}>
				<Stack>
					{kind === "process" ? (
						<TextInput
							label="Domain"
							value={draft.domain}
							onChange={field("domain")}
							error={errors.domain}
							required
						/>
					) : null}
					<TextInput
						label="Title"
						value={draft.title}
						onChange={field("title")}
						error={errors.title}
						required={kind === "documentType"}
					/>
					<TextInput
						label="Qualified identifier"
						value={draft.qualifiedIdentifier}
						onChange={field("qualifiedIdentifier")}
						error={errors.qualifiedIdentifier}
					/>
					<Checkbox
						label="Visible to everyone"
						checked={draft.visible}
						onChange={(event) => setDraft({ ...draft, visible: event.currentTarget.checked })}
					/>
					{kind === "process" ? (
						<>
							<Checkbox
								label="Restricted (deprecated: cannot be added to participants)"
								checked={draft.restricted}
								onChange={(event) => setDraft({ ...draft, restricted: event.currentTarget.checked })}
							/>
							<MultiSelect
								label="Document types"
								data={documentTypeOptions}
								value={draft.links}
								onChange={(links) => setDraft({ ...draft, links })}
								error={errors.documentTypes}
								searchable
							/>
							<MultiSelect
								label="Depends on processes"
								data={processOptions}
								value={draft.dependencies}
								onChange={(dependencies) => setDraft({ ...draft, dependencies })}
								error={errors.dependencies}
								searchable
							/>
						</>
					) : (
						<MultiSelect
							label="Processes"
							data={processOptions}
							value={draft.links}
							onChange={(links) => setDraft({ ...draft, links })}
							error={errors.processes}
							searchable
						/>
					)}
					<Group>
						<Button type="submit">
							{editing ? "Save changes" : kind === "process" ? "Add process" : "Add document type"}
						</Button>
						{editing ? (
							<Button color="red" variant="outline" onClick={() => setConfirming(true)}>
								Delete
							</Button>
						) : null}
					</Group>
				</Stack>
			</form>
			<Modal
				lockScroll={false}
				closeButtonProps={{ "aria-label": "Close" }}
				opened={confirming}
				onClose={() => setConfirming(false)}
				title="Delete this record?"
			>
				<Group>
					<Button color="red" onClick={() => void remove()}>
						Yes, delete
					</Button>
					<Button variant="default" onClick={() => setConfirming(false)}>
						Keep it
					</Button>
				</Group>
			</Modal>
		</Paper>
	);
}
