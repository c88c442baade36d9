/**
 * Headers every response carries, errors and 204 included (spec "Endpoint table" rule 4,
 * decisions §2). Names in lower case, as HTTP/2 sends them (HTTP/1.1 names are case-insensitive).
 */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
	"cache-control": "no-cache, no-store, max-age=0, must-revalidate",
	pragma: "no-cache",
	expires: "0",
	"x-content-type-options": "nosniff",
	"x-xss-protection": "1; mode=block",
	"strict-transport-security": "max-age=31536000 ; includeSubDomains",
	"x-frame-options": "DENY",
};

/** The same, as the flat name/value list `res.writeHead` takes (one call instead of one per header). */
export const COMMON_HEADER_LIST: readonly string[] = Object.entries(COMMON_HEADERS).flat();

export function setCommonHeaders(res: { setHeader(name: string, value: string): unknown }): void {
	for (let index = 0; index < COMMON_HEADER_LIST.length; index += 2)
		res.setHeader(COMMON_HEADER_LIST[index], COMMON_HEADER_LIST[index + 1]);
}

/** Plain JSON answers: errors, health, the OpenAPI document. */
export const JSON_CONTENT_TYPE = "application/json;charset=UTF-8";
export const ERROR_CONTENT_TYPE = JSON_CONTENT_TYPE;
