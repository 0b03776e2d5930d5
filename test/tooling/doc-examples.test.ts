import t from 'tap'
import {
  assertExample, docPages, freshService, npmStart, readPage, runExamples, type Skipped
} from '../helpers/doc-examples.js'

/*
 * Issue 42, item 6: every example of README.md and docs/ runs. Each page's examples (the rule in
 * test/helpers/doc-examples.ts) run as written, in page order, on a fresh service of the page's own: the
 * README's tour on `npm start` itself (embedded PostgreSQL, the demo data of a first start), every other page on
 * the app with a fresh database holding that same demo data, which the pages assume. Each example is one
 * assertion: it ran, and it answered what the page shows up to times, uuids and secrets.
 */

const pages = docPages().map((page) => ({ page, ...readPage(page) }))
const total = pages.reduce((n, p) => n + p.examples.length, 0)
let ran = 0

for (const { page, examples } of pages.filter((p) => p.examples.length > 0)) {
  const on = page === 'README.md' ? '`npm start`' : 'service with the demo data'
  t.test(`${page}: its ${examples.length} example(s), in order, on a fresh ${on}`, async (t) => {
    const service = page === 'README.md' ? await npmStart(t) : await freshService(t, { demo: true })
    const { runs } = await runExamples(examples, service)
    for (const run of runs) assertExample(t, run)
    ran += runs.length
  })
}

t.test('every example ran; the blocks that call no service are counted', async (t) => {
  const skipped: Skipped[] = pages.flatMap((p) => p.skipped)
  t.equal(ran, total, 'as many examples ran as the pages hold')
  t.ok(total >= 20, `the pages hold the examples (${total})`)
  t.comment(`${ran} examples run on ${pages.filter((p) => p.examples.length > 0).length} pages; ` +
    `${skipped.length} sh blocks skipped:\n${skipped.map((s) => `  ${s.page}:${s.line} ${s.why}`).join('\n')}`)
})

/* The runner itself, on a planted page: each way an example can be wrong fails, naming its page and line. */

const PLANTED = `# Planted

\`\`\`sh
npm ci && npm start
\`\`\`

\`\`\`sh
curl -s http://localhost:3000/health/ready
\`\`\`

\`\`\`json
{"status":"not ready"}
\`\`\`

\`\`\`sh
# a command the runner does not run
curl -s http://localhost:3000/health/live |
  jq .status
\`\`\`

\`\`\`sh
curl -s -X POST http://localhost:3000/v2/graphql -H "Authorization: Bearer $NEVER_SET" -d '{}'
\`\`\`

\`\`\`sh
curl -s -X POST http://localhost:3000/v2/graphql -H 'Content-Type: application/json' -d '{"query": "{ orders { nodes { orderId } } }"}'
\`\`\`

\`\`\`sh
curl -s -X PUT http://localhost:3000/v2/platform/sellers -H 'Idempotency-Key: 6b1f…' -d '[]'
\`\`\`

\`\`\`sh
QUERY='{ orders { nodes { orderId } } }'
cat > body.json <<'JSON'
{"query": "QUERY"}
JSON
curl -s http://localhost:3000/v2/graphql -H 'Content-Type: application/json' \\
  --data-binary @body.json
\`\`\`

The answer, with its own heading between: not this example's.

## Later

\`\`\`json
{"never": "compared"}
\`\`\`

\`\`\`http
GET /health/live HTTP/1.1
Host: localhost:3000
\`\`\`

\`\`\`json
{"status":"ok"}
\`\`\`
`

t.test('the runner: a planted page\'s wrong answer, unknown command, unset variable, failed request and pasted placeholder each fail at their line', async (t) => {
  const { examples, skipped } = readPage('planted.md', PLANTED)
  t.same(skipped.map((s) => [s.line, s.why]), [[3, 'calls no service: npm']], 'npm ci && npm start is skipped')
  const lines = examples.map((e) => [e.line, e.answer?.line ?? null])
  t.same(lines, [[7, 11], [15, null], [21, null], [25, null], [29, null], [33, null], [50, 55]],
    'the examples, each with the answer right after it, none across a heading')
  const service = await freshService(t, { demo: false })
  const { runs } = await runExamples(examples, service)
  const outcome = runs.map((r) => r.problem ?? (r.want ? JSON.stringify([r.got, r.want]) : 'ran'))
  t.same(outcome[0], JSON.stringify([[{ status: 'ready' }], [{ status: 'not ready' }]]), 'a wrong answer is told apart from the one shown')
  t.match(outcome[1], /^planted\.md:18: a command the runner does not run: jq \.status/, 'an unknown command, at its line')
  t.match(outcome[2], /^planted\.md:22: \$NEVER_SET is used before it is set/, 'an unset variable, at its line')
  t.match(outcome[3], /^planted\.md:25: POST \/v2\/graphql answered 401 and no answer is shown/, 'a failed request with no answer shown')
  t.match(outcome[4], /^planted\.md:30: header Idempotency-Key: 6b1f… is not whole/, 'a placeholder that breaks when pasted')
  t.match(runs[5]?.requests, [{ method: 'POST', path: '/v2/graphql', status: 401, body: { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] } }],
    'a here-document written to a file and sent with --data-binary (unauthenticated: the example fails)')
  t.equal(outcome[6], JSON.stringify([[{ status: 'ok' }], [{ status: 'ok' }]]), 'an http block runs, its answer compared')
})
