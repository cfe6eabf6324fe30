// Real instances of the service, each its own process (src/server.ts) on free loopback ports, as replicas run: for
// the replica tests (test/integration/replicas.test.ts) and the scale benchmark (bench/scale.ts). Only PATH and HOME
// of this process's environment are passed on, plus what the caller gives.
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../setup/global-setup.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

export interface Instance {
  /** `http://127.0.0.1:<port>` of the free and pro listeners. */
  free: string
  pro: string
  child: ChildProcess
  exited: Promise<unknown>
  /** SIGKILL, as a crash. */
  kill (): void
}

/** How long an instance may take to answer /health. */
const START_MS = 90_000

/**
 * Starts one instance with `env` (besides its ports and HOST) and resolves once it is ready as a load balancer would
 * send it traffic: /health answers and /ready reports its store ok. On a loaded machine a first Redis connection may
 * still be coming up after /health answers, and until it is, QUOTA_FAIL_MODE=open serves free requests uncounted.
 */
export async function startInstance (env: Record<string, string>): Promise<Instance> {
  const [free, pro] = [await freePort(), await freePort()]
  const child = spawn(process.execPath, ['src/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env, FREE_PORT: String(free), PRO_PORT: String(pro), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const exited = new Promise(resolve => child.on('exit', resolve))
  const instance: Instance = {
    free: `http://127.0.0.1:${free}`,
    pro: `http://127.0.0.1:${pro}`,
    child,
    exited,
    kill: () => { child.kill('SIGKILL') }
  }
  // 90 s: a start (Chromium, the reader's worker threads) took over 30 s on a 2-core machine at load average 13.
  const deadline = Date.now() + START_MS
  while (Date.now() < deadline) {
    if (await storeReady(instance)) return instance
    await sleep(100)
  }
  child.kill('SIGKILL')
  throw new Error(`an instance did not start within ${START_MS / 1000} s`)
}

/** Whether the instance answers /ready with its store ok (the embedded store always is). */
async function storeReady (instance: Instance): Promise<boolean> {
  const ready = await fetch(`${instance.free}/ready`).then(async r => await r.json() as { checks?: { store?: string } }, () => undefined)
  return ready?.checks?.store === 'ok'
}

/** Stops instances at once and waits for them to be gone. */
export async function stopInstances (instances: readonly Instance[]): Promise<void> {
  for (const instance of instances) instance.kill()
  await Promise.all(instances.map(async i => await i.exited))
}
