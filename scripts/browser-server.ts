// A Playwright browser server for BROWSER_WS_ENDPOINT (docs/operations.md#remote-browsers): run it on the browser
// host with the same playwright-core as the service (this repository's), and point the service at the endpoint it
// prints. Chromium gets the service's own launch flags; its name resolution is switched off except for the egress
// host, so every request it makes goes through the service's egress layer, which the service gives each context.
//
//   BROWSER_SERVER_HOST=0.0.0.0 BROWSER_SERVER_PORT=3900 EGRESS_ADVERTISE_HOST=10.0.0.5 sh scripts/node.sh scripts/browser-server.ts
//
// BROWSER_SERVER_TOKEN is the endpoint's path (anyone who knows the endpoint drives the browser: keep it secret, and
// the port closed to all but the service); a random one is made when it is unset. CHROMIUM_PATH as for the service.
import { randomBytes } from 'node:crypto'
import { chromium } from 'playwright-core'
import { childEnvironment } from '../src/config.ts'
import { chromiumArgs, findChromium } from '../src/browser/chromium.ts'

const env = process.env
const host = env.BROWSER_SERVER_HOST ?? '127.0.0.1'
const port = Number(env.BROWSER_SERVER_PORT ?? 3900)
const token = env.BROWSER_SERVER_TOKEN ?? randomBytes(18).toString('base64url')
const egressHost = env.EGRESS_ADVERTISE_HOST ?? env.EGRESS_HOST ?? '127.0.0.1'
const childEnv = childEnvironment(env)

const server = await chromium.launchServer({
  executablePath: findChromium({ chromiumPath: env.CHROMIUM_PATH, searchPath: childEnv.PATH }),
  args: chromiumArgs({ proxyHost: egressHost }),
  env: { ...childEnv },
  host,
  port,
  wsPath: `/${token}`,
  handleSIGINT: false,
  handleSIGTERM: false
})
process.stdout.write(`${JSON.stringify({ wsEndpoint: server.wsEndpoint(), egressHost })}\n`)

const stop = (): void => { server.close().finally(() => process.exit(0)) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
