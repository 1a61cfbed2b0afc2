// Import-boundary rules from DESIGN.md §1, kept apart from the main config so a test can lint
// fixtures with exactly these rules (test/lint/boundaries.test.ts).
// Direction: core <- domain contexts <- store <- server/client/mcp/console <- cli.
const DOMAINS = ['occurrences', 'providers', 'missions', 'leases', 'observations'];
const EDGES = ['store', 'sor', 'issuer', 'server', 'client', 'mcp', 'console', 'cli'];
// Contexts that decide (entry, dispatch, fencing): they never read observations or its metrics (OBS-15).
const DECIDERS = ['occurrences', 'missions', 'leases'];
const DRIVERS = ['better-sqlite3', 'pg', 'pg-*', 'kysely'];

const layer = (name) => `(?:\\.\\.?/)+(?:src/)?${name}(?:/|$)`;
const anyOf = (names) => names.map(layer).join('|');

function restrict(regexes, message, extraPaths = []) {
  return [
    'error',
    {
      paths: extraPaths.map((name) => ({ name, message: `${message} (driver ${name})` })),
      patterns: [
        ...regexes.map((regex) => ({ regex, message })),
        { group: DRIVERS, message: `${message} (database driver)` },
      ],
    },
  ];
}

/** Another domain context may be reached only through its public index.ts. */
function deepContextImport(self) {
  const others = DOMAINS.filter((d) => d !== self).join('|');
  return `^(?:\\.\\./)+(?:${others})/(?!index\\.js$).+`;
}

export const boundaries = [
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        [`^(?:${anyOf([...DOMAINS, ...EDGES])})`],
        'core is the bottom layer: it imports no other context (DESIGN.md §1)',
        ['fastify'],
      ),
    },
  },
  ...DOMAINS.map((d) => ({
    files: [`src/${d}/**/*.ts`],
    rules: {
      'no-restricted-imports': restrict(
        [
          `^(?:${anyOf(EDGES)})`,
          deepContextImport(d),
          ...(DECIDERS.includes(d) ? [`^(?:\\.\\./)+observations(?:/|$)`] : []),
        ],
        `a domain context (${d}) may not import store, server, client, mcp, console, cli, a driver, or another context's internals (DESIGN.md §1)${DECIDERS.includes(d) ? '; nor observations: no metric may take part in a decision (OBS-15)' : ''}`,
      ),
    },
  })),
  {
    files: ['src/store/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(?:${anyOf(['server', 'client', 'mcp', 'console', 'cli'])})`,
              message: 'store sits below server/client/mcp/console/cli (DESIGN.md §1)',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/{server,client,mcp,console}/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: `^(?:${layer('cli')})`, message: 'cli is the top layer (DESIGN.md §1)' }] },
      ],
    },
  },
];
