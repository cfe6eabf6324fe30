import { describe, expect, expectTypeOf, it } from 'vitest'
import { GROUP_KEYS, groupOptions } from '../../src/schemas/option-groups.ts'
import type { CacheOptions, KeysOfGroup, ReplyOptions, StepOptions, TargetOptions } from '../../src/schemas/option-groups.ts'
import { GROUPS } from '../../src/schemas/param-types.ts'
import type { ExtractOptions } from '../../src/schemas/options.ts'
import { parseQuery } from '../../src/schemas/query.ts'

const PRO = { plan: 'pro' as const, headers: {}, maxTimeout: 28_000 }

// Every member of ExtractOptions, written out: the type assertion below fails to compile if the interface
// gains a member that is not listed here, so the runtime checks see all of them.
const ALL_KEYS = [
  'url', 'meta', 'data', 'filter', 'embed', 'screenshot', 'pdf', 'video', 'audio', 'iframe', 'insights', 'palette', 'ping',
  'function', 'device', 'viewport', 'colorScheme', 'mediaType', 'javascript', 'animations', 'adblock', 'headers', 'prerender',
  'waitUntil', 'waitForSelector', 'waitForTimeout', 'timeout', 'click', 'scroll', 'actions', 'modules', 'scripts', 'styles', 'retry',
  'proxy', 'ttl', 'staleTtl', 'force', 'cacheKey', 'filename', 'args'
] as const satisfies ReadonlyArray<keyof ExtractOptions>

describe('option groups', () => {
  it('put every ExtractOptions key in exactly one group', () => {
    expectTypeOf<(typeof ALL_KEYS)[number]>().toEqualTypeOf<keyof ExtractOptions>()
    expectTypeOf<KeysOfGroup<(typeof GROUPS)[number]>>().toEqualTypeOf<keyof ExtractOptions>()
    const seen = GROUPS.flatMap((group) => GROUP_KEYS[group] as readonly string[])
    expect([...seen].sort()).toEqual([...ALL_KEYS].sort())
    expect(new Set(seen).size).toBe(seen.length)
  })

  it('are derived as types from the table', () => {
    expectTypeOf<StepOptions>().toEqualTypeOf<Pick<ExtractOptions, 'waitUntil' | 'waitForSelector' | 'waitForTimeout' | 'click' | 'scroll' | 'actions' | 'modules' | 'scripts' | 'styles'>>()
    expectTypeOf<CacheOptions>().toEqualTypeOf<Pick<ExtractOptions, 'ttl' | 'staleTtl' | 'force' | 'cacheKey'>>()
    expectTypeOf<ReplyOptions>().toEqualTypeOf<Pick<ExtractOptions, 'filter' | 'embed' | 'filename'>>()
    expectTypeOf<TargetOptions>().toEqualTypeOf<Pick<ExtractOptions, 'url' | 'prerender' | 'proxy' | 'headers' | 'timeout' | 'retry'>>()
  })

  it('split parsed options into frozen picks that put back together give the same options', () => {
    const options = parseQuery('url=https://example.com&screenshot.type=jpeg&waitForSelector=h1&ttl=1h&embed=title&headers.x-a=1&device=iphone 15', PRO)
    const groups = groupOptions(options)
    expect(Object.keys(groups)).toEqual([...GROUPS])
    for (const group of GROUPS) expect(Object.isFrozen(groups[group])).toBe(true)
    expect(Object.assign({}, ...Object.values(groups))).toEqual(options)
    expect(groups.steps).toEqual({ waitUntil: ['auto'], waitForSelector: 'h1', click: [], actions: [], modules: [], scripts: [], styles: [] })
    expect(groups.reply).toEqual({ embed: 'title' })
    expect(groups.cache).toEqual({ ttl: 3_600_000, staleTtl: false, force: false })
    expect('filter' in groups.reply).toBe(false)
  })
})
