/** The console's frame: header with the signed-in account, navigation per role, the pages' routes. */
import { Button, Group, NavLink, Text, Title } from "@mantine/core";
import { useState } from "react";
import { Link, Redirect, Route, Router, Switch, useLocation } from "wouter";
import type { Session } from "./api";
import { SessionContext, useSession } from "./components";
import { CatalogPage, LookupPage, SignInPage } from "./pages/public";
import { ParticipantFormPage, ParticipantsPage } from "./pages/participants";
import { AccountPage, AuditPage, ChangesPage, TransfersPage } from "./pages/work";
import { AccessPointEndpointsPage, AccessPointsPage } from "./pages/access-points";
import { AccountsPage, JobsPage } from "./pages/operators";
import { AllParticipantsPage } from "./pages/all-participants";

interface Entry {
	href: string;
	label: string;
	roles?: string[];
}

const OPERATORS = ["ADMIN", "NETWORK_AUTHORITY"];
const ENTRIES: Entry[] = [
	{ href: "/", label: "Organization lookup" },
	{ href: "/catalog", label: "Catalog" },
	{ href: "/participants", label: "Participants", roles: ["SERVICE_PROVIDER", ...OPERATORS] },
	{ href: "/transfers", label: "Transfers", roles: ["SERVICE_PROVIDER", ...OPERATORS] },
	{ href: "/changes", label: "Change feed", roles: ["SERVICE_PROVIDER", ...OPERATORS] },
	{ href: "/audit", label: "Audit trail", roles: ["SERVICE_PROVIDER", ...OPERATORS] },
	{ href: "/jobs", label: "Process replacement", roles: OPERATORS },
	{ href: "/accounts", label: "Accounts", roles: ["ADMIN"] },
	{
		href: "/access-points",
		label: "Access points",
		roles: ["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", ...OPERATORS],
	},
	{ href: "/account", label: "Your account", roles: ["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", ...OPERATORS] },
];

function Navigation() {
	const { session } = useSession();
	const [location] = useLocation();
	const role = session?.account.role;
	return (
		<nav aria-label="Console">
			{ENTRIES.filter((entry) => !entry.roles || (role && entry.roles.includes(role))).map((entry) => (
				<NavLink
					key={entry.href}
					component={Link}
					href={entry.href}
					label={entry.label}
					active={location === entry.href}
					aria-current={location === entry.href ? "page" : undefined}
				/>
			))}
		</nav>
	);
}

function Header() {
	const { session, setSession } = useSession();
	const [, navigate] = useLocation();
	return (
		<Group h="100%" px="md" justify="space-between">
			<Title order={2} size="h4">
				Participant Registry
			</Title>
			{session ? (
				<Group>
					<Text data-testid="signed-in">{`${session.account.username} (${session.account.role})`}</Text>
					<Button
						variant="default"
						onClick={() => {
							setSession(null);
							navigate("/");
						}}
					>
						Sign out
					</Button>
				</Group>
			) : (
				<Button component={Link} href="/sign-in">
					Sign in
				</Button>
			)}
		</Group>
	);
}

/** A page for some roles: without a session, the sign-in page. */
function Guarded({ roles, children }: { roles: string[]; children: React.ReactNode }) {
	const { session } = useSession();
	if (!session) return <Redirect to="/sign-in" />;
	if (!roles.includes(session.account.role)) return <Text>Your role has no access to this page.</Text>;
	return <>{children}</>;
}

/** A service provider's own participants; every provider's for the operators. */
function ParticipantsOfRole() {
	const { session } = useSession();
	return session?.account.role === "SERVICE_PROVIDER" ? <ParticipantsPage /> : <AllParticipantsPage />;
}

export function App() {
	// The session (client with credentials, account) lives only in this component's state.
	const [session, setSession] = useState<Session | null>(null);
	const all = ["SERVICE_PROVIDER", "ACCESS_POINT_PROVIDER", ...OPERATORS];
	return (
		<SessionContext.Provider value={{ session, setSession }}>
			<Router base="/console">
				<div className="console-frame">
					<header className="console-header">
						<Header />
					</header>
					<div className="console-nav">
						<Navigation />
					</div>
					<main className="console-main">
						<Switch>
							<Route path="/">
								<LookupPage />
							</Route>
							<Route path="/catalog">
								<CatalogPage />
							</Route>
							<Route path="/sign-in">
								<SignInPage />
							</Route>
							<Route path="/participants">
								<Guarded roles={["SERVICE_PROVIDER", ...OPERATORS]}>
									<ParticipantsOfRole />
								</Guarded>
							</Route>
							<Route path="/participants/new">
								<Guarded roles={["SERVICE_PROVIDER"]}>
									<ParticipantFormPage />
								</Guarded>
							</Route>
							<Route path="/participants/:qualifiedIdentifier/edit">
								{(params) => (
									<Guarded roles={["SERVICE_PROVIDER"]}>
										<ParticipantFormPage
											qualifiedIdentifier={decodeURIComponent(params.qualifiedIdentifier)}
										/>
									</Guarded>
								)}
							</Route>
							<Route path="/transfers">
								<Guarded roles={["SERVICE_PROVIDER", ...OPERATORS]}>
									<TransfersPage />
								</Guarded>
							</Route>
							<Route path="/changes">
								<Guarded roles={["SERVICE_PROVIDER", ...OPERATORS]}>
									<ChangesPage />
								</Guarded>
							</Route>
							<Route path="/audit">
								<Guarded roles={["SERVICE_PROVIDER", ...OPERATORS]}>
									<AuditPage />
								</Guarded>
							</Route>
							<Route path="/jobs">
								<Guarded roles={OPERATORS}>
									<JobsPage />
								</Guarded>
							</Route>
							<Route path="/accounts">
								<Guarded roles={["ADMIN"]}>
									<AccountsPage />
								</Guarded>
							</Route>
							<Route path="/access-points">
								<Guarded roles={all}>
									<AccessPointsPage />
								</Guarded>
							</Route>
							<Route path="/access-points/:identifier/endpoints">
								{(params) => (
									<Guarded roles={["ACCESS_POINT_PROVIDER", "ADMIN"]}>
										<AccessPointEndpointsPage identifier={params.identifier} />
									</Guarded>
								)}
							</Route>
							<Route path="/account">
								<Guarded roles={all}>
									<AccountPage />
								</Guarded>
							</Route>
							<Route>
								<Text>No such page.</Text>
							</Route>
						</Switch>
					</main>
				</div>
			</Router>
		</SessionContext.Provider>
	);
}
