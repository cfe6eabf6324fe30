// Step: the live values of form fields written into the DOM, so the serialized HTML carries them and a `data` rule's
// `attr: 'val'` reads what the page holds now (docs/api.md §3.3): an input's value into its `value` attribute (its
// checkedness into `checked`), a textarea's into its text, a select's choice into its options' `selected`. It runs
// last, right before the DOM is serialized, and only when a rule reads `val`. What the user sees does not change.

import type { PageStep } from './step.ts'
import { abortable } from '../../util/abort.ts'
import { rethrowIfFatal } from './step.ts'

interface FormField {
  tagName: string
  type: string
  value: string
  checked: boolean
  textContent: string | null
  options: ArrayLike<{ selected: boolean, toggleAttribute: (name: string, on: boolean) => void }>
  setAttribute: (name: string, value: string) => void
  toggleAttribute: (name: string, on: boolean) => void
}

function writeFormValues (): void {
  const doc = (globalThis as unknown as { document: { querySelectorAll: (s: string) => ArrayLike<FormField> } }).document
  const fields = doc.querySelectorAll('input, textarea, select')
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]
    if (field === undefined) continue
    const tag = field.tagName.toLowerCase()
    if (tag === 'select') {
      for (let j = 0; j < field.options.length; j++) {
        const option = field.options[j]
        option?.toggleAttribute('selected', option.selected)
      }
    } else if (tag === 'textarea') {
      field.textContent = field.value
    } else if (field.type === 'checkbox' || field.type === 'radio') {
      field.toggleAttribute('checked', field.checked)
    } else if (field.type !== 'file') {
      field.setAttribute('value', field.value)
    }
  }
}

export const formValuesStep: PageStep = {
  name: 'form-values',
  applies: (options) => options.formValues === true,
  async run ({ page, budget }) {
    try {
      await abortable(page.evaluate(writeFormValues), budget.signal)
    } catch (err) {
      // A page that cannot run it (a navigation under way) keeps its attributes: `val` then reads those.
      rethrowIfFatal(err, page, budget)
    }
  }
}
