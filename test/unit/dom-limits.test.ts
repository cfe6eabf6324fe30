// The DOM bounds (src/util/dom-limits.ts), checked on the tree the real HTML parser (cheerio's parse5) builds of the
// bounded markup: depth held near MAX_DOM_DEPTH with the text kept in order, elements cut at MAX_DOM_ELEMENTS, an
// ordinary page returned as the same string, all in time linear in the input.
import { describe, expect, it } from 'vitest'
import { load, type CheerioAPI } from 'cheerio'
import { boundMarkup, MAX_DOM_DEPTH, MAX_DOM_ELEMENTS } from '../../src/util/dom-limits.ts'

interface TreeNode { type: string, children?: TreeNode[] }

/** The deepest element nesting of a parsed document, iteratively. */
function depthOf ($: CheerioAPI): number {
  let max = 0
  const stack: Array<[TreeNode, number]> = [[$.root()[0] as unknown as TreeNode, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [TreeNode, number]
    for (const child of node.children ?? []) {
      if (child.type !== 'tag') continue
      max = Math.max(max, depth + 1)
      stack.push([child, depth + 1])
    }
  }
  return max
}

const nested = (levels: number, inner = '', tag = 'div'): string => `<${tag}>`.repeat(levels) + inner + `</${tag}>`.repeat(levels)

describe('boundMarkup', () => {
  it('returns a page within the bounds as the same string', () => {
    const page = `<!doctype html><html><head><title>t</title></head><body>${nested(200, '<p>a<p>b<br><img src=x><ul><li>1<li>2</ul>')}` +
      `<svg>${'<path d="M0"/>'.repeat(600)}</svg><table>${'<tr><td>x<td>y'.repeat(400)}</table>${'<p>para'.repeat(500)}</body></html>`
    expect(boundMarkup(page)).toBe(page)
  })

  it('holds 60,000 levels near the depth bound, the text in document order, in linear time', () => {
    const page = `<html><head><title>Deep</title></head><body>${'<div>x'.repeat(60_000)}end${'</div>'.repeat(60_000)}</body></html>`
    const started = performance.now()
    const bounded = boundMarkup(page)
    const $ = load(bounded)
    // Generous: about a second here, where the unbounded parse alone took minutes.
    expect(performance.now() - started).toBeLessThan(20_000)
    expect(depthOf($)).toBeLessThanOrEqual(MAX_DOM_DEPTH + 3)
    expect($('title').text()).toBe('Deep')
    const text = $('body').text()
    expect(text === 'x'.repeat(60_000) + 'end').toBe(true)
  })

  it('bounds nesting made of unclosed or self-closed elements too', () => {
    for (const page of ['<b>'.repeat(50_000) + 'z', '<div/>'.repeat(50_000) + 'z', '<span><i>'.repeat(25_000) + 'z']) {
      const $ = load(boundMarkup(page))
      expect(depthOf($)).toBeLessThanOrEqual(MAX_DOM_DEPTH + 3)
      expect($('body').text()).toBe('z')
    }
  })

  it('cuts the document before the first element over the bound, keeping what came before', () => {
    const page = `<html><body><p id="first">a</p>${'<p>b</p>'.repeat(50)}<p id="last">z</p></body></html>`
    const $ = load(boundMarkup(page, { bounds: { depth: MAX_DOM_DEPTH, elements: 20 } }))
    expect($('#first').text()).toBe('a')
    expect($('#last').length).toBe(0)
    // html, body and 18 paragraphs (the parser adds the head).
    expect($('p').length).toBe(18)
    expect(load(boundMarkup('<i></i>'.repeat(MAX_DOM_ELEMENTS + 10)))('i').length).toBe(MAX_DOM_ELEMENTS)
  })

  it('bounds XML the same way', () => {
    const xml = `<oembed><title>${nested(50_000, 'deep', 'b')}</title><html>x</html></oembed>`
    const $ = load(boundMarkup(xml, { xml: true }), { xml: true })
    expect(depthOf($)).toBeLessThanOrEqual(MAX_DOM_DEPTH + 3)
    expect($('oembed > html').text()).toBe('x')
  })
})
