/*
 * Which addresses a seller's webhook endpoint may point at. A webhook URL is chosen by the seller, and
 * the service POSTs to it from inside our network: without this policy it is a way to reach the cloud
 * metadata service (169.254.169.254), the database or any internal admin port (SSRF). Registration
 * checks the URL (checkEndpointUrl); the sender checks again at connect time (http-sender.ts), since a
 * name that resolved to a public address yesterday may resolve to 127.0.0.1 today (DNS rebinding).
 */

import { BlockList, isIP } from 'node:net'
import { promises as dns } from 'node:dns'

export type LookupAll = (hostname: string) => Promise<Array<{ address: string, family: number }>>

export interface UrlPolicy {
  /** Development and tests only: a webhook receiver on the same machine or network. */
  allowPrivateNetworks: boolean
  requireHttps: boolean
  /** Resolves every address of a host; injectable so tests need no real DNS. */
  lookup?: LookupAll
}

export const MAX_URL_LENGTH = 2000

type Family = 'ipv4' | 'ipv6'

/**
 * One BlockList per reason, checked in order, so the reason a seller reads is the specific one. The
 * IPv6 forms that embed an IPv4 are not listed here: they are judged by the IPv4 they carry.
 */
const RULES: Array<{ reason: string, list: BlockList }> = [
  rule('unspecified', [['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]),
  rule('loopback', [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]),
  rule('private (RFC 1918)', [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4']]),
  rule('CGNAT', [['100.64.0.0', 10, 'ipv4']]),
  // The cloud metadata service (169.254.169.254) lives here.
  rule('link-local', [['169.254.0.0', 16, 'ipv4']]),
  rule('broadcast', [['255.255.255.255', 32, 'ipv4']]),
  rule('multicast', [['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']]),
  // IETF protocol assignments, benchmarking (198.18/15) and the old class E: never a public host.
  rule('reserved', [['192.0.0.0', 24, 'ipv4'], ['198.18.0.0', 15, 'ipv4'], ['240.0.0.0', 4, 'ipv4']]),
  rule('IPv6 unique local', [['fc00::', 7, 'ipv6']]),
  rule('IPv6 link-local', [['fe80::', 10, 'ipv6']]),
  // Deprecated (RFC 3879) but still routed inside some networks the way fc00::/7 is.
  rule('IPv6 site-local', [['fec0::', 10, 'ipv6']])
]

function rule (reason: string, subnets: Array<[string, number, Family]>): { reason: string, list: BlockList } {
  const list = new BlockList()
  for (const [network, prefix, family] of subnets) list.addSubnet(network, prefix, family)
  return { reason, list }
}

/** Null when `ip` may be contacted; else why not, in a few words ('loopback', 'private (RFC 1918)', …). */
export function forbiddenAddressReason (ip: string): string | null {
  if (typeof ip !== 'string') return 'not an IP address'
  // A zone (fe80::1%eth0) names the interface, not the address.
  const address = ip.includes('%') ? ip.slice(0, ip.indexOf('%')) : ip
  const version = isIP(address)
  if (version === 4) return ruleReason(address, 'ipv4')
  if (version !== 6) return 'not an IP address'
  // :: and ::1 first: read as IPv4-compatible they would be 0.0.0.0 and 0.0.0.1.
  const own = ruleReason(address, 'ipv6')
  if (own !== null) return own
  const embedded = embeddedIPv4(address)
  return embedded === null ? null : ruleReason(embedded, 'ipv4')
}

function ruleReason (address: string, family: Family): string | null {
  for (const { reason, list } of RULES) {
    if (list.check(address, family)) return reason
  }
  return null
}

/**
 * The IPv4 an IPv6 address carries, in the forms that reach it: ::ffff:a.b.c.d (mapped),
 * ::ffff:0:a.b.c.d (translated), ::a.b.c.d (compatible), 64:ff9b::/96 (NAT64) and 2002::/16 (6to4).
 */
function embeddedIPv4 (address: string): string | null {
  const g = ipv6Groups(address)
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0)
  const quad = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return quad(g[6], g[7])
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return quad(g[6], g[7])
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return quad(g[6], g[7])
  if (g[0] === 0x2002) return quad(g[1], g[2])
  return null
}

/** The eight 16-bit groups of an address isIP already accepted as IPv6. */
function ipv6Groups (address: string): number[] {
  let text = address
  const lastColon = text.lastIndexOf(':')
  if (text.includes('.', lastColon)) {
    const [a, b, c, d] = text.slice(lastColon + 1).split('.').map(Number)
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::')
  const parse = (part: string | undefined): number[] => part ? part.split(':').map((h) => parseInt(h, 16)) : []
  const front = parse(head)
  const back = parse(tail)
  const middle = tail === undefined ? [] : new Array<number>(8 - front.length - back.length).fill(0)
  return [...front, ...middle, ...back]
}

function withArticle (reason: string): string {
  return /^[aeiouIU]/.test(reason) ? `an ${reason}` : `a ${reason}`
}

/**
 * Null when `raw` is acceptable as a webhook endpoint; else what is wrong with it, in a sentence for
 * the seller (it becomes the 400's message). Every address the host resolves to must be allowed: the
 * sender may connect to any of them.
 */
export async function checkEndpointUrl (raw: string, policy: UrlPolicy): Promise<string | null> {
  if (typeof raw !== 'string') return 'url must be an absolute http(s) URL'
  if (raw.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH.toLocaleString('en')} characters`
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'url must be an absolute http(s) URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must be an absolute http(s) URL'
  if (policy.requireHttps && url.protocol !== 'https:') return 'url must use https'
  if (url.username !== '' || url.password !== '') return 'url must not carry credentials (user:password@)'
  if (policy.allowPrivateNetworks) return null

  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  const refused = 'webhooks cannot be sent to private networks'
  if (isIP(host) !== 0) {
    const reason = forbiddenAddressReason(host)
    return reason === null ? null : `url host ${host} is ${withArticle(reason)} address: ${refused}`
  }
  let addresses: Array<{ address: string, family: number }>
  try {
    addresses = await (policy.lookup ?? lookupAll)(host)
  } catch {
    return `url host ${host} does not resolve`
  }
  if (!Array.isArray(addresses) || addresses.length === 0) return `url host ${host} does not resolve`
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(address)
    if (reason === 'not an IP address') return `url host ${host} does not resolve to an IP address`
    if (reason !== null) return `url host ${host} resolves to ${address}, ${withArticle(reason)} address: ${refused}`
  }
  return null
}

async function lookupAll (hostname: string): Promise<Array<{ address: string, family: number }>> {
  return await dns.lookup(hostname, { all: true })
}
