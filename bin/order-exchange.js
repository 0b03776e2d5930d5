#!/usr/bin/env node
// The CLI from the TypeScript sources through tsx, so a checkout needs no build step before use. A
// deployment runs the compiled one instead: node dist/cli/run.js (after `npm run build`).
import { register } from 'tsx/esm/api'

register()
await import('../src/cli/run.ts')
