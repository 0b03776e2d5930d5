import fp from 'fastify-plugin'

/*
 * On close (SIGTERM), requests in flight finish, but a keep-alive client would hold its socket open
 * for the whole keep-alive timeout and keep the server from closing until the shutdown grace ran out.
 * So from the moment closing starts every response says `Connection: close` (the client opens a new
 * connection, to another instance), and sockets that fall idle are closed as they do.
 */
export default fp(async function gracefulClosePlugin (app) {
  let closing = false
  let sweeper: NodeJS.Timeout | null = null

  app.addHook('preClose', async () => {
    closing = true
    // Node closes the sockets idle at this moment; these are the ones that become idle afterwards.
    sweeper = setInterval(() => { app.server.closeIdleConnections() }, 50)
    sweeper.unref()
  })
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
  app.addHook('onClose', async () => {
    if (sweeper) clearInterval(sweeper)
  })
}, { name: 'graceful-close' })
