// Registered in every test process (package.json, tap.node-arg): runs the TypeScript of src/ and test/ through
// esbuild, a millisecond a file, in place of tap's ts-node, which spent about 10 s of CPU per test process
// transpiling the app again. Whitespace is kept and the source map carries the source, so the coverage report
// and stack traces point at the TypeScript lines (tsx minifies whitespace, which collapsed the coverage of a
// file to one line). Types are checked once for the whole tree by `npm run typecheck`, as before.
import { register } from 'node:module'

register('./typescript-hooks.mjs', import.meta.url)
