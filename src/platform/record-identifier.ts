import { v7 } from "uuid";
/** UUID version 7, time-ordered (docs/internals.md "Storage"); a constant: a re-export compiles to a getter per call. */
export const newRecordIdentifier = v7;
