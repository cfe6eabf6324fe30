import { describe, expect, it } from 'vitest'
import { devices as playwrightDevices } from 'playwright-core'
import {
  DEFAULT_DEVICE, desktopUserAgent, deviceNames, normalizeDeviceName, resolveDevice, suggestDevices
} from '../../src/schemas/devices.ts'

// docs/api.md §3.8, written out again here so the table in the module is checked against the contract.
const TABLE: Array<[string, number, number, number]> = [
  ['iPhone 15 Pro Max', 430, 739, 3], ['iPhone 15 Pro', 393, 659, 3], ['iPhone 15', 393, 659, 3],
  ['iPhone 14 Pro Max', 430, 739, 3], ['iPhone 14', 390, 663, 3], ['iPhone 13 Pro Max', 428, 926, 3],
  ['iPhone 13', 390, 844, 3], ['iPhone 12', 390, 844, 3], ['iPhone X', 375, 812, 3],
  ['Galaxy S9+', 320, 658, 4.5], ['Galaxy S8', 360, 740, 3], ['Galaxy Tab S4', 712, 1138, 2.25],
  ['Galaxy S5', 360, 640, 3], ['Pixel 5', 393, 851, 3], ['Pixel 4a (5G)', 353, 745, 3], ['Pixel 4', 353, 745, 3],
  ['Nexus 6P', 412, 732, 3.5], ['iPad', 768, 1024, 2], ['iPad (gen 6)', 768, 1024, 2], ['iPad Mini', 768, 1024, 2],
  ['iPad landscape', 1024, 768, 2], ['iPad Mini landscape', 1024, 768, 2], ['iPad (gen 7)', 810, 1080, 2],
  ['iPad Pro', 1024, 1366, 2], ['iPad Pro landscape', 1366, 1024, 2], ['iPad Pro 11', 834, 1194, 2],
  ['Galaxy Tab S4 landscape', 1138, 712, 2.25], ['Nexus 7', 600, 960, 2], ['Kindle Fire HDX', 800, 1280, 2],
  ['Nexus 10', 800, 1280, 2], ['Nexus 7 landscape', 960, 600, 2], ['Macbook Pro 13', 1280, 800, 2],
  ['Macbook Pro 15', 1440, 900, 2], ['Macbook Pro 16', 1536, 960, 2], ['iMac 21', 1920, 1080, 1],
  ['iMac 21 4K', 2048, 1152, 2], ['iMac 24 4.5K', 4480, 2520, 1], ['iMac 27', 2560, 1440, 1],
  ['iMac 27 5K', 2560, 1440, 2]
]
const DESKTOPS = new Set(['Macbook Pro 13', 'Macbook Pro 15', 'Macbook Pro 16', 'iMac 21', 'iMac 21 4K', 'iMac 24 4.5K', 'iMac 27', 'iMac 27 5K'])

describe('device table (docs/api.md §3.8)', () => {
  it.each(TABLE)('%s is %ix%i @%s', (name, width, height, dpr) => {
    const preset = resolveDevice(name)
    expect(preset?.name).toBe(name)
    expect(preset?.source).toBe('table')
    expect(preset?.viewport.width).toBe(width)
    expect(preset?.viewport.height).toBe(height)
    expect(preset?.viewport.deviceScaleFactor).toBe(dpr)
    const mobile = !DESKTOPS.has(name)
    expect(preset?.kind).toBe(mobile ? 'mobile' : 'desktop')
    expect(preset?.viewport.isMobile).toBe(mobile)
    expect(preset?.viewport.hasTouch).toBe(mobile)
    expect(preset?.viewport.isLandscape).toBe(name.endsWith('landscape'))
  })

  it('has the default device, a 1280x800 @2 desktop', () => {
    expect(DEFAULT_DEVICE).toBe('Macbook Pro 13')
    expect(resolveDevice(DEFAULT_DEVICE)?.viewport).toEqual({
      width: 1280, height: 800, deviceScaleFactor: 2, isMobile: false, hasTouch: false, isLandscape: false
    })
  })

  it('keeps iMac 21 at 1920x1080 (§13.14)', () => {
    expect(resolveDevice('imac 21')?.viewport.width).toBe(1920)
  })
})

