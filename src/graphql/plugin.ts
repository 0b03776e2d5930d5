import type { FastifyPluginAsync } from 'fastify'

// Not built yet: see the open issue for this endpoint.
const plugin: FastifyPluginAsync = async () => {}
export default plugin
