/*
 * An endpoint's URL as the service shows it to anyone but its owner's own endpoint list (events, logs):
 * scheme, host, port and path. A receiver's URL often carries a token in its query or userinfo
 * (`…/hook?token=…`, `https://user:pass@…`), and an event goes to the feed and to the seller's other
 * endpoints; so the query, the fragment and the userinfo are never shown.
 */

/** `url` without userinfo, query or fragment; text that is not a URL shows as `(not a URL)`. */
export function shownUrl (url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return '(not a URL)'
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`.slice(0, 200)
}
