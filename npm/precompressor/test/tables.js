// The rule tables of fixtures/ as the JS tests read them, as serve::tables
// (src/serve/tables.rs) reads them for the Rust unit tests: one row, one
// answer, in every implementation.

import { readFileSync } from 'node:fs';

/** fixtures/NAME, parsed. */
export const fixture = (name) => JSON.parse(readFileSync(new URL(`../../../fixtures/${name}`, import.meta.url), 'utf8'));

/** A row's Accept-Encoding: undefined for none, repeated fields joined with `,`. */
export const accept = (row) => (Array.isArray(row.accept) ? row.accept.join(',') : row.accept ?? undefined);

/** The value of the dictionary named `name` in accept-encoding.json. */
export function dictionary(t, name) {
  const d = t.dictionaries[name];
  return typeof d === 'string' ? d : d.prefix + d.repeat.repeat(d.times) + d.suffix;
}

/** A row's Available-Dictionary: undefined when absent, and when repeated (no valid value). */
export const availableDictionary = (t, row) => (typeof row.dictionary === 'string' ? dictionary(t, row.dictionary) : undefined);
