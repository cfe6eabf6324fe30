// Device presets (docs/api.md §3.8): our own table, plus every name in Playwright's device registry.
// Names match ignoring case, spaces and punctuation. Mobile and tablet presets borrow the user agent of
// the same (or nearest same-family) Playwright device; desktop presets send a macOS Chrome user agent
// built from the running Chromium's version (desktopUserAgent).
import { devices as playwrightDevices } from 'playwright-core'

export interface Viewport {
  width: number
  height: number
  deviceScaleFactor: number
  isMobile: boolean
  hasTouch: boolean
  isLandscape: boolean
}

export interface DevicePreset {
  /** Canonical spelling, as the table (or Playwright's registry) writes it. */
  name: string
  kind: 'desktop' | 'mobile'
  viewport: Viewport
  /**
   * The user agent to send. Absent for our desktop presets, whose user agent depends on the running
   * browser: use `desktopUserAgent(browser.version())`.
   */
  userAgent?: string
  /** Where the preset comes from: our table, or Playwright's registry. */
  source: 'table' | 'playwright'
}

export const DEFAULT_DEVICE = 'Macbook Pro 13'

interface TableRow {
  name: string
  width: number
  height: number
  dpr: number
  /** The Playwright device whose user agent a mobile/tablet preset uses; absent for desktops. */
  uaFrom?: string
}

// docs/api.md §3.8, every row, exact numbers.
const TABLE: readonly TableRow[] = Object.freeze([
  { name: 'iPhone 15 Pro Max', width: 430, height: 739, dpr: 3, uaFrom: 'iPhone 15 Pro Max' },
  { name: 'iPhone 15 Pro', width: 393, height: 659, dpr: 3, uaFrom: 'iPhone 15 Pro' },
  { name: 'iPhone 15', width: 393, height: 659, dpr: 3, uaFrom: 'iPhone 15' },
  { name: 'iPhone 14 Pro Max', width: 430, height: 739, dpr: 3, uaFrom: 'iPhone 14 Pro Max' },
  { name: 'iPhone 14', width: 390, height: 663, dpr: 3, uaFrom: 'iPhone 14' },
  { name: 'iPhone 13 Pro Max', width: 428, height: 926, dpr: 3, uaFrom: 'iPhone 13 Pro Max' },
  { name: 'iPhone 13', width: 390, height: 844, dpr: 3, uaFrom: 'iPhone 13' },
  { name: 'iPhone 12', width: 390, height: 844, dpr: 3, uaFrom: 'iPhone 12' },
  { name: 'iPhone X', width: 375, height: 812, dpr: 3, uaFrom: 'iPhone X' },
  { name: 'Galaxy S9+', width: 320, height: 658, dpr: 4.5, uaFrom: 'Galaxy S9+' },
  { name: 'Galaxy S8', width: 360, height: 740, dpr: 3, uaFrom: 'Galaxy S8' },
  { name: 'Galaxy Tab S4', width: 712, height: 1138, dpr: 2.25, uaFrom: 'Galaxy Tab S4' },
  { name: 'Galaxy S5', width: 360, height: 640, dpr: 3, uaFrom: 'Galaxy S5' },
  { name: 'Pixel 5', width: 393, height: 851, dpr: 3, uaFrom: 'Pixel 5' },
  { name: 'Pixel 4a (5G)', width: 353, height: 745, dpr: 3, uaFrom: 'Pixel 4a (5G)' },
  { name: 'Pixel 4', width: 353, height: 745, dpr: 3, uaFrom: 'Pixel 4' },
  { name: 'Nexus 6P', width: 412, height: 732, dpr: 3.5, uaFrom: 'Nexus 6P' },
  { name: 'iPad', width: 768, height: 1024, dpr: 2, uaFrom: 'iPad (gen 6)' },
  { name: 'iPad (gen 6)', width: 768, height: 1024, dpr: 2, uaFrom: 'iPad (gen 6)' },
  { name: 'iPad Mini', width: 768, height: 1024, dpr: 2, uaFrom: 'iPad Mini' },
  { name: 'iPad landscape', width: 1024, height: 768, dpr: 2, uaFrom: 'iPad (gen 6) landscape' },
  { name: 'iPad Mini landscape', width: 1024, height: 768, dpr: 2, uaFrom: 'iPad Mini landscape' },
  { name: 'iPad (gen 7)', width: 810, height: 1080, dpr: 2, uaFrom: 'iPad (gen 7)' },
  { name: 'iPad Pro', width: 1024, height: 1366, dpr: 2, uaFrom: 'iPad Pro 11' },
  { name: 'iPad Pro landscape', width: 1366, height: 1024, dpr: 2, uaFrom: 'iPad Pro 11 landscape' },
  { name: 'iPad Pro 11', width: 834, height: 1194, dpr: 2, uaFrom: 'iPad Pro 11' },
  { name: 'Galaxy Tab S4 landscape', width: 1138, height: 712, dpr: 2.25, uaFrom: 'Galaxy Tab S4 landscape' },
  { name: 'Nexus 7', width: 600, height: 960, dpr: 2, uaFrom: 'Nexus 7' },
  { name: 'Kindle Fire HDX', width: 800, height: 1280, dpr: 2, uaFrom: 'Kindle Fire HDX' },
  { name: 'Nexus 10', width: 800, height: 1280, dpr: 2, uaFrom: 'Nexus 10' },
  { name: 'Nexus 7 landscape', width: 960, height: 600, dpr: 2, uaFrom: 'Nexus 7 landscape' },
  { name: 'Macbook Pro 13', width: 1280, height: 800, dpr: 2 },
  { name: 'Macbook Pro 15', width: 1440, height: 900, dpr: 2 },
  { name: 'Macbook Pro 16', width: 1536, height: 960, dpr: 2 },
  { name: 'iMac 21', width: 1920, height: 1080, dpr: 1 },
  { name: 'iMac 21 4K', width: 2048, height: 1152, dpr: 2 },
  { name: 'iMac 24 4.5K', width: 4480, height: 2520, dpr: 1 },
  { name: 'iMac 27', width: 2560, height: 1440, dpr: 1 },
  { name: 'iMac 27 5K', width: 2560, height: 1440, dpr: 2 }
])

