import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'
import importX from 'eslint-plugin-import-x'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'

/*
 * One linter and formatter for the whole team: neostandard (JavaScript Standard Style with TypeScript,
 * the style this code is written in; `npm run lint:fix` formats), plus the shape of the house as rules:
 * no import cycles, and dependencies that point one way (docs/architecture.md):
 *
 *   entry points (server.ts, cli/, app.ts, worker-tasks.ts, demo.ts)
 *     → interfaces (routes/, graphql/, plugins/)
 *       → services (orders/, sellers/, shipments/, references/, status-update/, credentials/, seed/)
 *         → effects/ (the job contract and its delivery)
 *           → base (db/, paging/, config.ts, errors.ts, logger.ts, plain-object.ts, outbound/, tracing/)
 *
 * The client package (packages/client) is published on its own: it imports nothing of the service.
 */

const ENTRY = ['src/server.ts', 'src/app.ts', 'src/cli', 'src/worker-tasks.ts', 'src/demo.ts']
const INTERFACES = ['src/routes', 'src/graphql', 'src/plugins']
const SERVICES = ['src/orders', 'src/sellers', 'src/shipments', 'src/status-update', 'src/credentials', 'src/seed', 'src/idempotency',
  'src/platform', 'src/references', 'src/events', 'src/webhooks']
const EFFECTS = ['src/effects']
const BASE = ['src/db', 'src/paging', 'src/config.ts', 'src/errors.ts', 'src/rest-envelope.ts', 'src/item-error.ts',
  'src/logger.ts', 'src/redis.ts', 'src/metrics.ts', 'src/cost-bucket.ts', 'src/plain-object.ts', 'src/outbound', 'src/tracing']

const layer = (target, from, message) => ({ target, from, message })

/*
 * No fixed pause in a test (issue 41): a test waits for a state with eventually() (test/helpers/eventually.ts),
 * lets time pass on a clock the code under test takes, or drains a worker before asserting that something did
 * not happen. The files below may use a timer, each for why it cannot be a clock or a state; nothing else in test/.
 */
const TEST_TIMERS_ALLOWED = [
  { file: 'test/helpers/eventually.ts', why: 'the poller itself: the pause between two looks at a state' },
  {
    file: 'test/helpers/receiver.ts',
    why: 'fake servers slow on purpose (slowly, answerAfter): the subject is the sender\'s patience, a stop meeting attempts in flight'
  },
  {
    file: 'test/helpers/faults.ts',
    why: 'fault timing (injectAfter, probeFor): where in a batch\'s life its backends die, how long an outage lasts'
  }
]
const NO_PAUSE = 'No fixed pause in a test: wait for the state with eventually() (test/helpers/eventually.ts), ' +
  'or give the code under test a clock; a timer that is the subject goes in TEST_TIMERS_ALLOWED (eslint.config.js).'

export default [
  ...neostandard({ ts: true, ignores: [...resolveIgnoresFromGitignore(), 'src/graphql/generated/**', 'packages/*/src/generated/**', 'drizzle/**', 'patches/**'] }),
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: ['./tsconfig.json', './packages/client/tsconfig.json'], noWarnOnMultipleProjects: true })],
      // no-cycle follows imports into other files: it must be able to parse them.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js']
    },
    rules: {
      // 120 columns; a line long only because of a string, template, URL or regex (a text clients match
      // on, an SQL statement) is left whole rather than split mid-text.
      '@stylistic/max-len': ['error', {
        code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true
      }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', {
        zones: [
          layer(INTERFACES, ENTRY, 'Interfaces (routes, GraphQL, plugins) must not import an entry point.'),
          layer(SERVICES, [...ENTRY, ...INTERFACES], 'Services must not import routes, GraphQL, plugins or entry points: pass what they need in.'),
          layer(EFFECTS, [...ENTRY, ...INTERFACES, ...SERVICES], 'effects/ is below the services that enqueue effects: wire tasks to services in src/worker-tasks.ts.'),
          layer(BASE, [...ENTRY, ...INTERFACES, ...SERVICES, ...EFFECTS], 'The base (db, paging, config, errors, logger) imports nothing above it.'),
          layer('packages/client', ['src', 'test', 'bench', 'scripts'], 'The client package is published on its own: it must not import the service (its types are generated into it).')
        ]
      }]
    }
  },
  {
    files: ['test/**/*.ts'],
    ignores: TEST_TIMERS_ALLOWED.map((allowed) => allowed.file),
    rules: {
      'no-restricted-globals': ['error', { name: 'setTimeout', message: NO_PAUSE }, { name: 'setInterval', message: NO_PAUSE }],
      'no-restricted-properties': ['error', ...['globalThis', 'global'].flatMap((object) =>
        ['setTimeout', 'setInterval'].map((property) => ({ object, property, message: NO_PAUSE })))],
      'no-restricted-syntax': ['error', { selector: "CallExpression[callee.type='Identifier'][callee.name='sleep']", message: NO_PAUSE }],
      'no-restricted-imports': ['error', {
        paths: ['timers', 'node:timers', 'timers/promises', 'node:timers/promises'].map((name) => ({ name, message: NO_PAUSE }))
      }]
    }
  }
]
