// A HOME of its own for each Chromium launch (the pool's and Lighthouse's). Chromium's crash reporter cannot be
// turned off without breaking the browser (chromium.ts): every launch starts two chrome_crashpad_handler processes,
// outside the browser's process group, whose database of minidumps (a crashed process's memory, the pages it held
// included) lives under $HOME/.config/chromium/Crash Reports. With HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME inside
// a fresh private folder (mkdtemp, mode 0700), that database belongs to one launch, and its handlers say so on their
// command line (`--database=<folder>/…`): once the browser is gone, they are killed and the folder removed, so no
// dump outlives the browser or reaches a later one, and no handler is left running.
//
// Fonts come from the system's fontconfig (its caches under /var/cache/fontconfig), not from the service user's
// home; FONTCONFIG_FILE / FONTCONFIG_PATH still reach the browser (config.ts CHILD_ENV_PREFIXES).
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { findPidsByArgumentPrefix, processStartTime } from './chromium.ts'
import { sleep } from '../util/abort.ts'

export interface LaunchHome {
  /** The folder: HOME of the browser. */
  readonly dir: string
  /** The browser's environment: the one given, with HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME in `dir`. */
  readonly env: Readonly<Record<string, string>>
  /**
   * Once the browser is gone: kills the crash handlers that name `dir` (only those), waits (up to 1 s) for them to
   * exit, and removes `dir`. Idempotent; never throws.
   */
  remove (): Promise<void>
}

/** The processes whose command line names `dir` as their crash database: this launch's crash handlers. */
export function crashHandlersOf (dir: string): number[] {
  return findPidsByArgumentPrefix(`--database=${dir}${path.sep}`)
}

async function killCrashHandlers (dir: string): Promise<void> {
  const pids = crashHandlersOf(dir)
  for (const pid of pids) {
    try { process.kill(pid, 'SIGKILL') } catch {}
  }
  for (let i = 0; i < 20 && pids.some((pid) => processStartTime(pid) !== undefined); i++) await sleep(50)
}

/** Makes the folder (under `tmpdir`, the OS's by default) for one launch of a browser that gets `env`. */
export async function createLaunchHome (env: Readonly<Record<string, string>>, tmpdir: string = os.tmpdir()): Promise<LaunchHome> {
  const dir = await mkdtemp(path.join(tmpdir, 'pagecast-home-'))
  let removed: Promise<void> | undefined
  return {
    dir,
    env: Object.freeze({ ...env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, '.config'), XDG_CACHE_HOME: path.join(dir, '.cache') }),
    async remove () {
      removed ??= (async () => {
        await killCrashHandlers(dir)
        await rm(dir, { recursive: true, force: true }).catch(() => {})
      })()
      await removed
    }
  }
}
