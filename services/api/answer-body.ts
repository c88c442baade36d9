/**
 * The JSON of a successful answer, as the parts the gateway writes (their concatenation is
 * exactly `JSON.stringify(answer)`). Every answer is encoded here, held or not, so a held
 * answer is the full path's bytes by construction. Long parts (a participant's provider and
 * processes, a lookup answer) are interned: organizations with the same processes, and the
 * participants of one provider, share one copy of them in the held answers.
 */

/** Parts longer than this are interned. */
const SHARED_PART_LENGTH = 128;
/** Distinct interned parts kept; past the bound the table starts again (held answers keep their own references). */
const MAX_SHARED_PARTS = 50_000;

const shared = new Map<string, string>();

function intern(part: string): string {
	if (part.length < SHARED_PART_LENGTH) return part;
	const known = shared.get(part);
	if (known !== undefined) return known;
	if (shared.size >= MAX_SHARED_PARTS) shared.clear();
	shared.set(part, part);
	return part;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
	const prototype = Object.getPrototypeOf(value);
	return (
		(prototype === Object.prototype || prototype === null) &&
		typeof (value as { toJSON?: unknown }).toJSON !== "function"
	);
}

/**
 * The answer's JSON in parts. An answer to be held is cut into one part per long top-level
 * field of an object, with runs of short ones joined, and its long parts interned; any
 * other answer is one part.
 */
export function answerParts(answer: unknown, held: boolean): string[] {
	if (!held) return [JSON.stringify(answer)];
	if (!isPlainObject(answer)) return [intern(JSON.stringify(answer))];
	const parts: string[] = [];
	let run = "{";
	let first = true;
	for (const key of Object.keys(answer)) {
		const json = JSON.stringify(answer[key]);
		if (json === undefined) continue; // JSON.stringify leaves out undefined and functions too
		const field = `${first ? "" : ","}${JSON.stringify(key)}:${json}`;
		first = false;
		if (field.length < SHARED_PART_LENGTH) {
			run += field;
			continue;
		}
		parts.push(run);
		parts.push(intern(field));
		run = "";
	}
	parts.push(`${run}}`);
	return parts.filter((part) => part.length > 0);
}

export function joinParts(parts: readonly string[]): string {
	return parts.length === 1 ? parts[0] : parts.join("");
}

/**
 * A held answer's body (services/api/held-answers.ts): its bytes, with their length and entity
 * tag, worked out once, when it is held. A one-part body without a tag (a lookup answer) is
 * shared by every organization answered with the same bytes.
 */
export interface HeldBody {
	bytes: Buffer;
	length: string;
	tag: string | undefined;
}

const sharedBodies = new Map<string, HeldBody>();

export function heldBodyOf(parts: readonly string[], tagOf: ((body: string) => string) | null): HeldBody {
	const shareable = parts.length === 1 && !tagOf;
	const known = shareable ? sharedBodies.get(parts[0]) : undefined;
	if (known) return known;
	const body = joinParts(parts);
	// Its own memory, not a slice of Buffer's shared pool (a slice would keep a whole 8 KB slab alive).
	const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(body));
	bytes.write(body, "utf8");
	const held: HeldBody = { bytes, length: String(bytes.length), tag: tagOf ? tagOf(body) : undefined };
	if (!shareable) return held;
	if (sharedBodies.size >= MAX_SHARED_PARTS) sharedBodies.clear();
	sharedBodies.set(parts[0], held);
	return held;
}
