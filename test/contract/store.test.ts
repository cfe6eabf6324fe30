import { inject } from 'vitest'
import pino from 'pino'
import { storeContract } from './store.contract.ts'
import { createMemoryStore } from '../../src/store/memory.ts'
import { createRedisStore } from '../../src/store/redis.ts'

storeContract('memory', async () => createMemoryStore({ maxEntries: 1000 }))
storeContract('redis', async () => createRedisStore({ connection: { kind: 'node', url: inject('redisUrl') } }, { log: pino({ level: 'silent' }) }))
