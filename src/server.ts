// Entry point: .env -> loadConfig -> createContext -> buildApp (x2) -> listen. Owns signals and shutdown:
// requests in flight finish, then the context closes (store, clients) in reverse order.
import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig, loadEnvFile } from './config.ts'
import { listenError } from './listen-error.ts'
import { createLogger } from './logger.ts'
import { re2Status } from './util/re2.ts'
import { bundledFingerprints } from './insights/fingerprints.ts'
import { closeContext, createContext } from './context.ts'
import { buildApp, buildMetricsApp } from './app.ts'
import { settleHeap } from './util/heap.ts'

async function main (): Promise<void> {
  let config
  let envFile = false
  try {
    envFile = loadEnvFile('.env')
    config = loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`)
      process.exit(1)
    }
    throw err
  }
  const log = createLogger({ level: config.logLevel })
  const re2 = re2Status()
  const runtime = { node: process.version, envFile: envFile ? '.env' : undefined }
  if (re2.active) log.info({ ...runtime, re2: true }, 're2 active: metadata URL matching runs in linear time')
  else log.warn({ ...runtime, re2: false, reason: re2.reason }, 're2 not loaded: metadata URL matching falls back to backtracking RegExp; see docs/operations.md#installing')
  // The fingerprint set of insights.technologies, compiled now rather than on the first request that asks for it.
  const tf = performance.now()
  const fingerprints = bundledFingerprints()
  log.info({ technologies: fingerprints.technologies.size, ms: Math.round(performance.now() - tf) }, 'fingerprint set compiled')
  const ctx = await createContext(config, log)
  const free = await buildApp(ctx, { plan: 'free' })
  const pro = await buildApp(ctx, { plan: 'pro' })
  // /metrics on its own port when METRICS_PORT is set (docs/api.md §12.2).
  const metrics = await buildMetricsApp(ctx)
  // Routes compiled, then one full collection before the first request: what starting left in V8's map of the
  // empty object slows every request until one runs (util/heap.ts).
  await Promise.all([free.ready(), pro.ready(), metrics?.ready()])
  log.info({ ms: Math.round(settleHeap()) }, 'heap settled after start')

  closeWithGrace({ delay: config.maxTimeout + 5000, logger: log }, async ({ signal, err }) => {
    if (err !== undefined) log.error({ err }, 'shutting down after an error')
    else log.info({ signal }, 'shutting down')
    ctx.closing = true
    await Promise.all([free.close(), pro.close(), metrics?.close()])
    await closeContext(ctx)
    log.flush()
  })

  // A port in use or a bad HOST: one line naming the variable to change, and the process ends (exit code 1).
  const listeners: Array<{ app: typeof free, variable: Parameters<typeof listenError>[1], port: number }> = [
    { app: free, variable: 'FREE_PORT', port: config.freePort },
    { app: pro, variable: 'PRO_PORT', port: config.proPort },
    ...(metrics === undefined ? [] : [{ app: metrics, variable: 'METRICS_PORT' as const, port: config.metricsPort ?? 0 }])
  ]
  for (const { app, variable, port } of listeners) {
    try {
      await app.listen({ port, host: config.host })
    } catch (err) {
      const explained = listenError(err, variable, port, config.host)
      if (explained === undefined) throw err
      process.stderr.write(`${explained.message}\n`)
      ctx.closing = true
      await Promise.all([free.close(), pro.close(), metrics?.close()])
      await closeContext(ctx)
      process.exit(1)
    }
  }
  log.info({
    free: config.freePort,
    pro: config.proPort,
    metrics: !config.metrics ? 'off' : config.metricsPort ?? 'public listeners',
    store: ctx.store.kind,
    storage: ctx.storage.kind
  }, 'pagecast listening')
  // A warm browser for the first render; /ready says ok while it starts, degraded if it would not (docs/api.md §12.2).
  // A start that fails is logged by the pool, which tries again after a backoff (docs/api.md §12.3).
  ctx.browser.warm().catch(() => {})
  // The filter lists load once, here, rather than in the first request with `adblock` (docs/browser.md#adblock).
  ctx.adblock.get().then(
    ({ stats }) => { log.info({ adblock: stats }, 'adblock filters loaded') },
    (err: unknown) => { log.error({ err }, 'adblock filters failed to load; renders with adblock will fail') }
  )
}

await main()
