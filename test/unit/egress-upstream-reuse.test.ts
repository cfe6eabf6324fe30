// The browser's egress proxy keeps upstream connections alive. A target that closes an idle connection just as the
// proxy sends the next request on it (its keep-alive timeout racing the reuse) fails that request before any answer;
// the proxy sends a request without a body once more on a new connection, as browsers do, instead of answering 502
// (which the browser would show as an unreachable page). Here the target answers the first request of each
// connection and drops the connection at the second.
import http from 'node:http'
import net from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createEgressProxy } from '../../src/browser/egress-proxy.ts'
import type { EgressProxy } from '../../src/browser/egress-types.ts'
import { createAddressGuard } from '../../src/net/guard.ts'

let target: net.Server
let targetPort: number
let proxy: EgressProxy
let connections = 0

beforeEach(async () => {
  connections = 0
  target = net.createServer((socket) => {
    connections += 1
    let requests = 0
    let buffered = ''
    socket.on('error', () => {})
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1')
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4)
        requests += 1
        if (requests === 1) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok')
        else socket.destroy()
      }
    })
  })
  await new Promise<void>(resolve => target.listen(0, '127.0.0.1', resolve))
  targetPort = (target.address() as net.AddressInfo).port
  proxy = await createEgressProxy({ guard: createAddressGuard({ allowPrivateHosts: [`127.0.0.1:${targetPort}`] }) })
})
afterEach(async () => {
  await proxy.close()
  await new Promise(resolve => target.close(resolve))
})

/** One request through the proxy (absolute form, as a browser sends it); the status and body. */
async function viaProxy (method: string, path: string, body?: string): Promise<{ status: number, body: string }> {
  const [host, port] = proxy.server.replace(/^http:\/\//, '').split(':') as [string, string]
  return await new Promise((resolve, reject) => {
    const req = http.request({ host, port: Number(port), method, path: `http://127.0.0.1:${targetPort}${path}`, agent: false, headers: body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) } })
    req.on('response', (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => { text += chunk.toString() })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: text }) })
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('the egress proxy and a kept-alive upstream connection the target dropped', () => {
  it('sends a GET once more on a new connection: the page loads', async () => {
    expect(await viaProxy('GET', '/a')).toEqual({ status: 200, body: 'ok' })
    // Sent on the kept-alive connection, which the target drops: sent again on a second one.
    expect(await viaProxy('GET', '/b')).toEqual({ status: 200, body: 'ok' })
    expect(connections).toBe(2)
  })

  it('does not send a request with a body again: 502, as before', async () => {
    expect(await viaProxy('GET', '/a')).toEqual({ status: 200, body: 'ok' })
    expect((await viaProxy('POST', '/form', 'x=1')).status).toBe(502)
    expect(connections).toBe(1)
  })
})
