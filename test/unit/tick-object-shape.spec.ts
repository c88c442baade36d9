import { executionAsyncResource } from "node:async_hooks";
import { holdTickObjectShape } from "../../src/platform/tick-object-shape";

/** The entry of a nextTick callback run now (its execution resource). */
const nextTickEntry = () => new Promise<object>((resolve) => process.nextTick(() => resolve(executionAsyncResource())));

describe("the held nextTick entry (src/platform/tick-object-shape.ts)", () => {
	test("is one of nextTick's queue entries, with the properties every later entry has", async () => {
		const held = await holdTickObjectShape();
		const later = await nextTickEntry();
		expect(later).not.toBe(held);
		expect(Object.keys(held)).toEqual(["callback", "args"]);
		expect(Reflect.ownKeys(held).map(String)).toEqual(Reflect.ownKeys(later).map(String));
	});

	test("is held once: every later call answers the first entry", async () => {
		const first = await holdTickObjectShape();
		await nextTickEntry();
		expect(await holdTickObjectShape()).toBe(first);
	});
});
