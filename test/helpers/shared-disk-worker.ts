// A second (and third) process on one storage folder, for test/contract/disk-shared.test.ts. Run with node:
//   put  <dir> <key> <fill byte> <rounds> <size>   rewrites the key `rounds` times with `size` bytes of `fill`
//   lock <dir> <key> <id> <rounds> <journal>       takes the key's lock `rounds` times, journaling enter/exit
// It prints "ready" once set up and waits for a line on stdin, so that both workers start together.
import { appendFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import pino from 'pino'
import { createDiskStorage } from '../../src/storage/disk.ts'
import { withFileLock } from '../../src/storage/file-lock.ts'

const [mode, dir = '', key = '', arg = '', roundsText = '0', extra = ''] = process.argv.slice(2)
const rounds = Number(roundsText)

process.stdout.write('ready\n')
await new Promise((resolve) => process.stdin.once('data', resolve))
process.stdin.pause()

if (mode === 'put') {
  const storage = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0 }, { log: pino({ level: 'silent' }) })
  const body = Buffer.alloc(Number(extra), Number(arg))
  for (let i = 0; i < rounds; i++) await storage.put(key, body, { contentType: 'image/png', maxAgeSeconds: 60 + Number(arg) })
  await storage.close()
} else if (mode === 'lock') {
  for (let i = 0; i < rounds; i++) {
    await withFileLock(dir, key, async () => {
      appendFileSync(extra, `enter ${arg}\n`)
      await sleep(1)
      appendFileSync(extra, `exit ${arg}\n`)
    })
  }
} else {
  throw new Error(`unknown mode ${String(mode)}`)
}
process.stdout.write('done\n')
