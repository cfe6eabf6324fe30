// The tools' input schemas (docs/api.md §15), generated from the parameter table (schemas/parameters.ts): a property
// named after a query parameter takes that parameter's JSON Schema and description, and its documented sub-keys
// become nested properties, so a tool's inputs cannot drift from the API's parameters. The few properties that are
// no parameter of their own (a rule's keys, oEmbed sizes, Lighthouse settings) come from the shapes their values go
// under. Lenient inputs (`"true"`, a JSON string of an object) are coerced here before validation.
import { MAX_JSON_DEPTH, type ShapeSpec } from '../schemas/grammar.ts'
import { jsonDeeperThan } from '../util/json-depth.ts'
import type { JsonSchema, ParamDoc } from '../schemas/param-doc.ts'
import type { OptionName } from '../schemas/derived.ts'
import { specOf } from '../schemas/derived.ts'
import { IFRAME_SHAPE, LIGHTHOUSE_SHAPE, RULE } from '../schemas/shapes.ts'

/** A JSON Schema object as the MCP `inputSchema` carries it. */
export type Schema = Record<string, unknown>

/** The types a schema takes: its `type`, or the `type` of each `anyOf` branch (portableSchema's spelling). */
function typesOf (schema: Schema): string[] {
  const type = schema.type
  if (typeof type === 'string') return [type]
  if (Array.isArray(type)) return type as string[]
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).flatMap((branch) => typeof branch.type === 'string' ? [branch.type] : [])
  return []
}

/** What a position that names no type of its own takes (a Lighthouse setting's value): any value but null. */
const ANY_VALUE_TYPES = ['string', 'number', 'boolean', 'object', 'array']
/** Keywords that constrain a value (the MCP inspector's `untyped-schema` rule looks for one of them). */
const CONSTRAINING = ['type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'not', '$ref', 'properties', 'additionalProperties',
  'patternProperties', 'items', 'prefixItems', 'required', 'pattern', 'format', 'minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs']
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems']
const SUBSCHEMAS = ['items', 'additionalProperties', 'contains', 'not', 'propertyNames']

/**
 * A tool schema as every MCP client takes it (the MCP inspector's `--strict` portability checks): a `type` array
 * becomes `anyOf` branches of one `type` each (clients that map tool schemas onto a single-`type` dialect, as for
 * Gemini's function declarations, reject a type array), the type-specific keywords staying beside it, where they
 * apply to values of their type only, as before; a position that constrains nothing says which values it takes.
 * The same values validate as before. A new object; the input is left as it is.
 */
export function portableSchema (schema: Schema): Schema {
  const out: Schema = { ...schema }
  for (const key of SUBSCHEMA_MAPS) {
    const map = out[key]
    if (map !== null && typeof map === 'object' && !Array.isArray(map)) {
      out[key] = Object.fromEntries(Object.entries(map as Record<string, Schema>).map(([name, kid]) => [name, portableSchema(kid)]))
    }
  }
  for (const key of SUBSCHEMA_LISTS) {
    if (Array.isArray(out[key])) out[key] = (out[key] as Schema[]).map(portableSchema)
  }
  for (const key of SUBSCHEMAS) {
    const kid = out[key]
    if (kid !== null && typeof kid === 'object' && !Array.isArray(kid)) out[key] = portableSchema(kid as Schema)
  }
  if (Array.isArray(out.type)) {
    const branches = (out.type as string[]).map((type) => ({ type }))
    delete out.type
    if (out.anyOf === undefined) {
      out.anyOf = branches
    } else {
      // Both must hold: the schema's own anyOf and the type's.
      out.allOf = [...(Array.isArray(out.allOf) ? out.allOf as Schema[] : []), { anyOf: out.anyOf }, { anyOf: branches }]
      delete out.anyOf
    }
  }
  if (!CONSTRAINING.some((key) => key in out)) out.anyOf = ANY_VALUE_TYPES.map((type) => ({ type }))
  return out
}

/**
 * The schema of a documented position: its own schema and description, with its documented sub-keys nested. Rules
 * nest (`attr.<field>` holds rules again): a set of keys already open on the way down is not opened again, and a
 * list of rules shows its items only when they differ from the object form.
 */
