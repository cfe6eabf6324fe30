// The detectors of docs/api.md §3.1 and §3.4 that take sub-keys: `meta` (field choice), `iframe` (oEmbed
// parameters), `insights` (technologies, Lighthouse and its settings) and `ping` (per media kind).
import { LIGHTHOUSE_OUTPUTS, LIGHTHOUSE_PAGE_SETTINGS, LIGHTHOUSE_PRESETS, LIGHTHOUSE_RESERVED_SETTINGS, META_FIELDS, PING_KINDS } from './options.ts'
import type { ExtractOptions, InsightsOptions, LighthouseOptions, MetaField, PingOptions } from './options.ts'
import { MAX_JSON_DEPTH, newNode } from './grammar.ts'
import type { Node } from './grammar.ts'
import { fail } from './messages.ts'
import { bool, checkName, enumValue, hasKids, scalar, sortedKids, sub, switchState, toBool, toNumber } from './readers.ts'
import { INSIGHTS_SHAPE, LIGHTHOUSE_SHAPE, META_SHAPE, PING_SHAPE } from './shapes.ts'

export function readMeta (node: Node | undefined): ExtractOptions['meta'] {
  const state = switchState(node, 'meta')
  if (state === 'off') return false
  if (node === undefined || !hasKids(node)) return { fields: [...META_FIELDS] }
  const chosen = new Map<MetaField, boolean>()
  for (const field of META_FIELDS) {
    const kid = sub(node, META_SHAPE, field)
    if (kid === undefined) continue
    const param = `meta.${field}`
    if (hasKids(kid) || kid.self?.kind === 'struct') {
      // A sub-object (`meta.logo.square=true`) counts as true, unless the field itself says false.
      const own = kid.self?.kind === 'value' ? toBool(kid.self.value, param, true) : true
      chosen.set(field, own)
    } else {
      chosen.set(field, bool(kid, param, true))
    }
  }
  const anyTrue = [...chosen.values()].some(Boolean)
  const fields = META_FIELDS.filter((field) => anyTrue ? chosen.get(field) === true : chosen.get(field) !== false)
  return fields.length === 0 ? false : { fields }
}

export function readIframe (node: Node | undefined): ExtractOptions['iframe'] {
  if (switchState(node, 'iframe') !== 'on' || node === undefined) return false
  const params: Record<string, string> = {}
  for (const [name, kid] of sortedKids(node)) {
    const param = `iframe.${name}`
    checkName(name, param, 'EINVALQUERY')
    const value = scalar(kid, param)
    if (value === undefined || value === null) continue
    params[name] = String(value)
  }
  return params
}

function settingsValue (node: Node, param: string, depth: number): unknown {
  if (depth > MAX_JSON_DEPTH) fail('EINVALQUERY', param, `The \`${param}\` is nested too deeply.`)
  if (!hasKids(node)) {
    if (node.self?.kind === 'struct') return node.self.array ? [] : {}
    const value = node.self?.value
    if (typeof value !== 'string') return value ?? null
    const lower = value.trim().toLowerCase()
    if (lower === 'true' || lower === '') return true
    if (lower === 'false') return false
    const n = toNumber(value)
    return n === undefined ? value : n
  }
  const keys = sortedKids(node).map(([key]) => key)
  if (keys.every((key) => /^\d+$/.test(key)) && !(node.self?.kind === 'struct' && !node.self.array)) {
    keys.sort((a, b) => Number(a) - Number(b))
    return keys.map((key) => settingsValue(node.kids.get(key) ?? newNode(), `${param}.${key}`, depth + 1))
  }
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    checkName(key, `${param}.${key}`, 'EINVALQUERY')
    out[key] = settingsValue(node.kids.get(key) ?? newNode(), `${param}.${key}`, depth + 1)
  }
  return out
}

function parseLighthouse (node: Node | undefined): LighthouseOptions | false {
  if (switchState(node, 'insights.lighthouse') === 'off') return false
  const out: LighthouseOptions = {
    output: enumValue(sub(node, LIGHTHOUSE_SHAPE, 'output'), 'insights.lighthouse.output', LIGHTHOUSE_OUTPUTS, 'json'),
    preset: enumValue(sub(node, LIGHTHOUSE_SHAPE, 'preset'), 'insights.lighthouse.preset', LIGHTHOUSE_PRESETS, 'default'),
    settings: {}
  }
  for (const [name, kid] of sortedKids(node)) {
    if (name === 'output' || name === 'preset') continue
    const param = `insights.lighthouse.${name}`
    checkName(name, param, 'EINVALQUERY')
    if ((LIGHTHOUSE_RESERVED_SETTINGS as readonly string[]).includes(name)) {
      fail('EINVALQUERY', param, `The \`${param}\` setting is not accepted: pagecast runs Lighthouse on its own terms.`)
    }
    if ((LIGHTHOUSE_PAGE_SETTINGS as readonly string[]).includes(name)) {
      fail('EINVALQUERY', param, `The \`${param}\` setting is not accepted: it names a page for Lighthouse's browser to load, which only ever loads the target.`)
    }
    out.settings[name] = settingsValue(kid, param, 0)
  }
  return out
}

export function readInsights (node: Node | undefined): InsightsOptions | false {
  if (switchState(node, 'insights') !== 'on' || node === undefined) return false
  return {
    technologies: bool(sub(node, INSIGHTS_SHAPE, 'technologies'), 'insights.technologies', true),
    lighthouse: parseLighthouse(sub(node, INSIGHTS_SHAPE, 'lighthouse'))
  }
}

export function readPing (node: Node | undefined): PingOptions {
  const state = switchState(node, 'ping')
  const out = {} as PingOptions
  for (const kind of PING_KINDS) {
    out[kind] = state === 'off' ? false : bool(sub(node, PING_SHAPE, kind), `ping.${kind}`, true)
  }
  return out
}
