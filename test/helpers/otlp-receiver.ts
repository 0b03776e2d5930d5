// A real OTLP/HTTP trace receiver that decodes what the exporter sends (JSON and protobuf).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import zlib from 'node:zlib'

/*
 * A real OTLP/HTTP trace receiver (POST /v1/traces), as a collector would be: it answers what the exporter
 * expects and decodes both encodings the service can send, `http/json` (OTLP's JSON mapping: ids as hex)
 * and `http/protobuf`. No package here carries the OTLP .proto definitions (@opentelemetry/otlp-transformer
 * writes protobuf by hand and only reads the response back), so the request is read with the wire format
 * and the field numbers of opentelemetry/proto/{collector/trace,trace,common,resource}/v1/*.proto, for the
 * fields a test asserts on. Tests and bench/traces use it.
 */

export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue }

export interface ExportedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** SpanKind of the proto: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  startNs: bigint
  endNs: bigint
  attributes: Record<string, AttributeValue>
  events: Array<{ name: string, attributes: Record<string, AttributeValue> }>
  links: Array<{ traceId: string, spanId: string }>
  /** Code of the proto: 0 unset, 1 ok, 2 error. */
  status: { code: number, message: string }
  resource: Record<string, AttributeValue>
  scope: string
  /** How the exporter sent it: OTEL_EXPORTER_OTLP_PROTOCOL http/json or http/protobuf. */
  encoding: 'json' | 'protobuf'
}

export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  endpoint: string
  /** The spans received (none with `decode: false`). */
  spans: ExportedSpan[]
  /** How many export requests came in each encoding, and their bytes. */
  requests: { json: number, protobuf: number, bytes: number }
  /** Every request body as received (decompressed), for a search through all that left the process. */
  bodies: Buffer[]
  close: () => Promise<void>
}

// --- protobuf wire format --------------------------------------------------------------------------------

/** Wire types 0 (varint), 1 (64-bit), 2 (length-delimited), 5 (32-bit); groups are not used by OTLP. */
type Field = { wire: 0, value: bigint } | { wire: 1 | 2 | 5, value: Buffer }

/** A message's fields by number, in order (a repeated field appears once per element). */
function readMessage (buf: Buffer): Map<number, Field[]> {
  const fields = new Map<number, Field[]>()
  let pos = 0
  const varint = (): bigint => {
    let result = 0n
    let shift = 0n
    for (;;) {
      if (pos >= buf.length) throw new Error('protobuf: truncated varint')
      const byte = buf[pos++]
      result |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return result
      shift += 7n
    }
  }
  while (pos < buf.length) {
    const tag = Number(varint())
    const number = tag >>> 3
    const wire = tag & 7
    let field: Field
    if (wire === 0) {
      field = { wire, value: varint() }
    } else if (wire === 1 || wire === 2 || wire === 5) {
      const length = wire === 1 ? 8 : wire === 5 ? 4 : Number(varint())
      field = { wire, value: buf.subarray(pos, pos + length) }
      pos += length
    } else {
      throw new Error(`protobuf: wire type ${wire} not used by OTLP`)
    }
    if (pos > buf.length) throw new Error('protobuf: truncated field')
    fields.set(number, [...(fields.get(number) ?? []), field])
  }
  return fields
}

const bytesOf = (m: Map<number, Field[]>, n: number): Buffer[] =>
  (m.get(n) ?? []).filter((f) => f.wire === 2).map((f) => f.value as Buffer)
const one = (m: Map<number, Field[]>, n: number): Field | undefined => m.get(n)?.at(-1)
const text = (m: Map<number, Field[]>, n: number): string => bytesOf(m, n).at(-1)?.toString('utf8') ?? ''
const hex = (m: Map<number, Field[]>, n: number): string => bytesOf(m, n).at(-1)?.toString('hex') ?? ''
const int = (m: Map<number, Field[]>, n: number): number => {
  const f = one(m, n)
  return f?.wire === 0 ? Number(BigInt.asIntN(64, f.value)) : 0
}
const fixed64 = (m: Map<number, Field[]>, n: number): bigint => {
  const f = one(m, n)
  return f?.wire === 1 ? f.value.readBigUInt64LE(0) : 0n
}

/** AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue{1 values}, 6 KeyValueList{1 values}, 7 bytes. */
function protoValue (buf: Buffer): AttributeValue {
  const m = readMessage(buf)
  if (m.has(1)) return text(m, 1)
  if (m.has(2)) return int(m, 2) !== 0
  if (m.has(3)) return int(m, 3)
  if (m.has(4)) {
    const f = one(m, 4)!
    return f.wire === 1 ? f.value.readDoubleLE(0) : 0
  }
  if (m.has(5)) return bytesOf(readMessage(bytesOf(m, 5)[0]), 1).map(protoValue)
  if (m.has(6)) return protoAttributes(bytesOf(readMessage(bytesOf(m, 6)[0]), 1))
  if (m.has(7)) return bytesOf(m, 7)[0].toString('base64')
  return null
}