function fromShape (doc: ParamDoc | undefined, shape: ShapeSpec, seen: ReadonlySet<object>): Schema {
  const out: Record<string, unknown> = { ...(doc?.schema ?? {}) }
  delete out.examples
  if (doc !== undefined) out.description = doc.description
  const types = typesOf(out)
  const takesObject = types.length === 0 || types.includes('object')
  const inner = new Set<object>([...seen, shape])
  if (shape.keys !== undefined) inner.add(shape.keys)
  if (takesObject && shape.keys !== undefined && !seen.has(shape.keys)) {
    const properties: Record<string, Schema> = {}
    for (const [name, kid] of Object.entries(shape.keys)) {
      if (kid.doc === undefined || kid.rejected === true || seen.has(kid)) continue
      properties[name] = fromShape(kid.doc, kid, inner)
    }
    if (Object.keys(properties).length > 0) out.properties = properties
  }
  const child = shape.map?.child
  if (takesObject && child !== undefined && !seen.has(child) && !(child.keys !== undefined && inner.has(child.keys))) {
    out.additionalProperties = fromShape(child.doc, child, inner)
  }
  const items = shape.items
  if (types.includes('array') && items?.keys !== undefined && items.keys !== shape.keys && !seen.has(items)) {
    out.items = fromShape(items.doc, items, inner)
  }
  return out
}

/** The schema of a query parameter, from its entry in the table. */
export function parameterSchema (name: OptionName): Schema {
  const spec = specOf(name)
  return fromShape(spec.doc, spec.shape, new Set())
}

/** A parameter's schema with the tool's own wording in front of the table's. */
export function parameterAs (name: OptionName, lead: string): Schema {
  const schema = parameterSchema(name)
  return { ...schema, description: `${lead} ${String(schema.description)}` }
}

/** A key of a `data` rule (`selector`, `selectorAll`, `attr`, `type`), as the rule shape documents it. */
export function ruleKeySchema (key: keyof typeof RULE.keys): Schema {
  const kid: ShapeSpec = RULE.keys[key]
  return fromShape(kid.doc, kid, new Set<object>([RULE, RULE.keys]))
}

/** An `iframe.<name>` sent to the oEmbed provider, as a positive integer (a numeric string is accepted). */
export function oembedSizeSchema (what: string): Schema {
  const doc = IFRAME_SHAPE.map.child.doc
  return { type: 'integer', minimum: 1, description: `${what}. ${doc?.description ?? ''}`.trim() }
}

/** A Lighthouse setting under `insights.lighthouse.`: `output` as documented, the others as lists of ids. */
export function lighthouseSchema (key: 'output' | 'onlyCategories' | 'onlyAudits' | 'skipAudits'): Schema {
  if (key === 'output') {
    const kid: ShapeSpec = LIGHTHOUSE_SHAPE.keys.output
    return fromShape(kid.doc, kid, new Set())
  }
  const settings = LIGHTHOUSE_SHAPE.map.child.doc?.description ?? ''
  return { type: 'array', items: { type: 'string' }, description: `Lighthouse's \`${key}\` setting. ${settings}` }
}

/** A property that is no query parameter (`apiKey`, `square`, `code`): a schema written out. */
export function own (schema: JsonSchema, description: string): Schema {
  return { ...schema, description }
}

// ---------------------------------------------------------------------------------------------
// Lenient inputs (docs/api.md §15): coerced towards the schema before it validates.

const NUMERIC = /^-?(\d+(\.\d*)?|\.\d+)$/

function coerceValue (value: unknown, schema: Schema | undefined): unknown {
  if (schema === undefined) return value
  const types = typesOf(schema)
  if (typeof value === 'string' && types.includes('boolean') && /^\s*(true|false)\s*$/i.test(value)) return value.trim().toLowerCase() === 'true'
  if (typeof value === 'string' && !types.includes('string')) {
    const trimmed = value.trim()
    if ((types.includes('integer') || types.includes('number')) && NUMERIC.test(trimmed)) return Number(trimmed)
    if ((types.includes('object') && trimmed.startsWith('{')) || (types.includes('array') && trimmed.startsWith('['))) {
      // Deeper than a query's JSON value may be: left a string, which the schema then refuses (nothing walks it).
      if (jsonDeeperThan(trimmed, MAX_JSON_DEPTH)) return value
      try {
        return coerceValue(JSON.parse(trimmed), schema)
      } catch {
        return value
      }
    }
    return value
  }
  if (Array.isArray(value)) {
    const items = schema.items as Schema | undefined
    return items === undefined ? value : value.map((item) => coerceValue(item, items))
  }
  if (value !== null && typeof value === 'object') return coerceObject(value as Record<string, unknown>, schema)
  return value
}

/** An object's members coerced by the schema's properties (or its schema for other names); a new object. */
export function coerceObject (value: Readonly<Record<string, unknown>>, schema: Schema): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const rest = typeof schema.additionalProperties === 'object' ? schema.additionalProperties as Schema : undefined
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(value)) {
    const coerced = coerceValue(member, Object.hasOwn(properties, name) ? properties[name] : rest)
    // A member named `__proto__` is defined as an own property, so that it stays data; the others are assigned, which
    // keeps the object in the fast form the validator then reads (defining every member made the check twice as slow).
    if (name === '__proto__') Object.defineProperty(out, name, { value: coerced, enumerable: true, writable: true, configurable: true })
    else out[name] = coerced
  }
  return out
}
