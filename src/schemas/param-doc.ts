// The documentation half of a parameter (docs/api.md §3, §12.2): one sentence or more for the reference,
// and the JSON Schema of the value the client sends, for /openapi.json. Both come from the parameter table.

/** The subset of JSON Schema 2020-12 (OpenAPI 3.1's dialect) the parameters use. */
export interface JsonSchema {
  readonly type?: JsonType | readonly JsonType[]
  readonly enum?: readonly unknown[]
  readonly minimum?: number
  readonly maximum?: number
  readonly maxLength?: number
  readonly minLength?: number
  readonly pattern?: string
  readonly format?: string
  readonly default?: unknown
  readonly items?: JsonSchema
  readonly examples?: readonly unknown[]
}

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array'

export interface ParamDoc {
  readonly description: string
  readonly schema: JsonSchema
  /** The type as the reference shows it, when the schema alone says it badly (`duration`, `CSS length`). */
  readonly label?: string
  /** The default as the reference shows it, when it is not the schema's (`from device`, `MAX_TIMEOUT`). */
  readonly shownDefault?: string
}

/** A parameter's documentation without a schema of its own: the shape's sub-keys hold the detail. */
export function doc (description: string, schema: JsonSchema, extra: Omit<ParamDoc, 'description' | 'schema'> = {}): ParamDoc {
  return { description, schema, ...extra }
}
