// The setup the Firecrawl-compatible tests share: the real app (build.ts) with both listeners on loopback, the key
// `fc-key` (API_KEYS) unless a KEYS_FILE is given, the real SDK clients pointed at a listener, and a JSON POST.
import Firecrawl, { FirecrawlAppV1 } from '@mendable/firecrawl-js'
import type { ContextOverrides } from '../../src/context.ts'
import { build, type Built } from './build.ts'

/** The API_KEYS key of every Firecrawl test app. */
export const FC_KEY = 'fc-key'

export interface FirecrawlApp {
  app: Built
  /** The listeners' base URLs (`http://127.0.0.1:<port>`). */
  freeUrl: string
  proUrl: string
  /** The v2 SDK (the package's default export) with `key` at `base` (default: fc-key on the pro listener). */
  v2: (key?: string, base?: string) => Firecrawl
  /** The v1 SDK, the same way. */
  v1: (key?: string, base?: string) => FirecrawlAppV1
  close: () => Promise<void>
}

/** Builds the app over `env` (plus API_KEYS=fc-key without a KEYS_FILE) and listens on loopback ports of its own. */
export async function startFirecrawlApp (env: Record<string, string>, overrides: ContextOverrides = {}): Promise<FirecrawlApp> {
  const app = await build({ ...(env.KEYS_FILE === undefined ? { API_KEYS: FC_KEY } : {}), ...env }, overrides)
  try {
    const freeUrl = await app.free.listen({ port: 0, host: '127.0.0.1' })
    const proUrl = await app.pro.listen({ port: 0, host: '127.0.0.1' })
    return {
      app,
      freeUrl,
      proUrl,
      v2: (key = FC_KEY, base = proUrl) => new Firecrawl({ apiKey: key, apiUrl: base }),
      v1: (key = FC_KEY, base = proUrl) => new FirecrawlAppV1({ apiKey: key, apiUrl: base }),
      close: async () => { await app.close() }
    }
  } catch (err) {
    await app.close()
    throw err
  }
}

/** POSTs `body` as JSON to `base` + `path`, with `Authorization: Bearer <key>` when a key is given. */
export async function postJson (base: string, path: string, body: unknown, key?: string): Promise<Response> {
  return await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body)
  })
}
