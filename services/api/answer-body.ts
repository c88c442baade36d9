/**
 * A held answer's body (services/api/held-answers.ts): the bytes of the JSON the full path
 * produced, with their length and entity tag worked out once, when it is held, so a held answer
 * is the full path's bytes by construction. A lookup answer (untagged) is one body shared by
 * every organization answered with the same bytes.
 */
import { entityTagOf } from "../../src/contract/entity-tags";

export interface HeldBody {
	bytes: Buffer;
	length: string;
	tag: string | undefined;
	/** A shared body's head for `headType` (respond.ts makes it once: a body is answered with one Accept's type almost always). */
	head: string[] | undefined;
	headType: string;
}

/** Distinct shared bodies kept; past the bound the table starts again (held answers keep their own references). */
const MAX_SHARED_BODIES = 50_000;

const sharedBodies = new Map<string, HeldBody>();

/** The held body of an answer's JSON; `tagged`: the operation answers an ETag (operations table). */
export function heldBodyOf(json: string, tagged: boolean): HeldBody {
	const known = tagged ? undefined : sharedBodies.get(json);
	if (known) return known;
	// Its own memory, not a slice of Buffer's shared pool (a slice would keep a whole 8 KB slab alive).
	const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
	bytes.write(json, "utf8");
	const held: HeldBody = {
		bytes,
		length: String(bytes.length),
		tag: tagged ? entityTagOf(json) : undefined,
		head: undefined,
		headType: "",
	};
	if (tagged) return held;
	if (sharedBodies.size >= MAX_SHARED_BODIES) sharedBodies.clear();
	sharedBodies.set(json, held);
	return held;
}
