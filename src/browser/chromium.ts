// Finding the Chromium executable (docs/api.md §12.1 CHROMIUM_PATH) and the switches every launch gets.
import { execFileSync } from 'node:child_process'
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'

/** Looked for on PATH, in this order, when no path is configured. */
export const CHROMIUM_NAMES: readonly string[] = Object.freeze(['chromium', 'chromium-browser', 'google-chrome'])

export interface FindChromiumOptions {
  /** CHROMIUM_PATH: used as is when set (it must be an executable file). */
  chromiumPath?: string | undefined
  /**
   * The PATH to search, `:`-separated. When absent, the process's own PATH is consulted through `/bin/sh -c
   * 'command -v …'` (nothing here reads process.env). The pool always gives one (its child environment's PATH),
   * so the service itself starts no shell with its own environment.
   */
  searchPath?: string | undefined
}

function isExecutableFile (file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}

function lookupInShell (name: string): string | undefined {
  try {
    const found = execFileSync('/bin/sh', ['-c', `command -v ${name}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim()
    return found !== '' && path.isAbsolute(found) && isExecutableFile(found) ? found : undefined
  } catch {
    return undefined
  }
}

/**
 * The browser executable: CHROMIUM_PATH when given, else the first of chromium, chromium-browser and google-chrome
 * found on PATH. Throws an Error naming what was tried when there is none.
 */
export function findChromium (options: FindChromiumOptions): string {
  if (options.chromiumPath !== undefined && options.chromiumPath !== '') {
    if (!isExecutableFile(options.chromiumPath)) {
      throw new Error(`CHROMIUM_PATH ${options.chromiumPath} is not an executable file`)
    }
    return options.chromiumPath
  }
  for (const name of CHROMIUM_NAMES) {
    if (options.searchPath !== undefined) {
      for (const dir of options.searchPath.split(path.delimiter)) {
        if (dir === '') continue
        const candidate = path.join(dir, name)
        if (isExecutableFile(candidate)) return candidate
      }
    } else {
      const found = lookupInShell(name)
      if (found !== undefined) return found
    }
  }
  throw new Error(`no Chromium found: set CHROMIUM_PATH or put one of ${CHROMIUM_NAMES.join(', ')} on PATH`)
}

export interface ChromiumArgsOptions {
  /** Host of the egress proxy: the only name Chromium's own resolver may answer (it is an IP literal here). */
  proxyHost?: string
  extra?: readonly string[]
}

/**
 * Launch switches, on top of Playwright's own. Chromium must not dial out by itself (background networking,
 * component updates, sync, QUIC), must not resolve names itself (every request goes through the egress proxy,
 * which resolves and checks; its resolver is made to fail everything else), and WebRTC may not send UDP
 * around the proxy. No `--disable-features` here: Chromium keeps only the last one, and Playwright's matters
 * (launchCommand adds DISABLED_FEATURES to it).
 */
export function chromiumArgs (options: ChromiumArgsOptions = {}): string[] {
  const proxyHost = options.proxyHost ?? '127.0.0.1'
  return [
    '--no-sandbox',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-breakpad',
    '--disable-domain-reliability',
    '--no-pings',
    '--mute-audio',
    '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    `--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE ${proxyHost}`,
    ...(options.extra ?? [])
  ]
}

/**
 * Chromium features the pool's browser runs without, on top of the ones Playwright turns off. RenderDocument gives
 * every cross-document navigation a new RenderFrameHost (and RenderView): with the reset's blank document that is
 * two per job, and it was about a third of the CPU of a screenshot job, browser and renderer (docs/benchmarks.md,
 * "Chromium without RenderDocument"). Without it a same-site navigation reuses the frame's host, as Chromium did
 * before the feature; what a job leaves is cleared by the reset either way (pool/lease.ts).
 */
export const DISABLED_FEATURES: readonly string[] = Object.freeze(['RenderDocument'])

/** The launcher that merges --disable-features switches (its header says why). */
const EXEC_SCRIPT = path.join(import.meta.dirname, 'chromium-exec.sh')

/**
 * How to start `executablePath` with `env` so that DISABLED_FEATURES are off as well as Playwright's own list:
 * through chromium-exec.sh, told the executable and the features in two variables it removes before Chromium starts.
 */
export function launchCommand (executablePath: string, env: Readonly<Record<string, string>>): { executablePath: string, env: Record<string, string> } {
  return {
    executablePath: EXEC_SCRIPT,
    env: { ...env, PAGECAST_CHROMIUM: executablePath, PAGECAST_DISABLE_FEATURES: DISABLED_FEATURES.join(',') }
  }
}

// ---------------------------------------------------------------- processes (Linux /proc)
//
// Playwright starts Chromium as the leader of its own process group, and every helper (zygotes, renderers, GPU,
// network and storage services) stays in that group. So the group is the tree to kill when closing hangs or the
// browser died and left children behind. Crashpad is NOT off, whatever --disable-breakpad suggests: Chromium 156 on
// Linux starts two chrome_crashpad_handler processes, double-forked out of the group (parent: init), with their
// database (minidumps of crashed processes: their memory, pages included) under $HOME/.config/chromium/Crash
// Reports. Its only off switch, --disable-crashpad-for-testing, breaks the network service (every navigation times
// out), and BREAKPAD_DUMP_LOCATION does not move its database. So each launch gets a HOME of its own
// (launch-home.ts): its handlers are the processes whose `--database=` names that folder, and they are killed and
// the folder removed when that browser is gone.

export interface ProcessInfo {
  pid: number
  ppid: number
  pgrp: number
  /** Start time in clock ticks since boot: tells a process from a later one that got the same pid. */
  startTime: number
}

function readStat (pid: number): ProcessInfo | undefined {
  let text: string
  try { text = readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { return undefined }
  // `pid (comm) state ppid pgrp session ...`; comm may hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const state = fields[0]
  if (state === 'Z' || state === 'X') return undefined
  return { pid, ppid: Number(fields[1]), pgrp: Number(fields[2]), startTime: Number(fields[19]) }
}

function allPids (): number[] {
  try {
    return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number)
  } catch {
    return []
  }
}

/** The live (non-zombie) processes of a process group. Empty where /proc is missing. */
export function processGroupMembers (pgrp: number): ProcessInfo[] {
  const members: ProcessInfo[] = []
  for (const pid of allPids()) {
    const info = readStat(pid)
    if (info !== undefined && info.pgrp === pgrp) members.push(info)
  }
  return members
}

/** The pid of the process whose command line carries `marker` (a switch only one browser was given). */
export function findPidByMarker (marker: string): number | undefined {
  for (const pid of allPids()) {
    let cmdline: string
    try { cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8') } catch { continue }
    if (cmdline.split('\0').includes(marker)) return pid
  }
  return undefined
}

/** The live processes with an argument that starts with `prefix` (`--database=<a launch's own HOME>/`). */
export function findPidsByArgumentPrefix (prefix: string): number[] {
  const found: number[] = []
  for (const pid of allPids()) {
    let cmdline: string
    try { cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8') } catch { continue }
    if (cmdline.split('\0').some((arg) => arg.startsWith(prefix)) && readStat(pid) !== undefined) found.push(pid)
  }
  return found
}

/** SIGKILLs every live member of a browser's process group; returns how many were signalled. */
export function killProcessGroup (pgrp: number, leaderStartTime: number | undefined): number {
  const leader = readStat(pgrp)
  // A live leader that is not the browser we started means the pid was reused: leave that group alone.
  if (leader !== undefined && leaderStartTime !== undefined && leader.startTime !== leaderStartTime) return 0
  let killed = 0
  for (const member of processGroupMembers(pgrp)) {
    if (leaderStartTime !== undefined && member.startTime < leaderStartTime) continue
    try {
      process.kill(member.pid, 'SIGKILL')
      killed += 1
    } catch {}
  }
  return killed
}

/** The start time of a live process, for killProcessGroup. */
export function processStartTime (pid: number): number | undefined {
  return readStat(pid)?.startTime
}
