// A DNS server on loopback UDP for the resolver's tests: answers from a zone function, after a delay when asked,
// and records every query it receives, so a test counts what reached the server.
import dgram from 'node:dgram'
import packet from 'dns-packet'

export type ZoneAnswer =
  | { addresses: string[], ttl?: number, delayMs?: number }
  | { rcode: 'NXDOMAIN' | 'SERVFAIL', delayMs?: number }
  | { stall: true }

export interface DnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  readonly server: string
  /** Every question received, in order. */
  readonly queries: Array<{ name: string, type: string }>
  count (name: string, type?: string): number
  close (): Promise<void>
}

const RCODES = { NXDOMAIN: 3, SERVFAIL: 2 } as const

export async function startDnsServer (zone: (name: string, type: 'A' | 'AAAA') => ZoneAnswer): Promise<DnsServer> {
  const socket = dgram.createSocket('udp4')
  const queries: Array<{ name: string, type: string }> = []
  const timers = new Set<NodeJS.Timeout>()
  socket.on('message', (message, remote) => {
    let query: packet.Packet
    try { query = packet.decode(message) } catch { return }
    const question = query.questions?.[0]
    if (question === undefined) return
    queries.push({ name: question.name.toLowerCase(), type: question.type })
    const type = question.type === 'AAAA' ? 'AAAA' : 'A'
    const answer = zone(question.name.toLowerCase(), type)
    if ('stall' in answer) return
    const flags = packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | packet.AUTHORITATIVE_ANSWER |
      ('rcode' in answer ? RCODES[answer.rcode] : 0)
    const records = 'addresses' in answer
      ? answer.addresses.filter(address => address.includes(':') === (type === 'AAAA'))
        .map((data): packet.StringAnswer => ({ type, name: question.name, ttl: answer.ttl ?? 60, class: 'IN', data }))
      : []
    const reply = packet.encode({ type: 'response', id: query.id ?? 0, flags, questions: [question], answers: records })
    const send = (): void => { socket.send(reply, remote.port, remote.address) }
    if ((answer.delayMs ?? 0) > 0) {
      const timer = setTimeout(() => { timers.delete(timer); send() }, answer.delayMs)
      timers.add(timer)
    } else {
      send()
    }
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.bind(0, '127.0.0.1', () => { socket.off('error', reject); resolve() })
  })
  return {
    server: `127.0.0.1:${socket.address().port}`,
    queries,
    count: (name, type) => queries.filter(query => query.name === name && (type === undefined || query.type === type)).length,
    async close () {
      for (const timer of timers) clearTimeout(timer)
      await new Promise<void>(resolve => socket.close(() => resolve()))
    }
  }
}
