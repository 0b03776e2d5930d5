import { teardownTestServer } from '../helpers/test-server.js'

await teardownTestServer()
