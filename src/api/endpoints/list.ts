import type { Query } from '../url.js';

/**
 * A paged list operation: what the page walker (`paginate`, `fetchPagesInOrder` in api/pages.ts)
 * needs to walk it. `T` is the record type the list holds.
 */
export interface ListEndpoint<T> {
  path: string;
  /** The member of the answer that holds the records. */
  key: string;
  query: Query;
  /** Phantom: the record type. */
  readonly record?: T;
}
