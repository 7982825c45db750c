import type { Query } from '../url.js';

/** A paged list operation: what the page walker needs to walk it. */
export interface ListEndpoint<T> {
  path: string;
  /** The member of the answer that holds the records. */
  key: string;
  query: Query;
  /** Phantom: the record type. */
  readonly record?: T;
}
