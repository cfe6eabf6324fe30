// The Lighthouse worker thread: Lighthouse and puppeteer-core live here, never in the service's thread. Lighthouse
// leaves promises of its own unawaited, and when its browser is killed at a deadline they reject with nobody to
// catch them: in the service's thread that would end the process, here it is swallowed (the thread is terminated
// after such a run anyway, host.ts). The thread also keeps Lighthouse's modules loaded between runs, and its
// process-wide state (logger, performance marks) apart from the service's.
//
// One message per run: check the config as Lighthouse resolves it (a refusal is the request's fault), launch the
// browser (chromium.ts), run Lighthouse on it, close it, answer.
import { parentPort } from 'node:worker_threads'
import { launchLighthouseBrowser } from './chromium.ts'
import type { LaunchOptions, LighthouseBrowser } from './chromium.ts'
import { runConfig } from './config.ts'
import type { LighthouseOptions } from '../../schemas/options.ts'

export interface RunRequest {
  url: string
  /** What the request asked for: preset, output and settings. */
  options: LighthouseOptions
  /** ms left for the run when it was posted (config.ts cuts Lighthouse's waits to it). */
  budgetMs: number
  launch: LaunchOptions
  closeTimeoutMs: number
}

export type RunReply =
  | { ok: true, report: unknown }
  | { ok: false, kind: 'config' | 'run', message: string, stack?: string | undefined }

type LighthouseFn = (url: string, flags: unknown, config: unknown, page: unknown) => Promise<{ lhr: unknown, report: string | string[] } | undefined>
type InitializeConfig = (mode: 'navigation', config: unknown, flags: unknown) => Promise<unknown>

process.on('unhandledRejection', () => {})

function messageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

async function run (request: RunRequest): Promise<RunReply> {
  const { initializeConfig } = await import('lighthouse/core/config/config.js') as { initializeConfig: InitializeConfig }
  const { config, flags } = await runConfig(request.options, request.budgetMs)
  try {
    await initializeConfig('navigation', structuredClone(config), { ...flags })
  } catch (err) {
    return { ok: false, kind: 'config', message: messageOf(err).split('\n')[0] ?? '' }
  }
  const { default: lighthouse } = await import('lighthouse') as unknown as { default: LighthouseFn }
  let browser: LighthouseBrowser | undefined
  try {
    browser = await launchLighthouseBrowser(request.launch)
    const result = await lighthouse(request.url, flags, config, browser.page)
    if (result === undefined) throw new Error('Lighthouse gave no result')
    const report = request.options.output === 'json' ? result.lhr : (Array.isArray(result.report) ? result.report[0] : result.report)
    return { ok: true, report }
  } catch (err) {
    return { ok: false, kind: 'run', message: messageOf(err), stack: err instanceof Error ? err.stack : undefined }
  } finally {
    await browser?.close(request.closeTimeoutMs)
  }
}

parentPort?.on('message', (request: RunRequest) => {
  void run(request).then((reply) => {
    try {
      parentPort?.postMessage(reply)
    } catch (err) {
      parentPort?.postMessage({ ok: false, kind: 'run', message: `the report could not be passed on: ${messageOf(err)}` } satisfies RunReply)
    }
  })
})
