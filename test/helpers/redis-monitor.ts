// Redis's MONITOR read from a plain socket: each command the server runs, with its source. ioredis's own monitor mode
// is not used: its reply parser loses its place on some lines (BullMQ's commands among them: "Command queue state
// error"), where MONITOR's format is one line per command, its arguments quoted and escaped.
import net from 'node:net'

export interface MonitoredCommand {
  /** The arguments, the command's name first, unescaped. */
  args: string[]
  /** `lua` for a command a script ran, else the client's address. */
  source: string
}

export interface RedisMonitor {
  on (listener: (command: MonitoredCommand) => void): void
  stop (): void
}

/** Undoes MONITOR's escaping of an argument (\" \\ \n \r \t \a \b and \xHH). */
function unescape (quoted: string): string {
  return quoted.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_all, code: string) => {
    if (code.startsWith('x') && code.length === 3) return String.fromCharCode(parseInt(code.slice(1), 16))
    return ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[code] ?? code
  })
}

/** Parses one MONITOR line (`+<time> [<db> <source>] "<arg>" …`); undefined for anything else (`+OK`). */
export function parseMonitorLine (line: string): MonitoredCommand | undefined {
  const head = /^\+\d+\.\d+ \[\d+ ([^\]]+)\] /.exec(line)
  if (head === null) return undefined
  const args = [...line.slice(head[0].length).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map(m => unescape(m[1] ?? ''))
  return { args, source: head[1] ?? '' }
}

/** Connects to `url` (redis://host:port) and starts MONITOR; resolves once the server has answered +OK. */
export async function monitorRedis (url: string): Promise<RedisMonitor> {
  const { hostname, port } = new URL(url)
  const socket = net.connect({ host: hostname, port: Number(port) })
  const listeners: Array<(command: MonitoredCommand) => void> = []
  let buffered = ''
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.once('connect', () => { socket.write('MONITOR\r\n') })
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      buffered += chunk
      let end: number
      while ((end = buffered.indexOf('\r\n')) !== -1) {
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        if (line === '+OK') { socket.off('error', reject); resolve(); continue }
        const command = parseMonitorLine(line)
        if (command !== undefined) for (const listener of listeners) listener(command)
      }
    })
  })
  socket.on('error', () => {})
  return {
    on (listener) { listeners.push(listener) },
    stop () { socket.destroy() }
  }
}
