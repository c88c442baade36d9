/**
 * The web console (issue 22): React + Mantine, bundled by Vite into dist/console and served by
 * the registry at /console under a Content-Security-Policy with no inline script or style.
 * Mantine's own runtime <style> tags are turned off (withCssVariables, withGlobalClasses): its
 * variables and classes come from its static CSS files (docs/console.md).
 */
import "@mantine/core/styles.css";
import "./console.css";
import { MantineProvider } from "@mantine/core";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";

createRoot(document.getElementById("root") as HTMLElement).render(
	<StrictMode>
		<MantineProvider withCssVariables={false} withGlobalClasses={false} forceColorScheme="light">
			<App />
		</MantineProvider>
	</StrictMode>,
);
