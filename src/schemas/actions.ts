// `actions` (docs/api.md §3.6, docs/firecrawl.md#actions): a list of things done in the page, in the order given,
// each on the page as the one before left it. The shapes are Firecrawl's (its MIT SDK's types); declared once here,
// read from `GET /`'s `actions` (a JSON list) and from a Firecrawl scrape's body alike, with the same messages.
import { AppError } from '../errors.ts'
import { PAPER_FORMATS, type PageAction, type PaperFormat } from './options.ts'

export type { PageAction } from './options.ts'

export type PageActionType = PageAction['type']

export const ACTION_TYPES: readonly PageActionType[] = ['wait', 'click', 'write', 'press', 'scroll', 'screenshot', 'scrape', 'executeJavascript', 'pdf']

/** The most actions one request may list. */
export const MAX_ACTIONS = 50

/** The longest `wait` in milliseconds (the request's own timeout cuts it shorter). */
export const MAX_ACTION_WAIT_MS = 60_000

function refuse (message: string): never {
  throw new AppError('EINVALQUERY', { message, data: { actions: message } })
}

function str (action: Record<string, unknown>, name: string, index: number, nonBlank = true): string {
  const value = action[name]
  if (typeof value !== 'string' || (nonBlank && value.trim() === '')) refuse(`actions[${index}] (${String(action.type)}) needs \`${name}\` as a non-empty string.`)
  return value
}

function readWait (action: Record<string, unknown>, index: number): PageAction {
  const ms = action.milliseconds
  const selector = action.selector
  if (ms !== undefined && (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_ACTION_WAIT_MS)) {
    refuse(`actions[${index}] (wait): \`milliseconds\` must be a whole number from 0 to ${MAX_ACTION_WAIT_MS}.`)
  }
  if (ms === undefined && selector === undefined) refuse(`actions[${index}] (wait) needs \`milliseconds\` or \`selector\`.`)
  return { type: 'wait', ...(ms === undefined ? {} : { milliseconds: ms }), ...(selector === undefined ? {} : { selector: str(action, 'selector', index) }) }
}

function readPdf (action: Record<string, unknown>, index: number): PageAction {
  const format = action.format
  if (format !== undefined && !(PAPER_FORMATS as readonly unknown[]).includes(format)) refuse(`actions[${index}] (pdf): \`format\` is one of ${PAPER_FORMATS.join(', ')}.`)
  const scale = action.scale
  if (scale !== undefined && (typeof scale !== 'number' || scale < 0.1 || scale > 2)) refuse(`actions[${index}] (pdf): \`scale\` is 0.1 to 2.`)
  return {
    type: 'pdf',
    ...(format === undefined ? {} : { format: format as PaperFormat }),
    ...(typeof action.landscape === 'boolean' ? { landscape: action.landscape } : {}),
    ...(scale === undefined ? {} : { scale })
  }
}

/** One action of a list, checked; `index` is its place, for the messages. Throws 400 EINVALQUERY naming it. */
export function readAction (raw: unknown, index: number): PageAction {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) refuse(`actions[${index}] must be an object with a \`type\`.`)
  const action = raw as Record<string, unknown>
  switch (action.type) {
    case 'wait': return readWait(action, index)
    case 'click': return { type: 'click', selector: str(action, 'selector', index), ...(action.all === true ? { all: true } : {}) }
    case 'write': return { type: 'write', text: str(action, 'text', index, false) }
    case 'press': return { type: 'press', key: str(action, 'key', index) }
    case 'scroll': {
      const direction = action.direction ?? 'down'
      if (direction !== 'up' && direction !== 'down') refuse(`actions[${index}] (scroll): \`direction\` is up or down.`)
      return { type: 'scroll', direction, ...(action.selector === undefined ? {} : { selector: str(action, 'selector', index) }) }
    }
    case 'screenshot': {
      const quality = action.quality
      if (quality !== undefined && (typeof quality !== 'number' || !Number.isInteger(quality) || quality < 0 || quality > 100)) refuse(`actions[${index}] (screenshot): \`quality\` is a whole number from 0 to 100.`)
      return { type: 'screenshot', fullPage: action.fullPage === true, ...(quality === undefined ? {} : { quality }) }
    }
    case 'scrape': return { type: 'scrape' }
    case 'executeJavascript': return { type: 'executeJavascript', script: str(action, 'script', index) }
    case 'pdf': return readPdf(action, index)
    default:
      return refuse(`actions[${index}]: unknown action type \`${String(action.type)}\`; known: ${ACTION_TYPES.join(', ')}.`)
  }
}

/** A whole list (at most MAX_ACTIONS), checked. */
export function readActionList (raw: unknown): PageAction[] {
  if (!Array.isArray(raw)) refuse('`actions` must be a JSON list of actions.')
  if (raw.length > MAX_ACTIONS) refuse(`\`actions\` lists at most ${MAX_ACTIONS} actions.`)
  return raw.map(readAction)
}

/** `GET /`'s `actions`: a JSON list as text. */
export function parseActions (text: string): PageAction[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return refuse('`actions` must be a JSON list of actions (it does not parse as JSON).')
  }
  return readActionList(parsed)
}

/**
 * An executeJavascript script as an expression the page evaluates: an expression stays one (its value); statements
 * become the body of an async function called at once (what they `return`). Only parsed here, never run.
 */
export function scriptExpression (script: string): string {
  try {
    // eslint-disable-next-line no-new, @typescript-eslint/no-implied-eval -- compiles, never calls
    new Function(`return (${script}\n)`)
    return `(${script}\n)`
  } catch {
    return `(async () => {\n${script}\n})()`
  }
}
