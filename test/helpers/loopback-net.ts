// A safety net for tests of outbound code: every TCP/TLS connection this process opens goes through
// net.Socket#connect (net.connect and tls.connect both do); anything but a loopback IP literal is
// destroyed before a packet leaves and recorded, so a broken guard fails a test instead of reaching out.
import net from 'node:net'

export interface ConnectAttempt {
  host: string
  port: number
}

function isLoopbackLiteral (host: string): boolean {
  if (net.isIPv4(host)) return host.startsWith('127.')
  if (net.isIPv6(host)) return host === '::1' || /^::ffff:127\./i.test(host)
  return false
}

function targetOf (args: unknown[]): ConnectAttempt | { path: string } {
  // net.connect hands Socket#connect its normalized [options, callback] array; tls.connect passes options.
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0]
  if (typeof first === 'object' && first !== null) {
    const options = first as { host?: string, port?: number | string, path?: string }
    if (typeof options.path === 'string') return { path: options.path }
    return { host: options.host ?? 'localhost', port: Number(options.port) }
  }
  return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: Number(first) }
}

/**
 * Installs the net; `attempts` receives every TCP attempt, `violations` the refused ones (host names count
 * as violations too: they could be looked up to anything). Returns the function that removes it.
 */
export function installLoopbackNet (record: { attempts?: ConnectAttempt[], violations: ConnectAttempt[] }): () => void {
  const originalConnect = net.Socket.prototype.connect
  net.Socket.prototype.connect = function guardedConnect (this: net.Socket, ...args: unknown[]): net.Socket {
    const target = targetOf(args)
    if ('host' in target) {
      record.attempts?.push(target)
      if (!isLoopbackLiteral(target.host)) {
        record.violations.push(target)
        this.destroy(new Error(`test safety net: refused a connection to ${target.host}:${target.port}`))
        return this
      }
    }
    return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args)
  } as typeof originalConnect
  return () => { net.Socket.prototype.connect = originalConnect }
}
