// The Prism theme ids accepted by `screenshot.codeScheme` (docs/api.md §3.2): the themes of the
// `prism-themes` package (1.9.x), each named by its file `themes/prism-<id>.css` without the prefix
// and suffix. The package itself is not a dependency yet; whoever renders the theme needs its CSS.

export const DEFAULT_CODE_SCHEME = 'atom-dark'

export const CODE_SCHEMES: readonly string[] = Object.freeze([
  'a11y-dark',
  'atom-dark',
  'base16-ateliersulphurpool.light',
  'cb',
  'coldark-cold',
  'coldark-dark',
  'coy-without-shadows',
  'darcula',
  'dracula',
  'duotone-dark',
  'duotone-earth',
  'duotone-forest',
  'duotone-light',
  'duotone-sea',
  'duotone-space',
  'ghcolors',
  'gruvbox-dark',
  'gruvbox-light',
  'holi-theme',
  'hopscotch',
  'laserwave',
  'lucario',
  'material-dark',
  'material-light',
  'material-oceanic',
  'night-owl',
  'nord',
  'one-dark',
  'one-light',
  'pojoaque',
  'shades-of-purple',
  'solarized-dark-atom',
  'synthwave84',
  'vs',
  'vsc-dark-plus',
  'xonokai',
  'z-touch'
])

/** The canonical id for `name` (any case, with or without `prism-` and `.css`), or undefined. */
export function resolveCodeScheme (name: string): string | undefined {
  let id = name.trim().toLowerCase()
  if (id.endsWith('.css')) id = id.slice(0, -4)
  if (id.startsWith('prism-')) id = id.slice(6)
  return CODE_SCHEMES.includes(id) ? id : undefined
}

/** The file name of a bundled theme inside the `prism-themes` package. */
export function codeSchemeFile (id: string): string {
  return `themes/prism-${id}.css`
}
