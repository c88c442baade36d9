/**
 * The registry as the console speaks to it: only the generated client (client/index.ts) on the
 * page's own origin. Credentials live in this module's memory for the tab; nothing is written to
 * localStorage, sessionStorage or a cookie, and signing out drops the client that holds them.
 */
import { createRegistryClient, type Credentials, type RegistryClient, type Schemas } from "../../client/index";
import { describeFailure, type Failure } from "./errors";

export type Account = Schemas["Account"];
export type Participant = Schemas["Participant"];
export type Process = Schemas["Process"];
export type DocumentType = Schemas["DocumentType"];
export type NetworkState = Schemas["NetworkState"];

export interface Page<T> {
	content: T[];
	number: number;
	size: number;
	totalElements: number;
	totalPages: number;
}

/** A refused request; `failure` is what the page shows. */
export class ApiFailure extends Error {
	constructor(public readonly failure: Failure) {
		super(failure.message);
	}
}

interface Answer {
	data?: unknown;
	error?: unknown;
	response: Response;
}

/** The answer's body, or an ApiFailure with the status, Retry-After and field errors. */
export async function ok<T>(call: Promise<Answer>): Promise<T> {
	let answer: Answer;
	try {
		answer = await call;
	} catch {
		throw new ApiFailure({ status: 0, message: "The registry cannot be reached.", fields: {} });
	}
	if (!answer.response.ok)
		throw new ApiFailure(
			describeFailure(answer.response.status, answer.error, answer.response.headers.get("Retry-After")),
		);
	return answer.data as T;
}

/** The answer with its ETag (for If-Match on the next change). */
export async function withTag<T>(call: Promise<Answer>): Promise<{ value: T; etag: string | null }> {
	const answer = await call;
	const value = await ok<T>(Promise.resolve(answer));
	return { value, etag: answer.response.headers.get("ETag") };
}

/**
 * Requests without the browser's own credentials (`credentials: "omit"`; the Authorization header
 * is the client's). Besides sending no cookie, this keeps the browser from answering a 401's
 * `WWW-Authenticate: Basic` with its own login prompt (Fetch standard: it prompts only when
 * credentials are included): a wrong password is shown by the page, not by a browser dialog.
 */
function withoutBrowserCredentials(client: RegistryClient): RegistryClient {
	client.use({ onRequest: ({ request }) => new Request(request, { credentials: "omit" }) });
	return client;
}

export function anonymousClient(): RegistryClient {
	return withoutBrowserCredentials(createRegistryClient(window.location.origin));
}

export interface Session {
	client: RegistryClient;
	account: Account;
}

/** Signs in: the credentials are good when the caller's own account answers. */
export async function signIn(credentials: Credentials): Promise<Session> {
	const client = withoutBrowserCredentials(createRegistryClient(window.location.origin, credentials));
	const account = await ok<Account>(client.GET("/rest/api/account"));
	return { client, account };
}

/** `sort` as the API takes it: `name,DESC`. */
export function sortParam(field: string | undefined, descending: boolean): string[] | undefined {
	return field ? [`${field},${descending ? "DESC" : "ASC"}`] : undefined;
}
