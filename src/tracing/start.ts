import type { Config } from '../config.js'
import type { Tracing } from './tracing.js'

/*
 * Tracing is on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or the traces-only
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and OTEL_SDK_DISABLED is not true. Read from process.env, which is
 * where the SDK reads every other OTEL_* variable. Off, the SDK is never imported.
 */

export function tracingRequested (env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim())
}

/** Starts OpenTelemetry for this process (before the app or the worker is built), or null when it is off. */
export async function startTracing (config: Pick<Config, 'ORDER_EXCHANGE_ENV'>): Promise<Tracing | null> {
  if (!tracingRequested()) return null
  const { startSdk } = await import('./sdk.js')
  return startSdk({ environment: config.ORDER_EXCHANGE_ENV })
}
