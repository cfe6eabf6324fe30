// The hit lane's memo of POST /mcp calls (src/routes/mcp-memo.ts, src/routes/mcp-lane.ts): a body is kept only when
// the cut is the top-level id, a kept body parses (and is answered) as it would be with any other id, and the lane
// answers a repeated call under its own id with the bytes of a fresh check, never for a body that fails the checks.
import { Readable } from 'node:stream'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import type { AppContext } from '../../src/context.ts'
import { createMcpServer } from '../../src/mcp/server.ts'
import { callRequest, toolResult } from '../../src/mcp/calls.ts'
import { resultAnswer, resultResponse } from '../../src/mcp/transport.ts'
import { TOOLS } from '../../src/mcp/tools.ts'
import { idSlot, parseCall } from '../../src/routes/mcp-memo.ts'
import { createMcpLane } from '../../src/routes/mcp-lane.ts'
import type { McpQuick } from '../../src/routes/mcp.ts'

/** JSON.parse(text), with the member order checked too. */
function same (a: unknown, b: unknown): void {
  expect(JSON.stringify(a)).toBe(JSON.stringify(b))
  expect(a).toEqual(b)
}

const params = '"params":{"name":"microlink_metadata","arguments":{"url":"https://a.example/","prerender":false}}'

describe('the id slot of a body', () => {
  it('parses every body as JSON.parse does, and calls it exact only when the slot is the top-level id', () => {
    const cases: Array<[string, boolean]> = [
      [`{"jsonrpc":"2.0","id":1,"method":"tools/call",${params}}`, true],
      [`{"method":"tools/call",${params},"jsonrpc":"2.0","id":"a-b_c/d+e"}`, true],
      [`{ "jsonrpc" : "2.0" , "id" :\t-42 ,"method":"tools/call",${params} }`, true],
      // A nested "id" after the top-level one: the slot is the nested one, not exact.
      [`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"data":{"id":{"selector":"#a"}},"n":{"id":2}}}}`, false],
      // Two top-level ids: JSON.parse keeps the last, and so does the slot.
      ['{"id":1,"jsonrpc":"2.0","id":2}', true],
      // Ids the slot does not take: null, a fraction, an exponent, -0, a 16-digit integer, an escape, an object.
      ['{"jsonrpc":"2.0","id":null}', false],
      ['{"jsonrpc":"2.0","id":1.5}', false],
      ['{"jsonrpc":"2.0","id":1e3}', false],
      ['{"jsonrpc":"2.0","id":-0}', false],
      ['{"jsonrpc":"2.0","id":1234567890123456}', false],
      ['{"jsonrpc":"2.0","id":"a\\"b"}', false],
      ['{"jsonrpc":"2.0","id":{"x":1}}', false],
      // "id" inside a string value, and an escaped key that means id.
      ['{"jsonrpc":"2.0","id":3,"params":{"q":"\\"id\\":4"}}', true],
      ['{"jsonrpc":"2.0","\\u0069d":3,"params":{"q":"x"}}', false],
      ['[{"jsonrpc":"2.0","id":1}]', false],
      // A top-level id that spells the parse's own marker, with a nested "id" last: not exact (the marker would
      // swap the two ids), and parsed as it is.
      ['{"jsonrpc":"2.0","id":"\\u0000pagecast","method":"tools/call","params":{"name":"x","arguments":{"headers":{"id":"h1"}}}}', false],
      ['{"jsonrpc":"2.0","id":"\\u0000pagecast"}', false],
      ['{"jsonrpc":"2.0","method":"m"}', false]
    ]
    for (const [text, exact] of cases) {
      const parsed = parseCall(text, idSlot(text))
      same(parsed.message, JSON.parse(text))
      expect(parsed.exact, text).toBe(exact)
    }
    // Not JSON, with or without a slot: JSON.parse's error.
    for (const text of ['{"id":1,', '{"id":01}', '{"id":0 1}', '{"id":"a""b"}', '{"id":12.}']) {
      expect(() => parseCall(text, idSlot(text)), text).toThrow(SyntaxError)
    }
  })

  it('gives a body with another id in the slot the same message with that id, and the same key', () => {
    const kept = `{"method":"tools/call",${params},"jsonrpc":"2.0","id":7}`
    const slot = idSlot(kept)!
    expect(parseCall(kept, slot).exact).toBe(true)
    for (const literal of ['0', '8', '-3', '999999999999999', '""', '"x"', '"hyperid/+A-0"', '"é ü"']) {
      const text = `${kept.slice(0, slot.start)}${literal}${kept.slice(slot.end)}`
      const other = idSlot(text)!
      expect(other.key).toBe(slot.key)
      expect(other.id).toBe(JSON.parse(literal))
      same({ ...(JSON.parse(kept) as object), id: other.id }, JSON.parse(text))
    }
    // Another literal that is not an id the slot takes: another key (or none), never the kept one.
    for (const literal of ['null', '1.5', '-0', '"a\\u0062"', '[1]', '1234567890123456', 'true']) {
      const text = `${kept.slice(0, slot.start)}${literal}${kept.slice(slot.end)}`
      expect(idSlot(text)?.key, literal).not.toBe(slot.key)
    }
  })
})

