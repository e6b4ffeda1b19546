/**
 * The import graph of src and workers, as Node runs it: `import type` is erased at run time and is left
 * out (detective-typescript's skipTypeImports), so only imports that load a module count.
 * - No circles: a circle makes evaluation order depend on which file is imported first, and a value read
 *   while its module is still evaluating is undefined or a TDZ error.
 * - A domain reads and writes another domain's tables through that domain's services, never its
 *   repo.ts / *-repo.ts (one home for each billing rule).
 */
import test from 'ava';
import madge from 'madge';

const graph = madge(['src', 'workers'], {
  baseDir: process.cwd(),
  fileExtensions: ['ts', 'tsx'],
  tsConfig: 'tsconfig.json',
  detectiveOptions: { ts: { skipTypeImports: true }, tsx: { skipTypeImports: true } },
});

/** `src/<domain>/…` → domain; files directly in src/ and workers/ belong to none. */
const domainOf = (file: string) => /^src\/([^/]+)\//.exec(file)?.[1];
const isRepo = (file: string) => /(^|\/|-)repo\.ts$/.test(file);

test('every relative import resolves to a file (an unresolved one would hide its edges)', async (t) => {
  const { skipped } = (await graph).warnings();
  t.deepEqual(
    skipped.filter((specifier) => specifier.startsWith('.')),
    [],
  );
  t.true(
    Object.keys((await graph).obj()).length > 100,
    'the graph holds too few files: is the working directory the project root?',
  );
});

test('no circular imports in src and workers', async (t) => {
  const circles = (await graph).circular().map((files) => [...files, files[0]].join(' -> '));
  t.deepEqual(circles, [], `${circles.length} circles:\n${circles.join('\n')}`);
});

test("no domain imports a value from another domain's repo", async (t) => {
  const offenders = Object.entries((await graph).obj()).flatMap(([file, imports]) =>
    imports
      .filter(
        (imported) => isRepo(imported) && domainOf(file) && domainOf(imported) && domainOf(imported) !== domainOf(file),
      )
      .map((imported) => `${file} -> ${imported}`),
  );
  t.deepEqual(offenders, [], `${offenders.length} imports of another domain's repo:\n${offenders.join('\n')}`);
});
