/** SQL text helpers shared by the SQLite store's files: bind values and identifier quoting. */

export type Bindable = string | number | bigint | Buffer | null;

/** `name` as a quoted SQL identifier. */
export function q(name: string): string {
	return `"${name.replace(/"/g, '""')}"`;
}

/** A filter or field value as SQLite binds it (booleans as 1 / 0). */
export function bindable(value: string | number | boolean | null): Bindable {
	return typeof value === "boolean" ? (value ? 1 : 0) : value;
}
