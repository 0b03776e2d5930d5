import { runCli } from './main.js'

/*
 * The CLI as a program: `node dist/cli/run.js <command>` in a deployment (compiled by `npm run build`);
 * `npx order-exchange` (bin/order-exchange.js) runs this same file from the sources through tsx.
 */
process.exitCode = await runCli(process.argv.slice(2), process.env, (l) => process.stdout.write(l + '\n'), (l) => process.stderr.write(l + '\n'))
