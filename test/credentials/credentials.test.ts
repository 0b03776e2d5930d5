import t from 'tap'
import { buildApp } from '../../src/app.js'
import { generateSecret, hashSecret, parseSecret, secretMatches } from '../../src/credentials/secret.js'
import { CredentialError, issueCredential, listCredentials, revokeCredential, verifyCredential } from '../../src/credentials/service.js'
import { credentials } from '../../src/db/schema.js'
import { eq } from 'drizzle-orm'
import { testConfig, testDatabase } from '../helpers/build.js'
import { createSeller } from '../helpers/fixtures.js'

t.test('secrets: prefix shows environment and kind, 32 random bytes, hash only', async (t) => {
  const a = generateSecret('api-key', 'testing')
  t.match(a.secret, /^oxs_test_ak_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{43}$/)
  t.match(generateSecret('access-token', 'production').secret, /^oxs_live_at_/)
  t.equal(a.secretHash, hashSecret(a.secret))
  t.not(a.secretHash, a.secret)
  t.same(parseSecret(a.secret), { environment: 'testing', kind: 'api-key', keyId: a.keyId })
  t.equal(parseSecret('oxs_test_ak_short'), null)
  t.equal(parseSecret(''), null)
  t.ok(secretMatches(a.secret, a.secretHash))
  t.notOk(secretMatches(a.secret + 'x', a.secretHash))
  t.notOk(secretMatches(a.secret, 'abcd'))
  t.not(generateSecret('api-key', 'testing').secret, a.secret)
})

t.test('issue, verify, revoke', async (t) => {
  const database = await testDatabase(t)
  const { sellerId, storeIds } = await createSeller(database)
  const other = await createSeller(database)
  const { db } = database

  const issued = await issueCredential(db, { sellerId, kind: 'api-key', environment: 'testing' })
  const [row] = await db.select().from(credentials).where(eq(credentials.id, issued.id))
  t.equal(row.secretHash, hashSecret(issued.secret), 'stored as a hash')
  // The random part is everything after oxs_<env>_<kind>_<keyId>_ (base64url: it may itself hold '_').
  t.notOk(JSON.stringify(row).includes(issued.secret.split('_').slice(4).join('_')), 'the secret itself is not stored')
  t.equal(row.lastUsedAt, null)

  const caller = await verifyCredential(db, issued.secret, { kind: 'api-key', environment: 'testing' })
  t.same(caller, { credentialId: issued.id, sellerId, kind: 'api-key', environment: 'testing', storeIds: null })
  const [used] = await db.select().from(credentials).where(eq(credentials.id, issued.id))
  t.ok(used.lastUsedAt instanceof Date, 'last_used_at is kept')

  t.equal(await verifyCredential(db, issued.secret, { kind: 'access-token', environment: 'testing' }), null, 'wrong kind')
  t.equal(await verifyCredential(db, issued.secret, { kind: 'api-key', environment: 'production' }), null, 'wrong environment')
  t.equal(await verifyCredential(db, issued.secret.slice(0, -1) + (issued.secret.endsWith('A') ? 'B' : 'A'), { kind: 'api-key', environment: 'testing' }), null, 'tampered')
  t.equal(await verifyCredential(db, 'nonsense', { kind: 'api-key', environment: 'testing' }), null, 'malformed')
  const unknown = generateSecret('api-key', 'testing').secret
  t.equal(await verifyCredential(db, unknown, { kind: 'api-key', environment: 'testing' }), null, 'unknown')

  const live = await issueCredential(db, { sellerId, kind: 'api-key', environment: 'production' })
  t.equal(await verifyCredential(db, live.secret, { kind: 'api-key', environment: 'testing' }), null, 'other environment')

  const narrowed = await issueCredential(db, { sellerId, kind: 'access-token', environment: 'testing', storeIds: [storeIds[1], storeIds[1]] })
  t.same((await verifyCredential(db, narrowed.secret, { kind: 'access-token', environment: 'testing' }))?.storeIds, [storeIds[1]])
  await t.rejects(issueCredential(db, { sellerId, kind: 'api-key', environment: 'testing', storeIds: [other.storeIds[0]] }), CredentialError)
  await t.rejects(issueCredential(db, { sellerId: 999999, kind: 'api-key', environment: 'testing' }), { message: 'No seller with companyId 999999' })

  t.equal(await revokeCredential(db, issued.id), true)
  t.equal(await revokeCredential(db, issued.id), false, 'revoking twice reports nothing to do')
  t.equal(await verifyCredential(db, issued.secret, { kind: 'api-key', environment: 'testing' }), null, 'revoked')

  const listed = await listCredentials(db, sellerId)
  t.equal(listed.length, 3)
  t.notOk(JSON.stringify(listed).includes('secretHash'), 'listing carries no hashes')
  t.ok(listed.find((c) => c.id === issued.id)?.revokedAt)
})

t.test('auth plugin: 401 envelope for every bad credential, caller resolved otherwise', async (t) => {
  const database = await testDatabase(t)
  const { sellerId } = await createSeller(database)
  const app = await buildApp({ config: testConfig(database), database })
  t.teardown(() => app.close())
  app.get('/probe/bearer', { onRequest: app.requireCredential('api-key', 'authorization') }, async (req) => req.caller)
  app.get('/probe/header', { onRequest: app.requireCredential('api-key', 'x-api-key') }, async (req) => req.caller)
  await app.ready()

  const key = (await issueCredential(database.db, { sellerId, kind: 'api-key', environment: 'testing' })).secret
  const token = (await issueCredential(database.db, { sellerId, kind: 'access-token', environment: 'testing' })).secret
  const live = (await issueCredential(database.db, { sellerId, kind: 'api-key', environment: 'production' })).secret
  const revokedIssued = await issueCredential(database.db, { sellerId, kind: 'api-key', environment: 'testing' })
  await revokeCredential(database.db, revokedIssued.id)

  const ok = await app.inject({ url: '/probe/bearer', headers: { authorization: `Bearer ${key}` } })
  t.equal(ok.statusCode, 200)
  t.equal(ok.json().sellerId, sellerId)
  const okHeader = await app.inject({ url: '/probe/header', headers: { 'x-api-key': key } })
  t.equal(okHeader.statusCode, 200)

  const unauthorized = { error: true, status: false, statusCode: 401, message: 'Unauthorized', code: 'UNAUTHENTICATED' }
  const bad: Array<[string, Record<string, string>]> = [
    ['/probe/bearer', {}],
    ['/probe/bearer', { authorization: key }],
    ['/probe/bearer', { authorization: `Basic ${key}` }],
    ['/probe/bearer', { authorization: `Bearer ${token}` }],
    ['/probe/bearer', { authorization: `Bearer ${live}` }],
    ['/probe/bearer', { authorization: `Bearer ${revokedIssued.secret}` }],
    ['/probe/bearer', { authorization: 'Bearer oxs_test_ak_000000000000_' + 'x'.repeat(43) }],
    ['/probe/bearer', { 'x-api-key': key }],
    ['/probe/header', { authorization: `Bearer ${key}` }],
    ['/probe/header', { 'x-api-key': token }]
  ]
  for (const [url, headers] of bad) {
    const res = await app.inject({ url, headers })
    t.equal(res.statusCode, 401, `${url} ${JSON.stringify(Object.keys(headers))}`)
    t.same(res.json(), unauthorized)
  }
})
