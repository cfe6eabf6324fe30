// The app the adblock tests render with: pages under the name `news.test` (so the filter lists' rules for local
// addresses do not apply), resolved to the fixture server while every other name fails, one browser slot.
import { build, type Built } from './build.ts'
import type { FixtureServer } from './fixture-server.ts'

export async function buildNewsSite (fx: FixtureServer): Promise<{ app: Built, host: string }> {
  const host = `news.test:${fx.port}`
  const app = await build({ ALLOW_PRIVATE_HOSTS: host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1' }, {
    resolve: async (hostname) => {
      if (hostname === 'news.test') return [{ address: '127.0.0.1', family: 4 }]
      throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    }
  })
  return { app, host }
}
