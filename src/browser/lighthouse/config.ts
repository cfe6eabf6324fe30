// What one Lighthouse run is told (docs/api.md §3.4 `insights.lighthouse`): the preset's config (Lighthouse's own
// files, `default` being its default config), the request's other keys merged into its settings, and time limits
// cut to the request's deadline. The worker resolves it as Lighthouse will before any browser starts (worker.ts), so
// a setting Lighthouse refuses (an unknown category, `skipAudits` and `onlyAudits` naming the same audit, an invalid
// `formFactor`) is the caller's 400, not a failed run. Only plain data: it is posted to the worker.
import type { LighthouseOptions } from '../../schemas/options.ts'

type Preset = LighthouseOptions['preset']
type Json = Record<string, unknown>

/** Lighthouse's config file of each preset (under lighthouse/core/config/), `default` being its default config. */
const PRESET_FILES: Record<Preset, string | undefined> = {
  default: undefined,
  desktop: 'desktop-config.js',
  perf: 'perf-config.js',
  experimental: 'experimental-config.js',
  full: 'full-config.js',
  'lr-desktop': 'lr-desktop-config.js',
  'lr-mobile': 'lr-mobile-config.js'
}

/** Lighthouse's defaults for the two waits that the deadline caps (core/config/constants.js). */
const DEFAULT_MAX_WAIT_FOR_FCP_MS = 30_000
const DEFAULT_MAX_WAIT_FOR_LOAD_MS = 45_000
/** Time kept for Lighthouse's audits and report once the page has loaded, out of the run's budget. */
const AUDIT_SHARE = 0.4

export interface RunConfig {
  /** The Lighthouse config (`extends: 'lighthouse:default'` and settings). */
  config: Json & { settings: Json }
  /** Lighthouse's flags: only what pagecast sets itself (never the request's keys: flags can load plugins). */
  flags: Json
}

function isPlainObject (value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `over` merged into `base`, objects key by key, anything else (arrays included) replaced. */
function merge (base: Json, over: Json): Json {
  const out: Json = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const current = out[key]
    out[key] = isPlainObject(current) && isPlainObject(value) ? merge(current, value) : value
  }
  return out
}

function positive (value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined
}

async function presetConfig (preset: Preset): Promise<Json> {
  const file = PRESET_FILES[preset]
  if (file === undefined) return { extends: 'lighthouse:default', settings: {} }
  const module = await import(`lighthouse/core/config/${file}`) as { default: Json }
  return module.default
}

/**
 * The config and flags of a run with `budgetMs` left: the preset, the request's settings over it, and the waits
 * for first paint and load capped so that the audits still have their share of the time.
 */
export async function runConfig (options: LighthouseOptions, budgetMs: number): Promise<RunConfig> {
  const preset = await presetConfig(options.preset)
  const presetSettings = isPlainObject(preset.settings) ? preset.settings : {}
  const settings = merge(presetSettings, options.settings)
  const loadBudget = Math.max(1000, Math.floor(budgetMs * (1 - AUDIT_SHARE)))
  settings.maxWaitForFcp = Math.min(positive(settings.maxWaitForFcp) ?? DEFAULT_MAX_WAIT_FOR_FCP_MS, loadBudget)
  settings.maxWaitForLoad = Math.min(positive(settings.maxWaitForLoad) ?? DEFAULT_MAX_WAIT_FOR_LOAD_MS, loadBudget)
  // Never from the request (the parser refuses them too): no artifacts on disk, nobody to click on.
  settings.auditMode = false
  settings.gatherMode = false
  settings.debugNavigation = false
  // Nor a page of the request's choosing between runs (the parser refuses `blankPage`): Lighthouse's default.
  settings.blankPage = 'about:blank'
  settings.output = options.output
  return {
    config: { ...preset, settings },
    flags: { output: options.output, logLevel: 'silent' }
  }
}
