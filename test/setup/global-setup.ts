// Starts a real redis-server on a free loopback port for the whole run and hands its URL to the tests.
// scripts/system-deps.sh (npm's pretest) installs redis-server when the machine lacks it.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string
  }
}

export function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

async function waitForPort (port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>(resolve => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.end(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (ok) return
    await new Promise(r => setTimeout(r, 50))
  }
  throw new Error(`redis-server did not listen on ${port}`)
}

let redis: ChildProcess | undefined
let dir: string | undefined

export async function setup (project: TestProject): Promise<void> {
  const port = await freePort()
  dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-redis-'))
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore'
  })
  redis.on('error', err => { throw new Error(`cannot start redis-server (run scripts/system-deps.sh): ${err.message}`) })
  await waitForPort(port, Date.now() + 10_000)
  project.provide('redisUrl', `redis://127.0.0.1:${port}`)
}

export async function teardown (): Promise<void> {
  redis?.kill('SIGTERM')
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
}
