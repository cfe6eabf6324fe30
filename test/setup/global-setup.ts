// Starts a real redis-server on a free loopback port for the whole run and hands its URL to the tests.
// scripts/system-deps.sh (npm's pretest) installs redis-server when the machine lacks it.
// Also starts s3rver (an S3-compatible server, in process) on a free loopback port with one bucket.
// Refuses to run under a Node older than the service's.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string
    /** s3rver: path-style endpoint, a bucket that exists, and s3rver's fixed credentials. */
    s3: { endpoint: string, bucket: string, accessKeyId: string, secretAccessKey: string }
  }
}

// s3rver ships no types: the little of it used here.
interface S3rverInstance {
  run (): Promise<net.AddressInfo>
  close (): Promise<void>
}
type S3rverConstructor = new (options: {
  address: string
  port: number
  directory: string
  silent: boolean
  configureBuckets: Array<{ name: string }>
}) => S3rverInstance

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
let s3: S3rverInstance | undefined
let s3Dir: string | undefined

const S3_BUCKET = 'pagecast-test'

async function startS3 (): Promise<string> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor
  s3Dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-s3-'))
  s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: s3Dir, silent: true, configureBuckets: [{ name: S3_BUCKET }] })
  const { port } = await s3.run()
  return `http://127.0.0.1:${port}`
}

export async function setup (project: TestProject): Promise<void> {
  // The service and the processes the tests start need Node 24 (package.json engines); npm test runs the tests
  // under it even on a machine whose own Node is older (scripts/node.sh, docs/operations.md#installing).
  if (Number(process.versions.node.split('.')[0]) < 24) {
    throw new Error(`the tests need Node 24 or later, not ${process.version}: run them with npm test (npm test -- <file> for one file)`)
  }
  const port = await freePort()
  dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-redis-'))
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore'
  })
  redis.on('error', err => { throw new Error(`cannot start redis-server (run scripts/system-deps.sh): ${err.message}`) })
  // Should the runner die before teardown, its redis-server goes with it.
  const child = redis
  process.once('exit', () => { child.kill('SIGTERM') })
  await waitForPort(port, Date.now() + 10_000)
  project.provide('redisUrl', `redis://127.0.0.1:${port}`)
  project.provide('s3', { endpoint: await startS3(), bucket: S3_BUCKET, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })
}

export async function teardown (): Promise<void> {
  redis?.kill('SIGTERM')
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  await s3?.close().catch(() => undefined)
  if (s3Dir !== undefined) rmSync(s3Dir, { recursive: true, force: true })
}
