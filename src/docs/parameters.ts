// Every query parameter under the name a client sends (docs/api.md §3, §12.2): the table's entries, their
// documented sub-keys as dotted names (`screenshot.type`, `pdf.margin.top`), user-named positions as
// patterns (`data.<field>.selector`), and the aliases. /openapi.json, /docs and docs/reference/parameters.md
// are rendered from these rows; nothing here is written by hand but the wording of derived lines.
import type { ErrorCode } from '../errors.ts'
import type { ShapeSpec } from '../schemas/grammar.ts'
import type { JsonSchema, ParamDoc } from '../schemas/param-doc.ts'
import type { Group } from '../schemas/param-types.ts'
import { OPTION_NAMES, specOf } from '../schemas/derived.ts'

export interface ParameterRow {
  /** As a client sends it; a user-chosen segment is shown as `<field>`, `<name>` or `<setting>`. */
  name: string
  /** For names with a user-chosen segment: a regular expression every such name matches. */
  pattern?: string
  /** The top-level parameter the row belongs to. */
  parent: string
  group: Group
  /** The type as a reader would write it. */
  type: string
  default?: string
  /** The code the free listener answers with, for pro-only parameters (and their sub-keys). */
  pro?: ErrorCode
  /** When the parameter forces the headless browser: `yes`, or the condition. */
  browser?: string
  /** The name this one is a legacy alias of. */
  aliasOf?: string
  description: string
  schema: JsonSchema
}

function typeLabel (doc: ParamDoc): string {
  if (doc.label !== undefined) return doc.label
  const { schema } = doc
  if (schema.enum !== undefined) return schema.enum.map((value) => String(value)).join(' | ')
  const types = schema.type === undefined ? ['any'] : Array.isArray(schema.type) ? schema.type : [schema.type as string]
  const bounds = schema.minimum !== undefined && schema.maximum !== undefined ? ` ${schema.minimum}–${schema.maximum}` : ''
  return types.join(' | ') + bounds
}

function defaultLabel (doc: ParamDoc): string | undefined {
  if (doc.shownDefault !== undefined) return doc.shownDefault
  return doc.schema.default === undefined ? undefined : String(doc.schema.default)
}

function patternOf (name: string): string | undefined {
  if (!name.includes('<')) return undefined
  const parts = name.split('.').map((seg) => /^<\w+>$/.test(seg) ? '[^.]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return `^${parts.join('\\.')}$`
}

type Base = Pick<ParameterRow, 'parent' | 'group' | 'pro'>

function row (name: string, doc: ParamDoc, base: Base, extra: Partial<ParameterRow> = {}): ParameterRow {
  const out: ParameterRow = { name, ...base, type: typeLabel(doc), description: doc.description, schema: doc.schema, ...extra }
  const shown = defaultLabel(doc)
  if (shown !== undefined) out.default = shown
  const pattern = patternOf(name)
  if (pattern !== undefined) out.pattern = pattern
  if (out.pro === undefined) delete out.pro
  return out
}

/** The documented positions under `shape`, depth first; a shape met again (rules nest) is listed, not entered. */
function subRows (prefix: string, shape: ShapeSpec, base: Base, seen: Set<ShapeSpec>): ParameterRow[] {
  const out: ParameterRow[] = []
  const visit = (name: string, kid: ShapeSpec): void => {
    if (kid.doc !== undefined) out.push(row(name, kid.doc, base))
    if (seen.has(kid)) return
    out.push(...subRows(name, kid, base, new Set([...seen, kid])))
  }
  for (const [key, kid] of Object.entries(shape.keys ?? {})) visit(`${prefix}.${key}`, kid)
  if (shape.map !== undefined) visit(`${prefix}.<${shape.map.label}>`, shape.map.child)
  return out
}

function buildRows (): ParameterRow[] {
  const out: ParameterRow[] = []
  for (const name of OPTION_NAMES) {
    const spec = specOf(name)
    if (spec.query === false) continue
    const base: Base = { parent: name, group: spec.group, pro: spec.gate?.code }
    const browser = spec.browser === undefined ? undefined : spec.browser.note ?? 'yes'
    out.push(row(name, spec.doc, base, browser === undefined ? {} : { browser }))
    out.push(...subRows(name, spec.shape, base, new Set([spec.shape])))
    for (const [alias, shape] of Object.entries(spec.aliases ?? {})) {
      if (shape.doc === undefined) continue
      const legacy = spec.shape.keys?.[alias] === shape
      out.push(legacy
        ? row(alias, { ...shape.doc, description: `Legacy alias of \`${name}.${alias}\`, read when \`${name}\` is on; the nested key wins.` }, base, { aliasOf: `${name}.${alias}` })
        : row(alias, shape.doc, base))
    }
  }
  return out
}

/** Every documented parameter, dotted names included, in table order. */
export const PARAMETER_ROWS: readonly ParameterRow[] = Object.freeze(buildRows())

/** The top-level parameters (no dots), for callers that want the list of names. */
export const PARAMETERS: readonly ParameterRow[] = PARAMETER_ROWS.filter((p) => !p.name.includes('.') && p.aliasOf === undefined)
