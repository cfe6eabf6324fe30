// HTML to Markdown for `attr=markdown` and the content endpoints (docs/api.md §3.3, §14): CommonMark through
// turndown with the GitHub tables, strikethrough, task lists and fenced code of @joplin/turndown-plugin-gfm, ATX
// headings, `-` bullets, link and image URLs made absolute against the page, and no scripts, styles or hidden
// elements. No front matter: the output is the content alone.
import TurndownService from 'turndown'
import { gfm } from '@joplin/turndown-plugin-gfm'

/** Elements whose content is never text of the page. */
const DROPPED = ['script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link', 'iframe', 'object', 'embed'] as const
const DISPLAY_NONE = /(?:^|;)\s*display\s*:\s*none\s*(?:!important\s*)?(?:;|$)/i
const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:', 'tel:'])

interface TurndownNode {
  nodeName: string
  nodeType: number
  getAttribute: (name: string) => string | null
  hasAttribute: (name: string) => boolean
}

/** The page URL of the conversion under way; turndown() is synchronous, so one module-wide value is safe. */
let baseUrl = 'about:blank'

function absolute (raw: string | null, schemes: ReadonlySet<string>, allowDataImage = false): string | null {
  if (raw === null || raw.trim() === '') return null
  try {
    const url = new URL(raw.trim(), baseUrl)
    if (schemes.has(url.protocol)) return url.href
    if (allowDataImage && url.protocol === 'data:' && /^data:image\//i.test(url.href)) return url.href
  } catch {}
  return null
}

function isHidden (node: TurndownNode): boolean {
  if (node.nodeType !== 1) return false
  if (node.hasAttribute('hidden')) return true
  if ((node.getAttribute('aria-hidden') ?? '').trim().toLowerCase() === 'true') return true
  return DISPLAY_NONE.test(node.getAttribute('style') ?? '')
}

function titlePart (node: TurndownNode): string {
  const title = (node.getAttribute('title') ?? '').replace(/\s+/g, ' ').trim()
  return title === '' ? '' : ` "${title.replace(/"/g, '\\"')}"`
}

const escapeParens = (url: string): string => url.replace(/([()])/g, '\\$1')

function createService (): TurndownService {
  const service = new TurndownService({
    headingStyle: 'atx',
    bulletListMarker: '-',
    codeBlockStyle: 'fenced',
    fence: '```',
    hr: '---',
    emDelimiter: '_',
    strongDelimiter: '**',
    linkStyle: 'inlined'
  })
  service.use(gfm)
  service.remove([...DROPPED])
  // Rules added later win over earlier ones and over turndown's own.
  service.addRule('absoluteImage', {
    filter: 'img',
    replacement: (_content, node) => {
      const element = node as unknown as TurndownNode
      const src = absolute(element.getAttribute('src'), LINK_SCHEMES, true)
      if (src === null) return ''
      const alt = (element.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim().replace(/([[\]])/g, '\\$1')
      return `![${alt}](${escapeParens(src)}${titlePart(element)})`
    }
  })
  service.addRule('absoluteLink', {
    filter: (node) => node.nodeName === 'A' && node.getAttribute('href') !== null,
    replacement: (content, node) => {
      const element = node as unknown as TurndownNode
      const href = absolute(element.getAttribute('href'), LINK_SCHEMES)
      if (href === null) return content
      return `[${content}](${escapeParens(href)}${titlePart(element)})`
    }
  })
  service.addRule('hidden', {
    filter: (node) => isHidden(node as unknown as TurndownNode),
    replacement: () => ''
  })
  return service
}

let service: TurndownService | undefined

/** Markdown of an HTML fragment or document, its URLs resolved against `pageUrl`. */
export function toMarkdown (html: string, pageUrl: string): string {
  if (html.trim() === '') return ''
  service ??= createService()
  baseUrl = pageUrl
  try {
    return service.turndown(html).trim()
  } finally {
    baseUrl = 'about:blank'
  }
}
