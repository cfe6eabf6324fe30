// The Chromium of one Lighthouse run (started inside the Lighthouse worker, worker.ts): the same binary and switches
// as the pool's (chromium.ts), a profile of its own in a fresh temporary folder, the service's child environment and
// nothing else, and every request it makes sent through an egress proxy (egress-proxy.ts), loopback included
// (`<-loopback>` takes loopback out of Chromium's implicit proxy bypass list), so the address guard sees each one.
//
// Lighthouse talks to it through puppeteer-core over a pipe (`--remote-debugging-pipe`): no DevTools port is
// opened, so no other local process can take the browser over while it runs. puppeteer-core starts Chromium
// detached, as the leader of its own process group, so the whole tree goes with one group kill, which the service's
// thread can do by the marker on the command line (killLighthouseBrowser); Lighthouse's own launcher
// (chrome-launcher) is never used.
import type { Browser, Page } from 'puppeteer-core'
import { chromiumArgs, findPidByMarker, killProcessGroup, processGroupMembers, processStartTime } from '../chromium.ts'
import { sleep } from '../../util/abort.ts'

/** The switch that marks a Lighthouse Chromium on its command line (`--pagecast-lighthouse=<uuid>`). */
export const LIGHTHOUSE_MARKER = '--pagecast-lighthouse'

export interface LaunchOptions {
  executablePath: string
  /** The egress proxy's `http://host:port`. */
  proxyServer: string
  /** The whole environment of the browser (config.childEnv). */
  env: Readonly<Record<string, string>>
  /** A fresh, empty folder for the profile (the caller removes it). */
  userDataDir: string
  /** This run's `${LIGHTHOUSE_MARKER}=<uuid>`. */
  marker: string
  timeoutMs: number
}

export interface LighthouseBrowser {
  readonly browser: Browser
  readonly page: Page
  /** Closes the browser, killing what is left of its process group after `closeTimeoutMs`. */
  close (closeTimeoutMs: number): Promise<void>
}

async function waitForGroup (pid: number): Promise<void> {
  for (let i = 0; i < 20 && processGroupMembers(pid).length > 0; i++) await sleep(50)
}

/** Kills the process group of the browser carrying `marker`, and waits (up to 1 s) for it to be gone. */
export async function killLighthouseBrowser (marker: string): Promise<void> {
  const pid = findPidByMarker(marker)
  if (pid === undefined) return
  killProcessGroup(pid, processStartTime(pid))
  await waitForGroup(pid)
}

export async function launchLighthouseBrowser (options: LaunchOptions): Promise<LighthouseBrowser> {
  const { default: puppeteer } = await import('puppeteer-core')
  let browser: Browser
  try {
    browser = await puppeteer.launch({
      executablePath: options.executablePath,
      pipe: true,
      headless: true,
      userDataDir: options.userDataDir,
      args: chromiumArgs({
        proxyHost: new URL(options.proxyServer).hostname,
        extra: [`--proxy-server=${options.proxyServer}`, '--proxy-bypass-list=<-loopback>', options.marker]
      }),
      env: { ...options.env },
      timeout: Math.max(1, options.timeoutMs),
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false
    })
  } catch (err) {
    await killLighthouseBrowser(options.marker)
    throw err
  }
  const pid = browser.process()?.pid
  const startTime = pid === undefined ? undefined : processStartTime(pid)
  const close = async (closeTimeoutMs: number): Promise<void> => {
    if (browser.connected) await Promise.race([browser.close().catch(() => {}), sleep(closeTimeoutMs)])
    if (pid === undefined) return
    // Children exit shortly after the browser; whatever has not is killed.
    await waitForGroup(pid)
    killProcessGroup(pid, startTime)
    await waitForGroup(pid)
  }
  try {
    return { browser, page: await browser.newPage(), close }
  } catch (err) {
    await close(0)
    throw err
  }
}
