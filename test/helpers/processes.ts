// Processes as /proc shows them, for tests that read the browser's environment (secrets.test.ts), kill a renderer
// mid-job (retry.test.ts), look for Chromiums left behind (overload.test.ts, lighthouse.test.ts) or for the crash
// handlers of one launch (browser-pool.test.ts, lighthouse.test.ts); and the ports
// this process listens on (isolation.test.ts finds its pool's egress proxies). Linux only, like the rest of the suite.
import { tracingChannel } from 'node:diagnostics_channel'
import type { AddressInfo, Server } from 'node:net'
import { readdirSync, readFileSync } from 'node:fs'

/** pid, parent and process group of every live process. */
export function processTable (): Array<{ pid: number, ppid: number, pgrp: number }> {
  const table: Array<{ pid: number, ppid: number, pgrp: number }> = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8') } catch { continue }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (fields[0] === 'Z') continue
    table.push({ pid: Number(name), ppid: Number(fields[1]), pgrp: Number(fields[2]) })
  }
  return table
}

/** `roots` and every live process under them, by parent pid. */
function withDescendants (roots: Iterable<number>, table = processTable()): Set<number> {
  const found = new Set<number>(roots)
  for (let grew = true; grew;) {
    grew = false
    for (const p of table) {
      if (found.has(p.ppid) && !found.has(p.pid)) { found.add(p.pid); grew = true }
    }
  }
  return found
}

/** The live processes under `root` (not `root` itself), with their command lines joined by spaces. */
export function descendantsOf (root: number): Array<{ pid: number, cmd: string }> {
  const found = withDescendants([root])
  found.delete(root)
  return [...found].map(pid => ({ pid, cmd: commandLine(pid).join(' ') }))
}

/** The browser and every process under it: its process group, and its descendants by parent pid. */
export function browserProcesses (browserPid: number): number[] {
  const table = processTable()
  return [...withDescendants([browserPid, ...table.filter(p => p.pgrp === browserPid).map(p => p.pid)], table)]
}

/** The command line of a process, its arguments in order ([] once it is gone). */
export function commandLine (pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(arg => arg !== '')
  } catch {
    return []
  }
}

/** NAME=value entries of a process's environment as it was started. */
export function environOf (pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(entry => entry !== '')
}

/** HOME in a process's environment as it was started (undefined when it had none). */
export function homeOf (pid: number): string | undefined {
  return environOf(pid).find(entry => entry.startsWith('HOME='))?.slice('HOME='.length)
}

/** The live chrome_crashpad_handler processes whose crash database is inside `home` (only that folder's). */
export function crashHandlersIn (home: string): number[] {
  return processTable().map(p => p.pid).filter(pid => commandLine(pid).some(arg => arg.startsWith(`--database=${home}/`)))
}

/** Whether `pid` is a live process (not gone, not a zombie). */
export function isAlive (pid: number): boolean {
  return processTable().some(p => p.pid === pid)
}

/** The renderer processes of a browser (Chromium's `--type=renderer` children; a zygote's child rewrites its
 * command line as one string, so the flag is looked for inside the arguments). */
export function rendererProcesses (browserPid: number): number[] {
  return browserProcesses(browserPid).filter(pid => commandLine(pid).some(arg => /(?:^|\s)--type=renderer(?:\s|$)/.test(arg)))
}

/**
 * The servers this process starts listening on `host` from now on, seen through Node's `net.server.listen` tracing
 * channel: nothing else on the machine is looked at. `ports()` gives the ones still listening; `stop()` unsubscribes.
 */
export function watchListening (host: string): { ports: () => number[], stop: () => void } {
  const servers = new Set<Server>()
  const channel = tracingChannel<unknown, { server: Server }>('net.server.listen')
  const subscriber = {
    start () {},
    end () {},
    asyncStart () {},
    asyncEnd ({ server }: { server: Server }) {
      const address = server.address()
      if (address !== null && typeof address === 'object' && address.address === host) servers.add(server)
    },
    error () {}
  }
  channel.subscribe(subscriber)
  return {
    ports: () => [...servers].filter(server => server.listening).map(server => (server.address() as AddressInfo).port),
    stop: () => { channel.unsubscribe(subscriber) }
  }
}
