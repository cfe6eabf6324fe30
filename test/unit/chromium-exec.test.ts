// chromium-exec.sh, the pool's Chromium launcher: it merges every --disable-features switch into one that also
// lists PAGECAST_DISABLE_FEATURES (Chromium reads only the last), keeps every other argument as given and in order,
// and starts the executable without its two variables. A stand-in executable prints what it was given.
import { execFile } from 'node:child_process'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DISABLED_FEATURES, launchCommand } from '../../src/browser/chromium.ts'

const run = promisify(execFile)
let dir: string
let standIn: string

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pagecast-exec-'))
  standIn = path.join(dir, 'chromium')
  // One argument per line, then the launcher's variables as the executable sees them.
  await writeFile(standIn, '#!/bin/sh\nfor a in "$@"; do printf \'arg:%s\\n\' "$a"; done\nenv | grep \'^PAGECAST_\' || true\n')
  await chmod(standIn, 0o755)
})

afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function launch (args: string[], features = DISABLED_FEATURES.join(','), exe: string | null = standIn): Promise<string[]> {
  const command = launchCommand(exe ?? '', { PATH: process.env.PATH ?? '/usr/bin:/bin' })
  const env = { ...command.env, PAGECAST_DISABLE_FEATURES: features }
  if (exe === null) delete (env as Record<string, string | undefined>).PAGECAST_CHROMIUM
  const { stdout } = await run(command.executablePath, args, { env })
  return stdout.split('\n').filter((line) => line !== '')
}

describe('chromium-exec.sh', () => {
  it('merges every --disable-features into one last switch with its own features, the rest as given and in order', async () => {
    const lines = await launch(['--a', '--disable-features=X,Y', 'two words', '--b=c=d', '--disable-features=Z', '--e'], 'RenderDocument')
    expect(lines).toEqual(['arg:--a', 'arg:two words', 'arg:--b=c=d', 'arg:--e', 'arg:--disable-features=RenderDocument,X,Y,Z'])
  })

  it('adds the switch when the arguments have none, and none when there is nothing to disable', async () => {
    expect(await launch(['--a'], 'RenderDocument')).toEqual(['arg:--a', 'arg:--disable-features=RenderDocument'])
    expect(await launch(['--a'], '')).toEqual(['arg:--a'])
    expect(await launch([], '')).toEqual([])
  })

  it('leaves neither of its variables to the executable', async () => {
    const lines = await launch(['--a'])
    expect(lines.filter((line) => line.startsWith('PAGECAST_'))).toEqual([])
  })

  it('fails with a message, starting nothing, without an executable to start', async () => {
    const failed = await launch(['--a'], 'RenderDocument', null).then(() => undefined, (err: unknown) => err as { code: number, stderr: string })
    expect(failed?.code).not.toBe(0)
    expect(failed?.stderr).toMatch(/PAGECAST_CHROMIUM names no executable/)
  })
})
