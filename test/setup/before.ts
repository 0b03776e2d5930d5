import { setupTestServer } from '../helpers/test-server.js'

const state = await setupTestServer()
process.stderr.write(`# test database server: ${state.embedded ? `embedded (pid ${state.embedded.pid})` : 'TEST_DATABASE_URL'}, template ${state.template}\n`)