/** KeyValue: 1 key, 2 value. */
function protoAttributes (list: Buffer[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {}
  for (const kv of list) {
    const m = readMessage(kv)
    out[text(m, 1)] = m.has(2) ? protoValue(bytesOf(m, 2)[0]) : null
  }
  return out
}

/**
 * ExportTraceServiceRequest{1 ResourceSpans}; ResourceSpans{1 Resource{1 attributes}, 2 ScopeSpans};
 * ScopeSpans{1 InstrumentationScope{1 name}, 2 Span}; Span{1 trace_id, 2 span_id, 4 parent_span_id,
 * 5 name, 6 kind, 7 start, 8 end (fixed64), 9 attributes, 11 Event{2 name, 3 attributes},
 * 13 Link{1 trace_id, 2 span_id}, 15 Status{2 message, 3 code}}.
 */
export function decodeProtobuf (body: Buffer): ExportedSpan[] {
  const spans: ExportedSpan[] = []
  for (const rs of bytesOf(readMessage(body), 1)) {
    const resourceSpans = readMessage(rs)
    const resourceMessage = bytesOf(resourceSpans, 1)[0]
    const resource = resourceMessage ? protoAttributes(bytesOf(readMessage(resourceMessage), 1)) : {}
    for (const ss of bytesOf(resourceSpans, 2)) {
      const scopeSpans = readMessage(ss)
      const scopeMessage = bytesOf(scopeSpans, 1)[0]
      const scope = scopeMessage ? text(readMessage(scopeMessage), 1) : ''
      for (const s of bytesOf(scopeSpans, 2)) {
        const span = readMessage(s)
        const statusMessage = bytesOf(span, 15)[0]
        const status = statusMessage ? readMessage(statusMessage) : new Map<number, Field[]>()
        spans.push({
          traceId: hex(span, 1),
          spanId: hex(span, 2),
          parentSpanId: hex(span, 4),
          name: text(span, 5),
          kind: int(span, 6),
          startNs: fixed64(span, 7),
          endNs: fixed64(span, 8),
          attributes: protoAttributes(bytesOf(span, 9)),
          events: bytesOf(span, 11).map((e) => {
            const event = readMessage(e)
            return { name: text(event, 2), attributes: protoAttributes(bytesOf(event, 3)) }
          }),
          links: bytesOf(span, 13).map((l) => {
            const link = readMessage(l)
            return { traceId: hex(link, 1), spanId: hex(link, 2) }
          }),
          status: { code: int(status, 3), message: text(status, 2) },
          resource,
          scope,
          encoding: 'protobuf'
        })
      }
    }
  }
  return spans
}

// --- OTLP JSON ---------------------------------------------------------------------------------------------

type JsonAnyValue = {
  stringValue?: string,
  boolValue?: boolean,
  intValue?: number | string,
  doubleValue?: number,
  arrayValue?: { values?: JsonAnyValue[] },
  kvlistValue?: { values?: JsonKeyValue[] },
  bytesValue?: string
}
type JsonKeyValue = { key: string, value?: JsonAnyValue }

function jsonValue (v: JsonAnyValue | undefined): AttributeValue {
  if (!v) return null
  if (v.stringValue !== undefined) return v.stringValue
  if (v.boolValue !== undefined) return v.boolValue
  if (v.intValue !== undefined) return Number(v.intValue)
  if (v.doubleValue !== undefined) return v.doubleValue
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue)
  if (v.kvlistValue) return jsonAttributes(v.kvlistValue.values)
  if (v.bytesValue !== undefined) return v.bytesValue
  return null
}

function jsonAttributes (list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]))
}

export function decodeJson (body: Buffer): ExportedSpan[] {
  const request = JSON.parse(body.toString('utf8')) as { resourceSpans?: any[] }
  const spans: ExportedSpan[] = []
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes)
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind ?? 0,
          startNs: BigInt(s.startTimeUnixNano ?? 0),
          endNs: BigInt(s.endTimeUnixNano ?? 0),
          attributes: jsonAttributes(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
          links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
          resource,
          scope: ss.scope?.name ?? '',
          encoding: 'json'
        })
      }
    }
  }
  return spans
}

// --- the receiver -----------------------------------------------------------------------------------------

/**
 * Starts the receiver on 127.0.0.1 (a free port). `decode: false` only counts what comes in, as cheaply as
 * a receiver can (bench/traces: it shares the machine with what is measured).
 */
export async function startOtlpReceiver (options: { decode?: boolean } = {}): Promise<OtlpReceiver> {
  const decode = options.decode ?? true
  const spans: ExportedSpan[] = []
  const bodies: Buffer[] = []
  const requests = { json: 0, protobuf: 0, bytes: 0 }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end()
          return
        }
        let body = Buffer.concat(chunks)
        if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body)
        const json = (req.headers['content-type'] ?? '').startsWith('application/json')
        if (json) requests.json++
        else requests.protobuf++
        requests.bytes += body.length
        if (decode) {
          spans.push(...(json ? decodeJson(body) : decodeProtobuf(body)))
          bodies.push(body)
        }
        // An ExportTraceServiceResponse with nothing rejected: an empty message in either encoding.
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '')
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end((err as Error).message)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    bodies,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}