/** The matching key of a device name: lower case, letters and digits only. */
export function normalizeDeviceName (name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '')
}

function isLandscapeName (name: string): boolean {
  return /\blandscape$/i.test(name.trim())
}

type PlaywrightDescriptor = (typeof playwrightDevices)[keyof typeof playwrightDevices]

function playwrightEntries (): Array<[string, PlaywrightDescriptor]> {
  return Object.entries(playwrightDevices) as Array<[string, PlaywrightDescriptor]>
}

/** A user agent from the nearest Playwright device of the same family (the first word of the name). */
function familyUserAgent (target: string): string | undefined {
  const exact = (playwrightDevices as Record<string, PlaywrightDescriptor | undefined>)[target]
  if (exact !== undefined) return exact.userAgent
  const family = target.split(/\s+/)[0]?.toLowerCase() ?? ''
  const landscape = isLandscapeName(target)
  let best: { ua: string, distance: number } | undefined
  for (const [name, descriptor] of playwrightEntries()) {
    if (!descriptor.isMobile) continue
    if ((name.split(/\s+/)[0]?.toLowerCase() ?? '') !== family) continue
    if (isLandscapeName(name) !== landscape) continue
    const distance = editDistance(normalizeDeviceName(name), normalizeDeviceName(target))
    if (best === undefined || distance < best.distance) best = { ua: descriptor.userAgent, distance }
  }
  return best?.ua
}

