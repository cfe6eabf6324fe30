// The readers of environment variables that config.ts declares its settings with: each parses one variable and
// throws a ConfigError naming it when the value is bad.
import { isIP } from 'node:net'
import ms from 'ms'

export class ConfigError extends Error {
  readonly variable: string
  constructor (variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`)
    this.name = 'ConfigError'
    this.variable = variable
  }
}

export type Env = Record<string, string | undefined>

export function str (env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

export function port (env: Env, name: string, fallback: number): number {
  const raw = str(env, name)
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new ConfigError(name, `must be a port number from 0 to 65535 (got "${raw}")`)
  return Number(raw)
}

export function integer (env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = str(env, name)
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${raw}")`)
  }
  return Number(raw)
}

export function bool (env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name)
  if (raw === undefined) return fallback
  if (/^(true|1|yes)$/i.test(raw)) return true
  if (/^(false|0|no)$/i.test(raw)) return false
  throw new ConfigError(name, `must be true or false (got "${raw}")`)
}

export function duration (env: Env, name: string, fallback: number): number {
  const raw = str(env, name)
  if (raw === undefined) return fallback
  const value = /^\d+$/.test(raw) ? Number(raw) : ms(raw as ms.StringValue)
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigError(name, `must be a positive duration such as 28s or 28000 (got "${raw}")`)
  }
  return Math.round(value)
}

export function httpUrl (env: Env, name: string): string | undefined {
  const raw = str(env, name)
  if (raw === undefined) return undefined
  let url: URL
  try { url = new URL(raw) } catch { throw new ConfigError(name, `must be an absolute http(s) URL (got "${raw}")`) }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `must be an http(s) URL (got "${raw}")`)
  return raw.replace(/\/+$/, '')
}

export function wsUrl (env: Env, name: string): string | undefined {
  const raw = str(env, name)
  if (raw === undefined) return undefined
  let url: URL
  try { url = new URL(raw) } catch { throw new ConfigError(name, `must be a ws:// or wss:// URL (got "${raw}")`) }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new ConfigError(name, `must be a ws:// or wss:// URL (got "${raw}")`)
  return raw
}

export function list (env: Env, name: string): string[] {
  const raw = env[name]
  if (raw === undefined) return []
  return raw.split(',').map(s => s.trim()).filter(s => s !== '')
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]/]+):(\d{1,5})$/

export function hostPorts (env: Env, name: string): string[] {
  const entries = list(env, name)
  for (const entry of entries) {
    const match = HOST_PORT.exec(entry)
    if (match === null || Number(match[2]) > 65535) {
      throw new ConfigError(name, `entries must be host:port pairs such as 127.0.0.1:8080 or [::1]:9000 (got "${entry}")`)
    }
  }
  return entries.map(e => e.toLowerCase())
}

/** DNS_SERVERS entries: an IP address, optionally with a port (`1.1.1.1`, `127.0.0.1:5353`, `[::1]:53`). */
export function dnsServers (env: Env, name: string): string[] {
  const entries = list(env, name)
  for (const entry of entries) {
    const match = /^(?:(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?|\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?|([0-9a-fA-F:]+:[0-9a-fA-F:.]*))$/.exec(entry)
    const host = match?.[1] ?? match?.[3] ?? match?.[5]
    const port = match?.[2] ?? match?.[4]
    if (host === undefined || isIP(host) === 0 || (port !== undefined && Number(port) > 65535)) {
      throw new ConfigError(name, `entries must be IP addresses, optionally with a port, such as 1.1.1.1, 127.0.0.1:5353 or [::1]:53 (got "${entry}")`)
    }
  }
  return entries
}
