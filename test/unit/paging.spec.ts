import { pageOf, parsePageRequest, parseSort } from "../../src/contract/paging";
import { SORTABLE } from "../../src/contract/operations";

describe("paging (spec 'Page envelope', decisions §7)", () => {
	test("defaults: page 0, size 10, unsorted", () => {
		expect(parsePageRequest({}, SORTABLE.participants)).toEqual({ page: 0, size: 10, sort: [] });
	});

	test("a size over 1000 is clamped to 1000", () => {
		expect(parsePageRequest({ size: "5000" }, SORTABLE.participants).size).toBe(1000);
	});

	test.each([{ page: "-1" }, { page: "x" }, { size: "0" }, { size: "1.5" }, { size: "" }, { page: "1e3" }])(
		"%p is 400",
		(query) => {
			expect(() => parsePageRequest(query, SORTABLE.participants)).toThrow(
				expect.objectContaining({ code: 400 }),
			);
		},
	);

	test("page 3, size 10 gives offset 30 and the sort flags follow the sort parameter", () => {
		const sorted = pageOf(
			[1, 2],
			42,
			parsePageRequest({ page: "3", size: "10", sort: "name" }, SORTABLE.participants),
		);
		expect(sorted.pageable).toEqual({
			sort: { sorted: true, unsorted: false, empty: false },
			pageNumber: 3,
			pageSize: 10,
			offset: 30,
			paged: true,
			unpaged: false,
		});
		expect(sorted).toMatchObject({
			number: 3,
			size: 10,
			numberOfElements: 2,
			totalElements: 42,
			totalPages: 5,
			first: false,
			last: false,
			empty: false,
		});
		const unsorted = pageOf([], 0, parsePageRequest({}, SORTABLE.participants));
		expect(unsorted.sort).toEqual({ sorted: false, unsorted: true, empty: true });
		expect(unsorted).toMatchObject({ first: true, last: true, empty: true, totalPages: 0 });
	});
});

describe("sort parameter", () => {
	test("direction defaults to ascending and applies to every property of its parameter", () => {
		expect(parseSort("name,icd,DESC", SORTABLE.participants)).toEqual([
			{ field: "name", direction: "desc" },
			{ field: "icd", direction: "desc" },
		]);
	});

	test("repeating the parameter mixes directions; the spec's sample name is an alias", () => {
		expect(parseSort(["qualifiedIdentifier.value", "registrationDate,desc"], SORTABLE.participants)).toEqual([
			{ field: "qualifiedIdentifier", direction: "asc" },
			{ field: "registrationDate", direction: "desc" },
		]);
	});

	test("an unknown property is 400", () => {
		expect(() => parseSort("password", SORTABLE.participants)).toThrow(expect.objectContaining({ code: 400 }));
		expect(() => parseSort("__proto__", SORTABLE.participants)).toThrow(expect.objectContaining({ code: 400 }));
	});
});
