/** Issue 19: the README's configuration table names every variable `src/config.ts` reads, and nothing else. */
import { readFileSync } from 'node:fs';
import test from 'ava';
import { CONFIG_VARIABLES } from '../../src/config.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The variables named in the first column of the table under `## Configuration`. */
function documented(): Set<string> {
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? '';
  const names = section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!));
  return new Set(names);
}

test('every configuration variable is in the README table, and the table names no other', (t) => {
  const read = [...CONFIG_VARIABLES].sort();
  const table = [...documented()].sort();
  t.deepEqual(table, read);
});
