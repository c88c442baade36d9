/** UUID version 7: time-ordered, so inserts land on the last index page (docs/internals.md "Storage"). */
export { v7 as newRecordIdentifier } from "uuid";
