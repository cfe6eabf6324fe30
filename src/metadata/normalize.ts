// The §9 value rules of the text fields (docs/api.md §9), for values found elsewhere than in metascraper's bundles
// (typed `data` rules, §3.3): the same @metascraper/helpers normalizers the bundles apply, then the project's own
// constraints (whitespace collapsed; the author rules of author.ts).
import helpers from '@metascraper/helpers'
import { normalizeAuthor } from './rules/author.ts'

const { date, description, lang, publisher, title } = helpers

export type TextField = 'title' | 'description' | 'author' | 'publisher' | 'date' | 'lang'

function collapse (value: string | undefined): string | undefined {
  if (typeof value !== 'string') return undefined
  const text = value.replace(/\s+/g, ' ').trim()
  return text === '' ? undefined : text
}

/** The value as the metadata field would give it, or undefined when it cannot be one. */
export function normalizeField (field: TextField, value: unknown): string | undefined {
  switch (field) {
    case 'title': return typeof value === 'string' ? collapse(title(value)) : undefined
    case 'description': return typeof value === 'string' ? collapse(description(value)) : undefined
    case 'publisher': return typeof value === 'string' ? collapse(publisher(value)) : undefined
    case 'author': return normalizeAuthor(value)
    case 'lang': return typeof value === 'string' ? lang(value.trim()) ?? undefined : undefined
    case 'date': {
      // Epoch numbers written as text are numbers (§9: read as s, ms, µs or ns by magnitude).
      const input = typeof value === 'string' && /^\s*-?\d+(?:\.\d+)?\s*$/.test(value) && !/^\s*\d{4}\s*$/.test(value) ? Number(value) : value
      if (typeof input !== 'string' && typeof input !== 'number') return undefined
      try {
        return date(input) ?? undefined
      } catch {
        return undefined
      }
    }
  }
}
