// `data` (docs/api.md §3.3): extraction rules by field name, each field a rule object or a list of
// fallback rules; `attr` may nest rules run per match. Every error is EINVALDATA keyed by the field
// (`data.<field>`), except a bad `evaluate`, which is EINVALEVAL keyed by its own path.
import { ATTR_KEYWORDS, RULE_TYPES } from './options.ts'
import type { Rule, RuleType } from './options.ts'
import { MAX_JSON_DEPTH, newNode } from './grammar.ts'
import type { Node } from './grammar.ts'
import { fail, show } from './messages.ts'
import { checkName, listItems, scalar, sortedKids, stringList, sub, syntaxProblem } from './readers.ts'
import { RULE } from './shapes.ts'

const RULE_HINT = 'A rule must be an object (or array of objects) with extraction options.'
const ATTR_NAME_RE = /^[^\s"'>/=\u0000-\u001f\u007f]+$/

function dataFail (fieldKey: string, detail: string): never {
  fail('EINVALDATA', fieldKey, detail)
}

function parseRuleOrList (node: Node, param: string, fieldKey: string, depth: number): Rule[] {
  if (depth > MAX_JSON_DEPTH) dataFail(fieldKey, `The \`${param}\` rules are nested too deeply.`)
  if (node.self?.kind === 'value') {
    dataFail(fieldKey, `The \`${param}\` has an invalid value (\`${show(node.self.value)}\`). ${RULE_HINT}`)
  }
  const keys = [...node.kids.keys()]
  const numeric = keys.filter((key) => /^\d+$/.test(key))
  if (numeric.length > 0 && numeric.length < keys.length) {
    dataFail(fieldKey, `The \`${param}\` mixes a list of rules with rule options. ${RULE_HINT}`)
  }
  const isList = numeric.length > 0 || (node.self?.kind === 'struct' && node.self.array)
  if (!isList) return [parseRule(node, param, fieldKey, depth)]
  if (numeric.length === 0) dataFail(fieldKey, `The \`${param}\` is an empty list. ${RULE_HINT}`)
  numeric.sort((a, b) => Number(a) - Number(b))
  return numeric.map((key) => {
    const kid = node.kids.get(key) ?? newNode()
    if (kid.self?.kind === 'value' || (kid.self?.kind === 'struct' && kid.self.array)) {
      const shown = kid.self.kind === 'value' ? kid.self.value : '[…]'
      dataFail(fieldKey, `The \`${param}.${key}\` has an invalid value (\`${show(shown)}\`). ${RULE_HINT}`)
    }
    return parseRule(kid, `${param}.${key}`, fieldKey, depth)
  })
}

function parseRule (node: Node, param: string, fieldKey: string, depth: number): Rule {
  const rule: Rule = { attr: ['html'], type: 'auto' }
  const selector = stringList(sub(node, RULE, 'selector'), `${param}.selector`, 'EINVALDATA', fieldKey)
  const selectorAll = stringList(sub(node, RULE, 'selectorAll'), `${param}.selectorAll`, 'EINVALDATA', fieldKey)
  if (selectorAll.length > 0) rule.selectorAll = selectorAll
  else if (selector.length > 0) rule.selector = selector

  const attrNode = sub(node, RULE, 'attr')
  if (attrNode !== undefined) rule.attr = parseAttr(attrNode, `${param}.attr`, fieldKey, depth)
  if (Array.isArray(rule.attr) && rule.attr.includes('json') && (rule.selector !== undefined || rule.selectorAll !== undefined)) {
    dataFail(fieldKey, `The \`${param}.attr\` \`json\` reads the whole body and takes no selector.`)
  }

  const type = scalar(sub(node, RULE, 'type'), `${param}.type`, 'EINVALDATA', fieldKey)
  if (type !== undefined) {
    const lower = typeof type === 'string' ? type.trim().toLowerCase() : undefined
    const found = RULE_TYPES.find((candidate) => candidate === lower)
    if (found === undefined) {
      dataFail(fieldKey, `The \`${param}.type\` has an invalid value (\`${show(type)}\`). Supported types: ${RULE_TYPES.join(', ')}.`)
    }
    rule.type = found satisfies RuleType
  }

  const evaluate = scalar(sub(node, RULE, 'evaluate'), `${param}.evaluate`, 'EINVALDATA', fieldKey)
  if (evaluate !== undefined) {
    if (typeof evaluate !== 'string' || evaluate.trim() === '') {
      fail('EINVALEVAL', `${param}.evaluate`, `The \`${param}.evaluate\` has an invalid value (\`${show(evaluate)}\`). It must be a JavaScript expression or function.`)
    }
    const problem = syntaxProblem(evaluate)
    if (problem !== undefined) {
      fail('EINVALEVAL', `${param}.evaluate`, `The \`${param}.evaluate\` does not parse as JavaScript: ${problem}.`)
    }
    rule.evaluate = evaluate
  }

  const mainContent = scalar(sub(node, RULE, 'mainContent'), `${param}.mainContent`, 'EINVALDATA', fieldKey)
  if (mainContent !== undefined) {
    const on = mainContent === true || (typeof mainContent === 'string' && ['', 'true'].includes(mainContent.trim().toLowerCase()))
    const off = mainContent === false || (typeof mainContent === 'string' && mainContent.trim().toLowerCase() === 'false')
    if (!on && !off) dataFail(fieldKey, `The \`${param}.mainContent\` has an invalid value (\`${show(mainContent)}\`). It must be \`true\` or \`false\`.`)
    if (on) rule.mainContent = true
  }
  return rule
}

function parseAttr (node: Node, param: string, fieldKey: string, depth: number): Rule['attr'] {
  const keys = sortedKids(node).map(([key]) => key)
  const named = keys.filter((key) => !/^\d+$/.test(key))
  if (named.length > 0) {
    if (named.length < keys.length || node.self?.kind === 'value' || (node.self?.kind === 'struct' && node.self.array)) {
      dataFail(fieldKey, `The \`${param}\` mixes attribute names with nested rules.`)
    }
    const nested: Record<string, Rule[]> = {}
    for (const name of named) {
      checkName(name, `${param}.${name}`, 'EINVALDATA', fieldKey)
      const kid = node.kids.get(name)
      if (kid !== undefined) nested[name] = parseRuleOrList(kid, `${param}.${name}`, fieldKey, depth + 1)
    }
    return nested
  }
  const out: string[] = []
  for (const item of listItems(node, param, 'EINVALDATA', fieldKey)) {
    if (typeof item !== 'string') dataFail(fieldKey, `The \`${param}\` has an invalid value (\`${show(item)}\`). It must be a string, a list of strings or an object of rules.`)
    const name = item.trim()
    const keyword = ATTR_KEYWORDS.find((candidate) => candidate.toLowerCase() === name.toLowerCase())
    if (keyword !== undefined) out.push(keyword)
    else if (ATTR_NAME_RE.test(name)) out.push(name)
    else dataFail(fieldKey, `The \`${param}\` has an invalid value (\`${show(item)}\`). It must be a keyword (${ATTR_KEYWORDS.join(', ')}) or an attribute name.`)
  }
  return out.length === 0 ? ['html'] : out
}

export function readData (node: Node | undefined): Record<string, Rule[]> | undefined {
  if (node === undefined) return undefined
  if (node.self?.kind === 'value' || (node.self?.kind === 'struct' && node.self.array)) {
    const shown = node.self.kind === 'value' ? node.self.value : '[…]'
    dataFail('data', `The \`data\` has an invalid value (\`${show(shown)}\`). It must be an object of rules keyed by field name.`)
  }
  const out: Record<string, Rule[]> = {}
  for (const [name, kid] of sortedKids(node)) {
    const param = `data.${name}`
    checkName(name, param, 'EINVALDATA')
    out[name] = parseRuleOrList(kid, param, param, 0)
  }
  return Object.keys(out).length === 0 ? undefined : out
}
