// The module hooks test/setup/typescript.mjs registers: a `.js` import that names a `.ts` file (NodeNext's
// convention) resolves to it, and a `.ts` file loads as esbuild's transform of it.
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { transform } from 'esbuild'

export async function resolve (specifier, context, next) {
  try {
    return await next(specifier, context)
  } catch (err) {
    const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:')
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !relative || !specifier.endsWith('.js')) throw err
    return await next(`${specifier.slice(0, -3)}.ts`, context)
  }
}

export async function load (url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return await next(url, context)
  const file = fileURLToPath(url)
  const { code } = await transform(await readFile(file, 'utf8'), {
    loader: 'ts', format: 'esm', target: 'node20', sourcefile: file, sourcemap: 'inline', sourcesContent: true
  })
  return { format: 'module', source: code, shortCircuit: true }
}
