/**
 * Identifiers of new records (participants, catalog entries, providers, audit records, outbox
 * messages): UUID version 7 (RFC 9562). A version 7 UUID starts with its creation time, so
 * records created one after another sort together: each insert lands on the last page of the
 * identifier index (and of indexes that end in the identifier) instead of a random page of
 * it. With version 4 every add dirtied one random index page per such index, and a commit
 * writes every dirty page. The time in it is the
 * registrationDate a participant already shows, nothing more.
 */
export { v7 as newRecordIdentifier } from "uuid";
