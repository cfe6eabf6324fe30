// A browser context is shared by jobs of equal keys (browser/pool/lease.ts), so its key must change with every setting
// the context is created with. The key is made of the context options themselves (contextKeyOf), not of a second list.
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { BrowserContextOptions } from 'playwright-core'
import { contextKeyOf, contextOptionsFor, pageEmulationKey, profileKey, type ColorScheme, type Emulation } from '../../src/browser/emulation.ts'
import type { ColorScheme as SchemaColorScheme } from '../../src/schemas/options.ts'

const BASE: Emulation = {
  viewport: { width: 1280, height: 800 },
  deviceScaleFactor: 1,
  isMobile: false,
  hasTouch: false,
  userAgent: 'Mozilla/5.0 test',
  javaScriptEnabled: true,
  colorScheme: 'light',
  reducedMotion: false,
  extraHTTPHeaders: {}
}

/** One change of each Emulation field; a new field without a row here fails the completeness test below. */
const CHANGES: { [K in keyof Required<Emulation>]: Partial<Emulation> } = {
  viewport: { viewport: { width: 1280, height: 801 } },
  deviceScaleFactor: { deviceScaleFactor: 2 },
  isMobile: { isMobile: true },
  hasTouch: { hasTouch: true },
  userAgent: { userAgent: 'Mozilla/5.0 other' },
  javaScriptEnabled: { javaScriptEnabled: false },
  colorScheme: { colorScheme: 'dark' },
  reducedMotion: { reducedMotion: true },
  extraHTTPHeaders: { extraHTTPHeaders: { 'accept-language': 'de' } },
  locale: { locale: 'de-DE' }
}

describe('the context key is derived from the context options', () => {
  it('is the key of the options the context is created with', () => {
    expect(profileKey(BASE)).toBe(contextKeyOf(contextOptionsFor(BASE)))
  })

  it('changes when any field of the options changes, a field it never heard of included', () => {
    const options = contextOptionsFor(BASE)
    const key = contextKeyOf(options)
    for (const [name, value] of Object.entries(options)) {
      const changed = { ...options, [name]: typeof value === 'number' ? value + 1 : typeof value === 'boolean' ? !value : { changed: name } }
      expect(contextKeyOf(changed as BrowserContextOptions), name).not.toBe(key)
    }
    // A setting contextOptionsFor may gain one day (here Playwright's timezoneId and permissions).
    expect(contextKeyOf({ ...options, timezoneId: 'Europe/Berlin' })).not.toBe(key)
    expect(contextKeyOf({ ...options, permissions: ['geolocation'] })).not.toBe(key)
  })

  it('does not depend on the order of the fields', () => {
    const options = contextOptionsFor(BASE)
    const reversed = Object.fromEntries(Object.entries(options).reverse()) as BrowserContextOptions
    expect(contextKeyOf(reversed)).toBe(contextKeyOf(options))
    expect(contextKeyOf({ ...options, viewport: { height: 800, width: 1280 } })).toBe(contextKeyOf(options))
  })

  it('every Emulation field reaches the context key or the page\'s emulation key', () => {
    expect(Object.keys(CHANGES).sort()).toEqual([...Object.keys(BASE), 'locale'].sort())
    for (const [field, change] of Object.entries(CHANGES)) {
      const changed = { ...BASE, ...change }
      const differs = profileKey(changed) !== profileKey(BASE) || pageEmulationKey(changed) !== pageEmulationKey(BASE)
      expect(differs, field).toBe(true)
    }
  })

  it('a forwarded user-agent header is part of the context key (it replaces the device\'s)', () => {
    expect(profileKey({ ...BASE, extraHTTPHeaders: { 'User-Agent': 'custom' } })).not.toBe(profileKey(BASE))
  })
})

describe('ColorScheme', () => {
  it('is the schema\'s (a change to either does not compile: CI type-checks the tests)', () => {
    expectTypeOf<ColorScheme>().toEqualTypeOf<SchemaColorScheme>()
  })
})
