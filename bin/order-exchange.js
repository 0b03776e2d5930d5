#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx, so there is no build step between a checkout and use.
import { register } from 'tsx/esm/api'

register()
const { runCli } = await import('../src/cli/main.ts')
const code = await runCli(process.argv.slice(2), process.env, (l) => process.stdout.write(l + '\n'), (l) => process.stderr.write(l + '\n'))
process.exitCode = code
