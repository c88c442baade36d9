import { v7 } from "uuid";
/** Identifiers of new records: UUID version 7, time-ordered, so inserts land on an index's last page (docs/performance.md "Store"). */
export const newRecordIdentifier = v7;
