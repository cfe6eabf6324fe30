// Real Redis topologies for the tests, started from the machine's redis-server (scripts/system-deps.sh installs it)
// on free loopback ports, each in its own temporary directory: a plain node, a Cluster of masters with the hash
// slots split between them, and a master with a replica watched by a Sentinel that fails over quickly.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from '../setup/global-setup.ts'

const SLOTS = 16384

export interface RedisProcess {
  port: number
  process: ChildProcess
  /** Stops it at once (SIGKILL), as a crashed node. */
  kill (): void
}

export interface Topology {
  close (): Promise<void>
}

async function waitFor (check: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function command<T> (port: number, run: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  // Failures reach the caller through the command; nodes not up yet are expected while waiting.
  redis.on('error', () => {})
  try {
    await redis.connect()
    return await run(redis)
  } finally {
    redis.disconnect()
  }
}

function startServer (dir: string, port: number, args: string[]): RedisProcess {
  const child = spawn('redis-server', [...args, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore'
  })
  return { port, process: child, kill: () => { child.kill('SIGKILL') } }
}

async function started (node: RedisProcess): Promise<RedisProcess> {
  await waitFor(async () => await command(node.port, async r => await r.ping()) === 'PONG', `redis-server on ${node.port}`)
  return node
}

/** One plain redis-server of its own (tests whose keys must not meet the run's shared Redis). */
export async function startRedisNode (): Promise<Topology & { node: RedisProcess, url: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-redis-'))
  try {
    const node = await started(startServer(dir, await freePort(), []))
    return {
      node,
      url: `redis://127.0.0.1:${node.port}`,
      async close () {
        node.kill()
        rmSync(dir, { recursive: true, force: true })
      }
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
}

/** `count` masters sharing the hash slots, each in cluster mode. */
export async function startCluster (count = 3): Promise<Topology & { nodes: RedisProcess[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-cluster-'))
  const nodes: RedisProcess[] = []
  try {
    for (let i = 0; i < count; i++) {
      const port = await freePort()
      nodes.push(await started(startServer(dir, port, ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`])))
    }
    const per = Math.ceil(SLOTS / count)
    for (const [i, node] of nodes.entries()) {
      const first = i * per
      const last = Math.min(SLOTS - 1, first + per - 1)
      await command(node.port, async r => await r.call('CLUSTER', 'ADDSLOTSRANGE', String(first), String(last)))
    }
    for (const node of nodes.slice(1)) await command(nodes[0]!.port, async r => await r.call('CLUSTER', 'MEET', '127.0.0.1', String(node.port)))
    for (const node of nodes) {
      await waitFor(async () => String(await command(node.port, async r => await r.call('CLUSTER', 'INFO'))).includes('cluster_state:ok'), 'cluster_state:ok')
    }
  } catch (err) {
    for (const node of nodes) node.kill()
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  return {
    nodes,
    async close () {
      for (const node of nodes) node.kill()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** A master, its replica, and one Sentinel (quorum 1) that calls the master down after 500 ms. */
export async function startSentinelSet (name = 'pagecast'): Promise<Topology & { master: RedisProcess, replica: RedisProcess, sentinel: RedisProcess }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-sentinel-'))
  const spawned: RedisProcess[] = []
  try {
    const master = await started(startServer(dir, await freePort(), []))
    spawned.push(master)
    const replica = await started(startServer(dir, await freePort(), ['--replicaof', '127.0.0.1', String(master.port)]))
    spawned.push(replica)
    await waitFor(async () => String(await command(replica.port, async r => await r.info('replication'))).includes('master_link_status:up'), 'the replica to sync')
    const sentinelPort = await freePort()
    const conf = path.join(dir, 'sentinel.conf')
    writeFileSync(conf, [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${name} 500`,
      `sentinel failover-timeout ${name} 3000`,
      `sentinel parallel-syncs ${name} 1`,
      ''
    ].join('\n'))
    const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' })
    const sentinel: RedisProcess = { port: sentinelPort, process: child, kill: () => { child.kill('SIGKILL') } }
    spawned.push(sentinel)
    await waitFor(async () => {
      const info = String(await command(sentinelPort, async r => await r.call('SENTINEL', 'REPLICAS', name)))
      return info.includes(String(replica.port))
    }, 'the sentinel to see the replica')
    return {
      master,
      replica,
      sentinel,
      async close () {
        for (const node of spawned) node.kill()
        rmSync(dir, { recursive: true, force: true })
      }
    }
  } catch (err) {
    for (const node of spawned) node.kill()
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
}

/** The master's port as the Sentinel now names it. */
export async function sentinelMasterPort (sentinelPort: number, name = 'pagecast'): Promise<number> {
  const [, port] = await command(sentinelPort, async r => await r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string]
  return Number(port)
}