describe('the memo in the lane', () => {
  const server = createMcpServer({ name: 'test', version: '0', tools: TOOLS })
  let checks = 0
  // The route's quick way (routes/mcp.ts) with a result made from the arguments and the query, and nothing held
  // for the URL `https://a.example/cold`.
  const quick: McpQuick = {
    check: (body) => {
      checks++
      const checked = server.check(body)
      if (checked === undefined) return undefined
      return { call: { prepared: checked.prepared, args: checked.args, mapped: callRequest(checked.prepared.tool, checked.args, {}) }, id: checked.id }
    },
    answer: (call, id, headers) => {
      const { query } = callRequest(call.prepared.tool, call.args, headers)
      return query.includes('cold') ? undefined : resultAnswer(toolResult({ args: call.args, query }), id)
    }
  }
  const ctx = { config: { trustProxy: false }, tenants: { byKey: () => ({ name: 'default', plan: {}, signing: [] }) }, log: { error: () => {} } } as unknown as AppContext
  type Outcome = { answered: string, length: string } | { handedOver: true }

  function lane (): (text: string, headers?: Record<string, string>) => Promise<Outcome> {
    const tryPost = createMcpLane({
      ctx,
      quick,
      send: (_req, res, tail, body) => { (res as unknown as { done: (o: Outcome) => void }).done({ answered: body, length: tail[tail.indexOf('content-length') + 1]! }) }
    })
    return async (text, headers = {}) => await new Promise<Outcome>((resolve) => {
      const req = Object.assign(Readable.from([Buffer.from(text)]), {
        url: '/mcp',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'x-api-key': 'k', ...headers }
      }) as unknown as IncomingMessage
      const res = { headersSent: false, done: resolve } as unknown as ServerResponse
      expect(tryPost(req, res, () => { resolve({ handedOver: true }) })).toBe(true)
    })
  }

  const body = (id: unknown, args: Record<string, unknown> = { url: 'https://a.example/', prerender: false }): string =>
    JSON.stringify({ method: 'tools/call', params: { name: 'microlink_metadata', arguments: args }, jsonrpc: '2.0', id })

  it('answers a call checked before under its new id, with the bytes of a fresh check, without checking it again', async () => {
    const memo = lane()
    checks = 0
    const ids: unknown[] = [1, 2, 'a', -7, 'hyperid/+A-0', 999999999999999, 3]
    for (const id of ids) {
      const fresh = await lane()(body(id))
      expect(await memo(body(id))).toEqual(fresh)
      expect(fresh).toMatchObject({ answered: resultResponse(toolResult({ args: { url: 'https://a.example/', prerender: false }, query: 'url=https%3A%2F%2Fa.example%2F&prerender=false' }), id as string) })
      const answered = (fresh as { answered: string, length: string })
      expect(answered.length).toBe(String(Buffer.byteLength(answered.answered)))
    }
    // One check for each fresh lane, one for the memo's first.
    expect(checks).toBe(ids.length + 1)
    // The POST's own x-api-header-* still reach the call's headers (here, its query's answer).
    const forwarded = await memo(body(4), { 'x-api-header-cold': '1' })
    expect(forwarded).toEqual(await lane()(body(4), { 'x-api-header-cold': '1' }))
  })

  it('never answers from the memo what the checks refuse, and hands over what is not in hand', async () => {
    const memo = lane()
    expect(await memo(body(1))).toMatchObject({ answered: expect.any(String) })
    const refused = [
      body(2, { url: 'https://a.example/', prerender: 'sometimes' }), // arguments the schema refuses
      body(2, { url: 'https://a.example/', prerender: false, unknown: 1 }),
      body(2, { url: 'https://a.example/', prerender: false, apiKey: 'k' }), // a key of its own: Fastify's
      body(null), body(1.5), body({ x: 1 }), body(true), // ids the SDK refuses, or the slot does not take
      body(2).replace('"tools/call"', '"tools/list"'),
      body(2).replace('microlink_metadata', 'microlink_nothing'),
      body(2).replace('"2.0"', '"1.0"'),
      body(2).replace('}}', '},"task":{}}'),
      body(2).replace('"id":2', '"id":2,"id":{}'),
      `[${body(2)}]`,
      body(2).slice(0, -1),
      body('constructor'),
      body(2, { url: 'https://a.example/cold' })
    ]
    for (const text of refused) {
      expect(await memo(text), text).toEqual({ handedOver: true })
      expect(await memo(text), text).toEqual({ handedOver: true })
      expect(await lane()(text), text).toEqual({ handedOver: true })
    }
    // Still answered under a valid id.
    expect(await memo(body(5))).toEqual(await lane()(body(5)))
  })
})
