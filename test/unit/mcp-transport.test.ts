// One SDK Server for every POST (src/mcp/transport.ts, docs/api.md §15): concurrent POSTs that all use the same ids
// get their own answers, under their own ids; a POST's checks are the SDK transport's; cancellations stay within their
// POST; SSE answers carry one event per response; nothing stays pending; a lone call answered at once (`quick`) has
// the bytes of the full way.
import { describe, expect, it } from 'vitest'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { createMcpServer, type CallTool, type McpPost, type QuickCall } from '../../src/mcp/server.ts'
import { toolResult } from '../../src/mcp/calls.ts'
import { TOOLS } from '../../src/mcp/tools.ts'

const server = createMcpServer({ name: 'test', version: '0', tools: TOOLS })

function callMessage (id: number | string, url: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'microlink_metadata', arguments: { url } } }
}

function post (body: unknown, call: CallTool = async () => toolResult(null), extra: Partial<McpPost> = {}): ReturnType<typeof server.handle> {
  return server.handle({ body, sse: false, protocolVersion: undefined, call, ...extra })
}

const later = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

describe('one server for every POST', () => {
  it('gives each of many concurrent POSTs with the same id its own answer, whatever order they finish in', async () => {
    const count = 40
    const answers = await Promise.all(Array.from({ length: count }, async (_, i) => {
      // Each POST's call answers with its own URL, the first ones last.
      const call: CallTool = async (_prepared, args) => {
        await later((count - i) % 7)
        return toolResult({ url: args.url, post: i })
      }
      return await post(callMessage(1, `https://a.example/${i}`), call)
    }))
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(200)
      const message = JSON.parse(answer.body) as { id: unknown, result: { structuredContent: unknown, content: Array<{ text: string }> } }
      expect(message.id).toBe(1)
      expect(message.result.structuredContent).toEqual({ data: { url: `https://a.example/${i}`, post: i } })
      expect(JSON.parse(message.result.content[0]!.text)).toEqual({ url: `https://a.example/${i}`, post: i })
    })
    expect(server.pending).toBe(0)
  })

  it('answers a batch in the order of its requests, string and number ids kept as sent', async () => {
    const call: CallTool = async (_prepared, args) => {
      await later(String(args.url).endsWith('slow') ? 20 : 0)
      return toolResult(args.url)
    }
    const answer = await post([callMessage('a', 'https://a.example/slow'), { jsonrpc: '2.0', method: 'notifications/initialized' }, callMessage(7, 'https://a.example/fast')], call)
    expect(answer.status).toBe(200)
    const messages = JSON.parse(answer.body) as Array<{ id: unknown, result: { structuredContent: unknown } }>
    expect(messages.map(m => [m.id, m.result.structuredContent])).toEqual([['a', { data: 'https://a.example/slow' }], [7, { data: 'https://a.example/fast' }]])
  })

  it('writes the same JSON the SDK would serialize for results, errors and the tool list', async () => {
    const result = toolResult({ title: 'A "quoted" title', list: [1, null] }, { data: 'aGk=', mimeType: 'image/png' })
    const answer = await post(callMessage(3, 'https://a.example/'), async () => result)
    expect(answer.body).toBe(JSON.stringify({ result, jsonrpc: '2.0', id: 3 }))
    const list = await post({ jsonrpc: '2.0', id: 4, method: 'tools/list' })
    expect(JSON.parse(list.body)).toEqual({ jsonrpc: '2.0', id: 4, result: { tools: [...server.tools.values()].map(t => t.definition) } })
    const unknown = await post({ jsonrpc: '2.0', id: 5, method: 'nope/nope' })
    expect(JSON.parse(unknown.body)).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'Method not found' } })
    const thrown = await post(callMessage(6, 'https://a.example/'), async () => { throw new Error('boom') })
    expect(JSON.parse(thrown.body)).toMatchObject({ id: 6, error: { code: -32603, message: 'boom' } })
  })

  it('answers initialize alone, and refuses it in a batch, an unknown protocol version, and what is no JSON-RPC message', async () => {
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'c', version: '1' } } }
    const answer = await post(init, undefined, { protocolVersion: 'bogus' })
    expect(JSON.parse(answer.body)).toMatchObject({ id: 0, result: { protocolVersion: LATEST_PROTOCOL_VERSION, serverInfo: { name: 'test' }, capabilities: { tools: {} } } })
    expect(await post([init, callMessage(1, 'https://a.example/')])).toMatchObject({ status: 400, body: expect.stringContaining('Only one initialization request') })
    expect(await post(callMessage(1, 'https://a.example/'), undefined, { protocolVersion: '1999-01-01' })).toMatchObject({ status: 400, body: expect.stringContaining('Unsupported protocol version') })
    expect(await post(callMessage(1, 'https://a.example/'), undefined, { protocolVersion: LATEST_PROTOCOL_VERSION })).toMatchObject({ status: 200 })
    for (const bad of [{ jsonrpc: '1.0', id: 1, method: 'tools/list' }, { id: 1, method: 'tools/list' }, 'x', [{ jsonrpc: '2.0', id: 1, method: 'tools/list', extra: 1 }]]) {
      const refused = await post(bad)
      expect(refused.status).toBe(400)
      expect(JSON.parse(refused.body)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' }, id: null })
    }
    const tooMany = await post(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })))
    expect(tooMany).toMatchObject({ status: 400, body: expect.stringContaining('Batch must not exceed 100') })
  })

  it('answers 202 with no body when a POST holds notifications only', async () => {
    expect(await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual({ status: 202, contentType: undefined, body: '' })
  })

  it('cancels a request of the same POST only: a cancellation naming another POST\'s id stops nothing', async () => {
    let aborted = 0
    const slow: CallTool = async (_prepared, args, signal) => {
      await new Promise<void>((resolve) => {
        const stop = (): void => { aborted++; clearTimeout(timer); resolve() }
        const timer = setTimeout(resolve, 50)
        // A cancellation in the same POST may reach the server before the handler starts.
        if (signal.aborted) stop()
        else signal.addEventListener('abort', stop)
      })
      return toolResult(args.url)
    }
    const running = post(callMessage(1, 'https://a.example/other'), slow)
    // Another client cancels its own request 1, in a POST of its own, and then its request 2 in the same POST.
    expect(await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })).toMatchObject({ status: 202 })
    const cancelled = await post([callMessage(2, 'https://a.example/mine'), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }], slow)
    expect(cancelled).toEqual({ status: 202, contentType: undefined, body: '' })
    const other = await running
    expect(JSON.parse(other.body)).toMatchObject({ id: 1, result: { structuredContent: { data: 'https://a.example/other' } } })
    expect(aborted).toBe(1)
    await later(5)
    expect(server.pending).toBe(0)
  })

  it('answers a lone tools/call from `quick` when the answer waits on nothing, with the bytes of the full way', async () => {
    const result = toolResult({ title: 'A "quoted" title', list: [1, null] })
    const quickCalls: unknown[] = []
    const quick: QuickCall = async (prepared, args) => {
      quickCalls.push([prepared.tool.name, args])
      return result
    }
    const refused: CallTool = async () => { throw new Error('the full way was taken') }
    for (const id of [3, 'three']) {
      const full = await post(callMessage(id, 'https://a.example/'), async () => result)
      const fast = await post(callMessage(id, 'https://a.example/'), refused, { quick })
      expect(fast).toEqual(full)
      expect(fast.body).toBe(JSON.stringify({ result, jsonrpc: '2.0', id }))
    }
    // The arguments it gets are the ones the full way's call gets: coerced and validated.
    const lenient = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_metadata', arguments: { url: 'https://a.example/', prerender: 'FALSE' } } }
    await post(lenient, refused, { quick, protocolVersion: LATEST_PROTOCOL_VERSION })
    expect(quickCalls.at(-1)).toEqual(['microlink_metadata', { url: 'https://a.example/', prerender: false }])
  })

  it('leaves to the full way what `quick` does not answer, and every POST that is not one valid tools/call', async () => {
    let quickCalls = 0
    const quick: QuickCall = () => { quickCalls++; return undefined }
    const call: CallTool = async (_prepared, args) => toolResult(args.url)
    const answer = await post(callMessage(1, 'https://a.example/held-elsewhere'), call, { quick })
    expect(JSON.parse(answer.body)).toMatchObject({ id: 1, result: { structuredContent: { data: 'https://a.example/held-elsewhere' } } })
    expect(quickCalls).toBe(1)
    const never: QuickCall = () => { throw new Error('quick was asked') }
    const cases: Array<[unknown, Partial<McpPost>]> = [
      [[callMessage(1, 'https://a.example/')], {}],
      [callMessage(1, 'https://a.example/'), { sse: true }],
      [callMessage(1, 'https://a.example/'), { protocolVersion: '1999-01-01' }],
      [{ ...callMessage(1, 'https://a.example/'), extra: 1 }, {}],
      [{ ...callMessage(1, 'https://a.example/'), jsonrpc: '1.0' }, {}],
      [{ ...callMessage(1.5, 'https://a.example/') }, {}],
      [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: { url: 'https://a.example/' } } }, {}],
      [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_search', arguments: { url: 'https://a.example/' } } }, {}],
      [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_metadata', arguments: { url: 'no' } } }, {}],
      [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_metadata', arguments: { url: 'https://a.example/' }, task: { ttl: 1000 } } }, {}],
      [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {}]
    ]
    for (const [body, extra] of cases) {
      const full = await post(body, call, extra)
      expect(await post(body, call, { ...extra, quick: never })).toEqual(full)
    }
    // A quick call that throws before doing anything is the full way's to answer (here: its call throws the same).
    const throwing: QuickCall = () => { throw new URIError('URI malformed') }
    const thrown = await post(callMessage(8, 'https://a.example/'), async () => { throw new URIError('URI malformed') }, { quick: throwing })
    expect(JSON.parse(thrown.body)).toMatchObject({ id: 8, error: { code: -32603, message: 'URI malformed' } })
    expect(server.pending).toBe(0)
  })

  it('answers over SSE with one event per response', async () => {
    const answer = await post([callMessage(1, 'https://a.example/1'), callMessage(2, 'https://a.example/2')], async (_p, args) => toolResult(args.url), { sse: true })
    expect(answer.status).toBe(200)
    expect(answer.contentType).toBe('text/event-stream')
    const events = answer.body.split('\n\n').filter(Boolean)
    expect(events).toHaveLength(2)
    const data = events.map(event => {
      expect(event.startsWith('event: message\ndata: ')).toBe(true)
      return JSON.parse(event.slice('event: message\ndata: '.length)) as { id: number, result: { structuredContent: unknown } }
    }).sort((a, b) => a.id - b.id)
    expect(data.map(d => d.result.structuredContent)).toEqual([{ data: 'https://a.example/1' }, { data: 'https://a.example/2' }])
  })
})
