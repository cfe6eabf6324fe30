// What a rule's `attr` reads from one match, or from the whole document without a selector (docs/api.md §3.3).
// Everything reads the parsed document; nothing here changes it (metascraper reads the same one).
import type { CheerioAPI } from 'cheerio'
import { toMarkdown } from './markdown.ts'
import type { TargetDocument } from './document.ts'

/** Elements found by a selector. */
export type Selection = ReturnType<ReturnType<CheerioAPI['root']>['find']>

/** Where a rule reads: one element, or the whole document of `$`. */
export interface Scope {
  readonly $: CheerioAPI
  /** The match; absent for the whole document. */
  node?: Selection
  /**
   * For a whole HTML document: the HTML `$` is (or would be) parsed from. Markdown of the whole document converts it
   * directly (the converter parses it once; head content is dropped by its rules), so nothing parses it twice.
   */
  source?: string
}

const collapse = (text: string): string => text.replace(/\s+/g, ' ').trim()

function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

function wholeHtml (scope: Scope): string {
  return scope.$.html()
}

function bodyOf (scope: Scope): Selection {
  return scope.$.root().find('body').first()
}

/**
 * One `attr` read: `html` (inner HTML), `outerHTML`, `text` (trimmed textContent, whitespace collapsed), `markdown`,
 * `val` (the value of an input, select or textarea: the page's live one when the browser gave it, else the markup's), `json` (the whole body parsed), or an
 * attribute's value. Without a match, the whole document: its HTML, its body's text or Markdown, or an attribute
 * of <html>. Undefined when there is nothing.
 */
export function readAttr (scope: Scope, attr: string, document: TargetDocument): unknown {
  // `scope.$` is read only where the tree is needed (it may not be parsed yet).
  const { node } = scope
  switch (attr) {
    case 'html':
      return node === undefined ? wholeHtml(scope) : node.html() ?? undefined
    case 'outerHTML':
      return node === undefined ? wholeHtml(scope) : scope.$.html(node)
    case 'text':
      return collapse((node ?? bodyOf(scope)).text())
    case 'markdown':
      if (node === undefined && scope.source !== undefined) return toMarkdown(scope.source, document.url)
      return toMarkdown((node ?? bodyOf(scope)).html() ?? '', document.url)
    case 'val': {
      if (node === undefined) return undefined
      // The live value the browser gave (document.ts), else the markup's.
      const element = node.get(0)
      if (element !== undefined && document.liveValues.has(element)) return document.liveValues.get(element) ?? undefined
      const value = node.val()
      return Array.isArray(value) ? value : value ?? undefined
    }
    case 'json':
      return parseJson(document.kind === 'html' ? bodyOf(scope).text() : document.source)
    default:
      return (node ?? scope.$('html')).attr(attr.toLowerCase())
  }
}
