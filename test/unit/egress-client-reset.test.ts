// A local client that drops its connection to the browser's egress proxy with a reset (RST), right after the proxy
// answered its CONNECT or upgrade without a credential (407): the proxy's raw socket is no longer
// the HTTP server's then (Node hands it over on `connect`/`upgrade`), and a read error on a socket nobody listens to
// would end the service's process. Any local process can do it, and so can a browser that drops such a connection.
import net from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createEgressProxy } from '../../src/browser/egress-proxy.ts'
import type { EgressProxy } from '../../src/browser/egress-types.ts'
import { createAddressGuard } from '../../src/net/guard.ts'

let proxy: EgressProxy
const uncaught: unknown[] = []
const onUncaught = (err: unknown): void => { uncaught.push(err) }

beforeEach(async () => {
  uncaught.length = 0
  process.on('uncaughtException', onUncaught)
  proxy = await createEgressProxy({ guard: createAddressGuard({ allowPrivateHosts: [] }), authenticate: true })
})
afterEach(async () => {
  process.off('uncaughtException', onUncaught)
  await proxy.close()
})

/** Sends `request` to the proxy, reads its answer's status line, then resets the connection. */
async function askThenReset (request: string): Promise<string> {
  const [host, port] = [proxy.server.replace(/^http:\/\//, '').split(':')[0]!, Number(proxy.server.split(':').at(-1))]
  const socket = net.connect({ host, port })
  socket.on('error', () => {})
  const status = await new Promise<string>((resolve, reject) => {
    let answer = ''
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1')
      if (answer.includes('\r\n')) resolve(answer.split('\r\n')[0]!)
    })
    socket.on('close', () => { reject(new Error(`closed before an answer: ${JSON.stringify(answer)}`)) })
    socket.write(request)
  })
  socket.resetAndDestroy()
  // Time for the reset to reach the proxy's side and be read there.
  await new Promise(resolve => setTimeout(resolve, 300))
  return status
}

describe('the egress proxy and a client that resets its connection', () => {
  it('after a 407 to CONNECT: nothing thrown, and the proxy still answers', async () => {
    expect(await askThenReset('CONNECT 127.0.0.1:9 HTTP/1.1\r\nhost: 127.0.0.1:9\r\n\r\n')).toMatch(/ 407 /)
    expect(uncaught).toEqual([])
    expect(await askThenReset('CONNECT 127.0.0.1:9 HTTP/1.1\r\nhost: 127.0.0.1:9\r\n\r\n')).toMatch(/ 407 /)
  })

  it('after a 407 to an upgrade: nothing thrown', async () => {
    expect(await askThenReset('GET http://127.0.0.1:9/ HTTP/1.1\r\nhost: 127.0.0.1:9\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n')).toMatch(/ 407 /)
    expect(uncaught).toEqual([])
  })
})
