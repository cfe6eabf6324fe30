// Wrappers that hold every rule of a field to §9's value rules, so a value that fails is passed over and the
// next rule is tried (metascraper moves on when a rule gives undefined).
import { resolveMediaUrl } from '../../media/objects.ts'
import { toHttpUrl } from '../../util/url.ts'
import type { ImageLikeKind, Rule } from './types.ts'

/**
 * image and logo: the value is resolved against the page (http(s), or a well-formed data: image URI); with
 * `ping.<kind>` on it must also pass the probe, so a failing candidate gives way to the next rule (§3.4).
 */
export function guardMediaRules (kind: ImageLikeKind, rules: readonly Rule[]): Rule[] {
  return rules.map(rule => async args => {
    const { request } = args
    request.signal.throwIfAborted()
    const value = await rule(args)
    if (typeof value !== 'string') return undefined
    const url = resolveMediaUrl(value, args.url, kind)
    if (url === null) return undefined
    if (!request.ping[kind]) return url
    return (await request.checkMedia(url, kind)) === null ? undefined : url
  })
}

/** url: absolute http(s) only. */
export function guardUrlRules (rules: readonly Rule[]): Rule[] {
  return rules.map(rule => async args => {
    const value = await rule(args)
    if (typeof value !== 'string') return undefined
    return toHttpUrl(value, args.url)
  })
}

/** Text fields: a non-empty string, whitespace collapsed. */
export function guardTextRules (rules: readonly Rule[]): Rule[] {
  return rules.map(rule => async args => {
    const value = await rule(args)
    if (typeof value !== 'string') return undefined
    const text = value.replace(/\s+/g, ' ').trim()
    return text === '' ? undefined : text
  })
}
