import t from 'tap'
import { shownUrl } from '../../src/outbound/shown-url.js'

t.test('an endpoint URL is shown with scheme, host, port and path only', async (t) => {
  const cases: Array<[string, string]> = [
    ['https://hooks.example.com/gone?token=SECRET', 'https://hooks.example.com/gone'],
    ['https://user:pass@hooks.example.com:8443/a/b?x=1#frag', 'https://hooks.example.com:8443/a/b'],
    ['http://127.0.0.1:9/', 'http://127.0.0.1:9/'],
    ['https://[::1]:443/p', 'https://[::1]/p'],
    ['not a url ?token=SECRET', '(not a URL)']
  ]
  for (const [url, shown] of cases) t.equal(shownUrl(url), shown, url)
  t.equal(shownUrl(`https://h.example/${'p'.repeat(500)}`).length, 200, 'cut to 200 characters')
})
