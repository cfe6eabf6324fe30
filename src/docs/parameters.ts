// Every query parameter of the API, for /docs and /openapi.json (the contract is API.md §3).

export interface ParameterDoc {
  name: string
  type: 'string' | 'boolean' | 'number' | 'object' | 'array' | 'duration'
  default?: string
  /** The code the free listener answers with, for pro-only parameters. */
  pro?: string
  description: string
}

export const PARAMETERS: readonly ParameterDoc[] = [
  { name: 'url', type: 'string', description: 'Target page (http or https). Required.' },
  { name: 'meta', type: 'object', default: 'true', description: 'Normalized metadata: title, description, lang, author, publisher, image, url, date, logo. `false` skips it; `meta.<field>=true|false` selects fields.' },
  { name: 'data', type: 'object', description: 'Custom extraction rules: `data.<field>.selector`, `selectorAll`, `attr`, `type`, `evaluate`.' },
  { name: 'filter', type: 'string', description: 'Comma-separated dot paths of `data` to keep.' },
  { name: 'embed', type: 'string', description: 'Dot path of `data`; the response body becomes that value (files and media URLs are streamed).' },
  { name: 'stream', type: 'string', description: 'Alias: `stream=<field>` means `embed=<field>.url`.' },
  { name: 'screenshot', type: 'object', default: 'false', description: 'Screenshot of the page: `type` (png, jpeg, webp), `quality`, `fullPage`, `element`, `omitBackground`, `overlay.browser`, `overlay.background`, `codeScheme`.' },
  { name: 'pdf', type: 'object', default: 'false', description: 'PDF of the page: `format`, `width`, `height`, `margin`, `scale`, `landscape`, `printBackground`, `pageRanges`.' },
  { name: 'video', type: 'boolean', default: 'false', description: 'Adds a browser-playable video source.' },
  { name: 'audio', type: 'boolean', default: 'false', description: 'Adds a playable audio source.' },
  { name: 'iframe', type: 'object', default: 'false', description: 'oEmbed discovery; other `iframe.*` keys go to the provider.' },
  { name: 'insights', type: 'object', default: 'false', description: 'Technologies and Lighthouse: `insights.technologies`, `insights.lighthouse`.' },
  { name: 'palette', type: 'boolean', default: 'false', description: 'Dominant colours of every image-like media object.' },
  { name: 'ping', type: 'object', default: 'true', description: 'Checks each media URL before returning it; `ping.<kind>=false` skips one kind.' },
  { name: 'function', type: 'string', description: 'A JavaScript function run inside the page; the result is `data.function`.' },
  { name: 'device', type: 'string', default: 'Macbook Pro 13', description: 'Device preset: viewport and user agent.' },
  { name: 'viewport', type: 'object', description: '`width`, `height`, `deviceScaleFactor`, `isMobile`, `hasTouch`, `isLandscape`, merged over the device.' },
  { name: 'colorScheme', type: 'string', default: 'no-preference', description: '`light`, `dark` or `no-preference`.' },
  { name: 'mediaType', type: 'string', default: 'screen', description: '`screen` or `print` (`print` with `pdf`).' },
  { name: 'javascript', type: 'boolean', default: 'true', description: '`false` disables page scripts.' },
  { name: 'animations', type: 'boolean', default: 'false', description: '`false` stops CSS animations and transitions and emulates reduced motion.' },
  { name: 'adblock', type: 'boolean', default: 'true', description: 'Blocks ads, trackers and consent banners.' },
  { name: 'headers', type: 'object', pro: 'EHEADERS', description: '`headers.<name>=<value>` is sent to the target; so is the request header `x-api-header-<name>`.' },
  { name: 'prerender', type: 'string', default: 'auto', description: '`false`: plain HTTP GET; `true`: headless browser; `auto`: decided from the content.' },
  { name: 'waitUntil', type: 'array', default: 'auto', description: '`load`, `domcontentloaded`, `networkidle0`, `networkidle2` or `auto`.' },
  { name: 'waitForSelector', type: 'string', description: 'Waits until the element is visible.' },
  { name: 'waitForTimeout', type: 'duration', description: 'Fixed wait after `waitForSelector`.' },
  { name: 'timeout', type: 'duration', default: '28s', description: 'Budget for the whole request; lowered to MAX_TIMEOUT.' },
  { name: 'click', type: 'array', description: 'Selectors clicked in order.' },
  { name: 'scroll', type: 'string', description: 'Selector scrolled into view after the clicks.' },
  { name: 'modules', type: 'array', description: 'Injected `<script type="module">`: inline code or an http(s) URL.' },
  { name: 'scripts', type: 'array', description: 'Injected `<script>`: inline code or an http(s) URL.' },
  { name: 'styles', type: 'array', description: 'Injected `<style>`: inline CSS or an http(s) URL.' },
  { name: 'retry', type: 'number', default: '2', description: 'Retries of browser failures within the deadline (0-5).' },
  { name: 'proxy', type: 'string', pro: 'EPROXY', description: 'http, https or socks5 proxy URL for every request.' },
  { name: 'ttl', type: 'duration', default: '24h', pro: 'ETTL', description: 'Cache lifetime, 1 minute to 31 days (`min`, `max`).' },
  { name: 'staleTtl', type: 'duration', default: 'false', pro: 'ESTTL', description: 'Serve a stale copy while refreshing when less than this ttl is left.' },
  { name: 'force', type: 'boolean', default: 'false', description: 'Skip the cache lookup and recompute.' },
  { name: 'cacheKey', type: 'string', pro: 'ECACHEKEY', description: 'Extra segment of the cache key (up to 256 characters).' },
  { name: 'filename', type: 'string', pro: 'EFILENAME', description: 'Download name of the generated screenshot or PDF.' }
]
