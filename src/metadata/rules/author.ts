// author: JSON-LD authors given as a string or a list (metascraper-author reads only `author.name` of an object),
// twitter:creator as the last source, and the §9 constraints on every author value: not a URL, at most 128
// characters, without a leading `by` or `@`.
import type { HtmlDom, Rule, RuleBundle } from './types.ts'

export const AUTHOR_MAX_LENGTH = 128

const LEADING_BY = /^(?:by\s+|@\s*)/i
const URL_LIKE = /^(?:[a-z][a-z0-9+.-]*:\/\/|\/\/|www\.)/i

/** The §9 author constraints; undefined when the value cannot be an author. */
export function normalizeAuthor (value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  let author = value.replace(/\s+/g, ' ').trim()
  // "By @jane" loses both.
  for (let i = 0; i < 2; i++) author = author.replace(LEADING_BY, '').trim()
  if (author === '' || author.length > AUTHOR_MAX_LENGTH || URL_LIKE.test(author)) return undefined
  return author
}

/** Applies normalizeAuthor to what each rule finds, so a failing value passes on to the next rule. */
export function guardAuthorRules (rules: readonly Rule[]): Rule[] {
  return rules.map(rule => async args => normalizeAuthor(await rule(args)))
}

export function twitterCreatorRules (): RuleBundle {
  return {
    author: [
      ({ htmlDom: $ }) => $('meta[name="twitter:creator" i]').attr('content'),
      ({ htmlDom: $ }) => $('meta[property="twitter:creator" i]').attr('content')
    ]
  }
}

/** The JSON-LD objects of a document, `@graph` members included; unparseable blocks are skipped. */
export function jsonLdItems ($: HtmlDom): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = []
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item)
    } else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>
      items.push(record)
      if (Array.isArray(record['@graph'])) visit(record['@graph'])
    }
  }
  $('script[type="application/ld+json" i]').each((_, element) => {
    try {
      visit(JSON.parse($(element).text()))
    } catch {}
  })
  return items
}

function authorName (value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (value !== null && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string') {
    return (value as { name: string }).name
  }
  return undefined
}

/**
 * JSON-LD `author` as a plain string or as a list (its first entry); runs before metascraper-author's
 * `author.name`, which covers the single-object form and finds nothing in these.
 */
export function jsonLdAuthorRules (): RuleBundle {
  return {
    author: [
      ({ htmlDom }) => {
        for (const item of jsonLdItems(htmlDom)) {
          const author = item.author
          const name = Array.isArray(author) ? authorName(author[0]) : typeof author === 'string' ? author : undefined
          if (normalizeAuthor(name) !== undefined) return name
        }
        return undefined
      }
    ]
  }
}
