/**
 * The few XML writing helpers the SMP answers, business cards and SML calls need. Markup is built in the order the schemas
 * give; every text and attribute value goes through `escape` and nothing else writes text.
 */

export type Attributes = Record<string, string | undefined>;

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** An element holding other elements; children that are null (optional and absent) are left out. */
export function element(name: string, attributes: Attributes, children: Array<string | null>): string {
	return `<${name}${attributeList(attributes)}>${children.filter((child) => child !== null).join("")}</${name}>`;
}

/** An element holding text. */
export function textElement(name: string, text: string, attributes: Attributes = {}): string {
	return `<${name}${attributeList(attributes)}>${escape(text)}</${name}>`;
}

/** An element holding text, or null (left out) when there is no text: undefined or empty. */
export function optionalTextElement(
	name: string,
	text: string | undefined,
	attributes: Attributes = {},
): string | null {
	return text ? textElement(name, text, attributes) : null;
}

export function emptyElement(name: string, attributes: Attributes): string {
	return `<${name}${attributeList(attributes)}/>`;
}

/**
 * Escapes text and attribute values alike. Tab, line feed and carriage return become character
 * references so that a parser's normalisation cannot change them; characters XML 1.0 cannot
 * carry at all become U+FFFD rather than an answer no client can parse.
 */
export function escape(text: string): string {
	return text.replace(/[&<>"\t\n\r]|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, (character) => {
		switch (character) {
			case "&":
				return "&amp;";
			case "<":
				return "&lt;";
			case ">":
				return "&gt;";
			case '"':
				return "&quot;";
			case "\t":
				return "&#9;";
			case "\n":
				return "&#10;";
			case "\r":
				return "&#13;";
			default:
				return "\uFFFD";
		}
	});
}

function attributeList(attributes: Attributes): string {
	let list = "";
	for (const [name, value] of Object.entries(attributes))
		if (value !== undefined) list += ` ${name}="${escape(value)}"`;
	return list;
}
