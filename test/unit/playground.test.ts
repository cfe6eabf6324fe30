// The playground's form is the parameter rows: every name a client sends as `name=value` has a field, with the
// row's choices, bounds and default, and only aliases, user-named positions and object-only rows have none.
import { describe, expect, it } from 'vitest'
import { PARAMETER_ROWS } from '../../src/docs/parameters.ts'
import { formFields } from '../../src/docs/playground.ts'
import { renderDocs } from '../../src/docs/html.ts'

describe('the playground form', () => {
  const fields = formFields()
  const byName = new Map(fields.map((f) => [f.name, f]))

  it('has a field for every row but aliases, user-named positions and rows without a value of their own', () => {
    for (const row of PARAMETER_ROWS) {
      if (byName.has(row.name)) continue
      const types = [row.schema.type ?? []].flat()
      const skipped = row.aliasOf !== undefined || row.pattern !== undefined || types.every((t) => t === 'object')
      expect(skipped, row.name).toBe(true)
    }
    expect(fields.length).toBeGreaterThan(60)
  })

  it('takes kinds, choices, bounds and defaults from the rows', () => {
    expect(byName.get('screenshot')).toMatchObject({ kind: 'switch', default: 'false' })
    expect(byName.get('screenshot.type')).toMatchObject({ kind: 'choice', options: ['png', 'jpeg', 'webp'], default: 'png' })
    expect(byName.get('pdf.format')?.options).toContain('A4')
    expect(byName.get('prerender')).toMatchObject({ kind: 'choice', options: ['true', 'false', 'auto'] })
    expect(byName.get('retry')).toMatchObject({ kind: 'number', integer: true, min: 0, max: 5 })
    expect(byName.get('waitUntil')?.suggestions).toContain('networkidle0')
    expect(byName.get('device')?.suggestions).toContain('iPhone 15')
    expect(byName.get('embed')?.suggestions).toContain('screenshot.url')
    expect(byName.get('ttl')).toMatchObject({ kind: 'text', pro: 'ETTL' })
  })

  it('renders each field on /docs, pro-only ones disabled on the free listener only', () => {
    const free = renderDocs('free')
    const pro = renderDocs('pro')
    for (const field of fields) expect(free, field.name).toContain(`name="${field.name}"`)
    expect(free).toMatch(/<input name="ttl"[^>]* disabled>/)
    expect(pro).not.toMatch(/<input name="ttl"[^>]* disabled>/)
    expect(pro).toContain('id="key"')
    expect(free).not.toContain('id="key"')
  })
})
