import type { Query } from '../url.js';

/** A paged list operation: what the page walker needs to walk it. */
export interface ListEndpoint<T> {
  path: string;
  key: string;
  query: Query;
  /** Phantom: the record type. */
  readonly record?: T;
}
