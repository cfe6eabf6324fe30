// A webhook receiver on loopback: records every attempt, answers 503 while it is "down" (the first `failFirst`
// attempts, or until up() is called), 204 after, and checks both signatures of what it accepted.
import { createHmac } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'

export interface Received { headers: http.IncomingHttpHeaders, body: string }

export interface WebhookReceiver {
  url: string
  /** The deliveries accepted (2xx). */
  got: Received[]
  /** Every request, refused ones included. */
  tries: Received[]
  attempts: () => number
  /** From now on every attempt is accepted. */
  up: () => void
  /** Waits until `test` holds for what was accepted (at most `ms`). */
  until: (test: (got: Received[]) => boolean, ms?: number) => Promise<void>
  close: () => Promise<void>
}

/** `failFirst`: attempts refused before the receiver accepts; Infinity keeps it down until up(). */
export async function startWebhookReceiver (failFirst = 0): Promise<WebhookReceiver> {
  const got: Received[] = []
  const tries: Received[] = []
  let down = failFirst
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString('utf8') })
    req.on('end', () => {
      tries.push({ headers: req.headers, body })
      if (tries.length <= down) { res.writeHead(503); res.end(); return }
      got.push({ headers: req.headers, body })
      res.writeHead(204)
      res.end()
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    tries,
    attempts: () => tries.length,
    up: () => { down = 0 },
    async until (test, ms = 30_000) {
      const deadline = Date.now() + ms
      while (!test(got) && Date.now() < deadline) await sleep(50)
    },
    close: async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) }
  }
}

/** Whether `received` carries both valid signatures under `secret`: Firecrawl's and Standard Webhooks'. */
export function verifiesBoth ({ headers, body }: Received, secret: string): boolean {
  if (headers['x-firecrawl-signature'] !== `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`) return false
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>)
    return true
  } catch {
    return false
  }
}