function buildPresets (): ReadonlyMap<string, DevicePreset> {
  const presets = new Map<string, DevicePreset>()
  for (const row of TABLE) {
    const mobile = row.uaFrom !== undefined
    const landscape = mobile && isLandscapeName(row.name)
    const preset: DevicePreset = {
      name: row.name,
      kind: mobile ? 'mobile' : 'desktop',
      viewport: {
        width: row.width,
        height: row.height,
        deviceScaleFactor: row.dpr,
        isMobile: mobile,
        hasTouch: mobile,
        isLandscape: landscape
      },
      source: 'table'
    }
    if (row.uaFrom !== undefined) {
      const ua = familyUserAgent(row.uaFrom)
      if (ua !== undefined) preset.userAgent = ua
    }
    presets.set(normalizeDeviceName(row.name), Object.freeze(preset))
  }
  for (const [name, descriptor] of playwrightEntries()) {
    const key = normalizeDeviceName(name)
    if (presets.has(key)) continue
    presets.set(key, Object.freeze({
      name,
      kind: descriptor.isMobile ? 'mobile' : 'desktop',
      viewport: {
        width: descriptor.viewport.width,
        height: descriptor.viewport.height,
        deviceScaleFactor: descriptor.deviceScaleFactor,
        isMobile: descriptor.isMobile,
        hasTouch: descriptor.hasTouch,
        isLandscape: descriptor.isMobile && isLandscapeName(name)
      },
      userAgent: descriptor.userAgent,
      source: 'playwright'
    }))
  }
  return presets
}

// Built once from constant data and never changed afterwards.
const PRESETS: ReadonlyMap<string, DevicePreset> = buildPresets()

/** Every accepted canonical device name: the table first, then Playwright's registry. */
export function deviceNames (): string[] {
  return [...PRESETS.values()].map((preset) => preset.name)
}

/** The preset for a device name (ignoring case, spaces and punctuation), or undefined. */
export function resolveDevice (name: string): DevicePreset | undefined {
  const key = normalizeDeviceName(name)
  if (key === '') return undefined
  const preset = PRESETS.get(key)
  if (preset === undefined) return undefined
  return { ...preset, viewport: { ...preset.viewport } }
}

/** Levenshtein distance, two rows. */
function editDistance (a: string, b: string): number {
  if (a === b) return 0
  if (a.length === 0) return b.length
  if (b.length === 0) return a.length
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  let current = new Array<number>(b.length + 1).fill(0)
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
    }
    [previous, current] = [current, previous]
  }
  return previous[b.length] ?? 0
}

// Longer inputs cannot be a typo of a device name; also keeps the distance computation cheap.
const MAX_SUGGEST_INPUT = 48

/** Up to 3 known device names close to `name` (edit distance on the normalized form), closest first. */
export function suggestDevices (name: string): string[] {
  const key = normalizeDeviceName(name)
  if (key === '' || key.length > MAX_SUGGEST_INPUT) return []
  const limit = Math.max(2, Math.ceil(key.length * 0.4))
  const scored: Array<{ name: string, distance: number, order: number }> = []
  let order = 0
  for (const [candidateKey, preset] of PRESETS) {
    const distance = editDistance(key, candidateKey)
    if (distance <= limit) scored.push({ name: preset.name, distance, order })
    order++
  }
  scored.sort((a, b) => a.distance - b.distance || a.order - b.order)
  return scored.slice(0, 3).map((entry) => entry.name)
}

/**
 * The macOS Chrome user agent of the desktop presets, carrying the running Chromium's major version in
 * the reduced form Chrome itself sends (`Chrome/131.0.0.0`). Accepts `131.0.6778.33`,
 * `HeadlessChrome/131.0.6778.33` or `131`.
 */
export function desktopUserAgent (chromiumVersion: string): string {
  const major = /(\d+)(?:\.\d+)*\s*$/.exec(chromiumVersion.trim())?.[1] ?? /(\d+)/.exec(chromiumVersion)?.[1] ?? '0'
  return `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`
}
