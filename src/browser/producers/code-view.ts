// `screenshot.codeScheme` (docs/api.md §3.2): a JSON or plain-text target is shown pretty-printed and highlighted with a
// Prism theme before the capture. The document is replaced by a `<pre>` whose tokens carry Prism's class names for
// its JSON grammar (property, string, number, boolean, null, punctuation, operator), so any Prism theme styles it;
// the tokenizer is ours, the theme's CSS is the real prism-themes file (or the linked URL).
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import { CODE_SCHEMES, codeSchemeFile } from '../../schemas/code-schemes.ts'
import { AppError } from '../../errors.ts'
import { escapeHtml } from '../../util/html.ts'
import { isHttpUrl } from '../../util/url.ts'
import { WAIT_SHARE, type Budget } from '../page/budget.ts'
import type { DomWindow } from '../page/dom.ts'
import { addLinkedStyle } from '../page/styles.ts'

export type CodeKind = 'json' | 'text'

/** Longest text shown, in characters and lines: far more than a 16,384-pixel capture can hold. */
export const MAX_CODE_CHARS = 1024 * 1024
export const MAX_CODE_LINES = 5000

/** Whether a target of this content type is shown as code: JSON (`application/json`, `text/json`, `*+json`) or `text/plain`. */
export function codeKindOf (contentType: string | undefined): CodeKind | undefined {
  if (contentType === undefined) return undefined
  const essence = (contentType.split(';')[0] ?? '').trim().toLowerCase()
  if (essence === 'application/json' || essence === 'text/json' || /^[a-z]+\/[a-z0-9.+-]+\+json$/.test(essence)) return 'json'
  if (essence === 'text/plain') return 'text'
  return undefined
}

function span (kind: string, text: string): string {
  return `<span class="token ${kind}">${escapeHtml(text)}</span>`
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const WORD = /true|false|null/y
const SPACE = /\s+/y

/**
 * Highlights JSON text as HTML, with Prism's token classes. It lexes rather than parses, so text that is not valid
 * JSON still comes out, with what it cannot read left plain.
 */
export function highlightJson (text: string): string {
  let out = ''
  let i = 0
  const n = text.length
  while (i < n) {
    const char = text[i] as string
    if (char === '"') {
      let j = i + 1
      while (j < n && text[j] !== '"' && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1
      j = Math.min(n, j + 1)
      const literal = text.slice(i, j)
      let k = j
      while (k < n && /[ \t\r\n]/.test(text[k] as string)) k++
      out += span(text[k] === ':' ? 'property' : 'string', literal)
      i = j
      continue
    }
    if ('{}[],'.includes(char)) { out += span('punctuation', char); i++; continue }
    if (char === ':') { out += span('operator', char); i++; continue }
    SPACE.lastIndex = i
    const space = SPACE.exec(text)
    if (space !== null) { out += space[0]; i += space[0].length; continue }
    NUMBER.lastIndex = i
    const number = NUMBER.exec(text)
    if (number !== null) { out += span('number', number[0]); i += number[0].length; continue }
    WORD.lastIndex = i
    const word = WORD.exec(text)
    if (word !== null && !/[A-Za-z0-9_]/.test(text[i + word[0].length] ?? '')) {
      out += word[0] === 'null' ? span('null keyword', word[0]) : span('boolean', word[0])
      i += word[0].length
      continue
    }
    // Anything else (invalid JSON): plain text up to the next character the lexer knows.
    let j = i + 1
    while (j < n && !/["{}[\],:\s\-0-9tfn]/.test(text[j] as string)) j++
    out += escapeHtml(text.slice(i, j))
    i = j
  }
  return out
}

/** The text as shown: JSON re-indented by two spaces when it parses, then cut to MAX_CODE_LINES / MAX_CODE_CHARS. */
export function prettyText (body: string, kind: CodeKind): string {
  let text = body
  if (kind === 'json') {
    try {
      text = JSON.stringify(JSON.parse(body), null, 2) ?? body
    } catch {
      text = body
    }
  }
  let cut = false
  if (text.length > MAX_CODE_CHARS) { text = text.slice(0, MAX_CODE_CHARS); cut = true }
  let lines = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    if (++lines >= MAX_CODE_LINES) { text = text.slice(0, at); cut = true; break }
  }
  return cut ? `${text}\n…` : text
}

/** The CSS of a bundled prism-themes theme, read from the installed package. */
export async function bundledThemeCss (id: string): Promise<string> {
  if (!CODE_SCHEMES.includes(id)) throw new AppError('EFATAL', { cause: new Error(`unknown code scheme ${id}`) })
  const file = createRequire(import.meta.url).resolve(`prism-themes/${codeSchemeFile(id)}`)
  return await readFile(file, 'utf8')
}

/** Layout around the theme: the block fills the page and long lines wrap, so the capture shows all of each line. */
const LAYOUT_CSS = [
  'html, body { margin: 0; padding: 0; }',
  'pre.pagecast-code[class*="language-"] {',
  '  margin: 0 !important; min-height: 100vh; box-sizing: border-box; border-radius: 0 !important;',
  '  white-space: pre-wrap !important; overflow-wrap: anywhere; word-break: normal; overflow: visible !important;',
  '}'
].join('\n')

/** The whole replacement document, with the bundled theme's CSS inlined when given. */
export function codeViewHtml (body: string, kind: CodeKind, themeCss?: string): string {
  const language = kind === 'json' ? 'json' : 'text'
  const text = prettyText(body, kind)
  const code = kind === 'json' ? highlightJson(text) : escapeHtml(text)
  const theme = themeCss === undefined ? '' : `<style>${themeCss.replace(/<\/style/gi, '<\\/style')}</style>`
  return '<!doctype html><html><head><meta charset="utf-8">' +
    `${theme}<style>${LAYOUT_CSS}</style></head>` +
    `<body><pre class="pagecast-code language-${language}"><code class="language-${language}">${code}</code></pre></body></html>`
}

/**
 * Replaces the page's document by the highlighted view of its own text (the `<pre>` Chromium shows a JSON or text
 * target in); the page keeps its URL. `scheme` is a bundled theme id or the URL of a stylesheet, which gets up to
 * ⅔ of the remaining budget to load (without it the text is still shown).
 */
export async function showCodeView (page: Page, kind: CodeKind, scheme: string, budget: Budget): Promise<void> {
  const body = await page.evaluate(() => {
    const { document } = globalThis as unknown as DomWindow
    const pre = document.querySelector('body > pre')
    return (pre ?? document.body ?? document.documentElement).textContent ?? ''
  })
  const linked = isHttpUrl(scheme)
  const html = codeViewHtml(body, kind, linked ? undefined : await bundledThemeCss(scheme))
  // Rewritten in place through DevTools (document.open/write), which works with page scripts off.
  await page.evaluate((markup) => {
    const { document } = globalThis as unknown as DomWindow
    document.open()
    document.write(markup)
    document.close()
  }, html)
  if (linked) await addLinkedStyle(page, scheme, budget.fraction(WAIT_SHARE), budget.signal)
  // The page behind the block takes the block's background, so a full-page capture has no seam.
  await page.evaluate(() => {
    const win = globalThis as unknown as DomWindow
    const pre = win.document.querySelector('pre.pagecast-code')
    if (pre === null) return
    const background = win.getComputedStyle(pre).backgroundColor
    win.document.documentElement.style.background = background
    if (win.document.body !== null) win.document.body.style.background = background
  })
}
