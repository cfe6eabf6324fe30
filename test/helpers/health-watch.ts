// Watches a listener from a thread of its own: a worker polls `url` (GET, loopback) every few milliseconds and keeps
// the longest answer time. The service's event loop is the test's too, so a watch from the test's own loop would
// stop with it and see nothing; a worker's requests wait on the socket while the service is blocked, and say so.
import { Worker } from 'node:worker_threads'

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const http = require('node:http')
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
let stopped = false
let worst = 0
let count = 0
function once () {
  if (stopped) { parentPort.postMessage({ worst, count }); agent.destroy(); return }
  const started = performance.now()
  const req = http.get(workerData.url, { agent }, (res) => {
    res.resume()
    res.on('end', () => {
      worst = Math.max(worst, performance.now() - started)
      count += 1
      setTimeout(once, workerData.everyMs)
    })
  })
  req.on('error', () => { setTimeout(once, workerData.everyMs) })
}
parentPort.on('message', () => { stopped = true })
once()
`

export interface HealthWatch {
  /** Stops polling; the longest answer time seen (ms) and how many answers came. */
  stop (): Promise<{ worstMs: number, count: number }>
}

/** Starts polling `url` (an http://127.0.0.1 address) every `everyMs`. */
export function watchHealth (url: string, everyMs = 20): HealthWatch {
  if (!url.startsWith('http://127.')) throw new Error(`health watch: loopback only, not ${url}`)
  const worker = new Worker(WORKER, { eval: true, workerData: { url, everyMs } })
  const done = new Promise<{ worstMs: number, count: number }>((resolve, reject) => {
    worker.once('message', (m: { worst: number, count: number }) => { resolve({ worstMs: m.worst, count: m.count }) })
    worker.once('error', reject)
  })
  return {
    async stop () {
      worker.postMessage('stop')
      const result = await done
      await worker.terminate()
      return result
    }
  }
}