describe('name matching', () => {
  it.each([
    ['macbook-pro-13', 'Macbook Pro 13'],
    ['MACBOOK PRO 13', 'Macbook Pro 13'],
    ['macbook_pro_13', 'Macbook Pro 13'],
    ['iphone15promax', 'iPhone 15 Pro Max'],
    ['  iPhone   X ', 'iPhone X'],
    ['galaxy s9+', 'Galaxy S9+'],
    ['galaxy-s9', 'Galaxy S9+'],
    ['pixel 4a 5g', 'Pixel 4a (5G)'],
    ['ipad-gen-7', 'iPad (gen 7)'],
    ['imac-24-4.5k', 'iMac 24 4.5K']
  ])('%j resolves to %s', (input, name) => {
    expect(resolveDevice(input)?.name).toBe(name)
  })

  it('rejects unknown and empty names', () => {
    expect(resolveDevice('toaster 3000')).toBeUndefined()
    expect(resolveDevice('')).toBeUndefined()
    expect(resolveDevice('---')).toBeUndefined()
  })

  it('accepts every name of Playwright\'s registry', () => {
    for (const name of Object.keys(playwrightDevices)) {
      const preset = resolveDevice(name)
      expect(preset, name).toBeDefined()
    }
  })

  it('takes Playwright\'s numbers for registry devices that are not in the table', () => {
    const descriptor = playwrightDevices['Pixel 7']
    const preset = resolveDevice('pixel 7')
    expect(preset?.source).toBe('playwright')
    expect(preset?.viewport).toEqual({
      width: descriptor.viewport.width,
      height: descriptor.viewport.height,
      deviceScaleFactor: descriptor.deviceScaleFactor,
      isMobile: true,
      hasTouch: true,
      isLandscape: false
    })
    expect(preset?.userAgent).toBe(descriptor.userAgent)
    expect(resolveDevice('Pixel 7 landscape')?.viewport.isLandscape).toBe(true)
    const desktop = resolveDevice('Desktop Chrome')
    expect(desktop?.kind).toBe('desktop')
    expect(desktop?.viewport.isMobile).toBe(false)
    expect(desktop?.viewport.isLandscape).toBe(false)
  })

  it('lets the table win over a registry device of the same name', () => {
    // Playwright's iPhone 14 is 390x664; the contract says 390x663.
    expect(resolveDevice('iPhone 14')?.viewport.height).toBe(663)
    expect(resolveDevice('iPhone 14')?.source).toBe('table')
  })

  it('lists each normalized name once', () => {
    const names = deviceNames()
    const keys = names.map(normalizeDeviceName)
    expect(new Set(keys).size).toBe(keys.length)
    expect(names.slice(0, TABLE.length)).toEqual(TABLE.map(([name]) => name))
  })

  it('returns a copy that callers may change', () => {
    const preset = resolveDevice('iPhone X')
    if (preset === undefined) throw new Error('missing preset')
    preset.viewport.width = 1
    expect(resolveDevice('iPhone X')?.viewport.width).toBe(375)
  })
})

describe('user agents', () => {
  it('gives mobile presets the user agent of the same Playwright device', () => {
    expect(resolveDevice('iPhone 15 Pro')?.userAgent).toBe(playwrightDevices['iPhone 15 Pro'].userAgent)
    expect(resolveDevice('Galaxy S9+')?.userAgent).toBe(playwrightDevices['Galaxy S9+'].userAgent)
    expect(resolveDevice('Nexus 7 landscape')?.userAgent).toBe(playwrightDevices['Nexus 7 landscape'].userAgent)
  })

  it('gives table-only presets a same-family user agent', () => {
    expect(resolveDevice('iPad')?.userAgent).toContain('iPad')
    expect(resolveDevice('iPad Pro')?.userAgent).toBe(playwrightDevices['iPad Pro 11'].userAgent)
    expect(resolveDevice('iPad Pro landscape')?.userAgent).toBe(playwrightDevices['iPad Pro 11 landscape'].userAgent)
    for (const [name] of TABLE) {
      if (DESKTOPS.has(name)) continue
      expect(resolveDevice(name)?.userAgent, name).toMatch(/^Mozilla\/5\.0 /)
    }
  })

  it('leaves desktop presets to desktopUserAgent', () => {
    for (const name of DESKTOPS) expect(resolveDevice(name)?.userAgent, name).toBeUndefined()
  })

  it('builds a macOS Chrome user agent from the running version', () => {
    const ua = desktopUserAgent('131.0.6778.33')
    expect(ua).toBe('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36')
    expect(desktopUserAgent('HeadlessChrome/140.0.7339.16')).toContain('Chrome/140.0.0.0')
    expect(desktopUserAgent('99')).toContain('Chrome/99.0.0.0')
    expect(desktopUserAgent('140.0.7339.16')).not.toContain('Headless')
  })
})

describe('suggestDevices', () => {
  it('suggests the closest names first, at most three', () => {
    const suggestions = suggestDevices('iphone 15 pro maxx')
    expect(suggestions[0]).toBe('iPhone 15 Pro Max')
    expect(suggestions.length).toBeLessThanOrEqual(3)
    expect(suggestDevices('macbok pro 13')[0]).toBe('Macbook Pro 13')
    expect(suggestDevices('iphone')).toHaveLength(3)
  })

  it('suggests nothing for names far from any device', () => {
    expect(suggestDevices('zzzzzzzzzzzzzzzz')).toEqual([])
    expect(suggestDevices('')).toEqual([])
    expect(suggestDevices('x'.repeat(10_000))).toEqual([])
  })
})
