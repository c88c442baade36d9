/**
 * Headers every response carries, errors and 204 included (spec "Endpoint table" rule 4,
 * decisions §2).
 */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
	"Cache-Control": "no-cache, no-store, max-age=0, must-revalidate",
	Pragma: "no-cache",
	Expires: "0",
	"X-Content-Type-Options": "nosniff",
	"X-XSS-Protection": "1; mode=block",
	"Strict-Transport-Security": "max-age=31536000 ; includeSubDomains",
	"X-Frame-Options": "DENY",
};

/** The same, as the flat name/value list `res.writeHead` takes (one call instead of one per header). */
export const COMMON_HEADER_LIST: readonly string[] = Object.entries(COMMON_HEADERS).flat();

export function setCommonHeaders(res: { setHeader(name: string, value: string): unknown }): void {
	for (let index = 0; index < COMMON_HEADER_LIST.length; index += 2)
		res.setHeader(COMMON_HEADER_LIST[index], COMMON_HEADER_LIST[index + 1]);
}

export const ERROR_CONTENT_TYPE = "application/json;charset=UTF-8";

export function withCharset(mediaType: string): string {
	return `${mediaType};charset=UTF-8`;
}
