import { AbortError } from './errors.js'

/** Waits `ms`, or rejects with AbortError as soon as `signal` aborts (retries and pacing both wait). */
export function sleep (ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(new AbortError('aborted')); return }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    const onAbort = (): void => { clearTimeout(timer); reject(new AbortError('aborted')) }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
