/**
 * Organization identifiers a reader cannot tell from the plain GLN `5790000435968` (or that carry
 * markup and control characters): decisions §5 refuses every one of them at every entry.
 */
export const PLAIN_GLN = "5790000435968";

export const LOOK_ALIKES: [string, string][] = [
	["a zero-width space", `${PLAIN_GLN}\u200b`],
	["a fullwidth first digit", `\uff15${PLAIN_GLN.slice(1)}`],
	["a leading space", ` ${PLAIN_GLN}`],
	["a no-break space", `579000\u00a00435968`],
	["a line break, a NUL and markup", "a:b\n\u0000<script>"],
];
