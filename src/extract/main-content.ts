// `mainContent` (docs/api.md §3.3): the page's main content as @mozilla/readability finds it, on a linkedom DOM
// built only when a rule asks for it. Readability leaves out navigation, headers, footers, sidebars and comments;
// links and image sources are made absolute here against the page. Without a main content, the whole <body>.
import { Readability } from '@mozilla/readability'
import { parseHTML } from 'linkedom'

/** Attributes that hold a URL in the main content. */
const URL_ATTRIBUTES = [['a', 'href'], ['img', 'src'], ['source', 'src'], ['video', 'src'], ['audio', 'src'], ['video', 'poster']] as const

interface DomElement {
  getAttribute: (name: string) => string | null
  setAttribute: (name: string, value: string) => void
  removeAttribute: (name: string) => void
  querySelectorAll: (selectors: string) => Iterable<DomElement>
  innerHTML: string
}

function absolutize (root: DomElement, pageUrl: string): void {
  for (const [tag, attribute] of URL_ATTRIBUTES) {
    for (const element of root.querySelectorAll(`${tag}[${attribute}]`)) {
      const raw = element.getAttribute(attribute) ?? ''
      try {
        element.setAttribute(attribute, new URL(raw.trim(), pageUrl).href)
      } catch {
        element.removeAttribute(attribute)
      }
    }
  }
  // srcset lists are rewritten by the browser anyway; a relative one is dropped rather than left ambiguous.
  for (const element of root.querySelectorAll('img[srcset], source[srcset]')) element.removeAttribute('srcset')
}

/** The HTML of the main content (or of the whole body), with absolute links and image sources. */
export function mainContentHtml (html: string, pageUrl: string): string {
  let article: string | null | undefined
  try {
    // Readability changes the document it reads; this one is its alone.
    const { document } = parseHTML(html)
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], { keepClasses: true }).parse()?.content
  } catch {
    article = undefined
  }
  const found = article !== undefined && article !== null && article.trim() !== ''
  const container = (found ? parseHTML(`<!doctype html><html><body>${article}</body></html>`) : parseHTML(html)).document.body as unknown as DomElement | null
  if (container === null) return ''
  absolutize(container, pageUrl)
  return container.innerHTML
}
