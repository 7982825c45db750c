/** Kept for the columns modules: a table column is declared with the one writer (write.ts). */
export type { Column } from './write.js';
