// The one error type and the one catalog: every public code, its HTTP status, its message and its docs text.
// Nothing else in the codebase pairs a code with a status.

export const ERROR_CATALOG = {
  EAUTH: {
    status: 403,
    message: 'Invalid API key. Make sure you are attaching your API key as `x-api-key` header.',
    when: 'Pro listener: the `x-api-key` header is missing or not registered.'
  },
  ESIGNATURE: {
    status: 403,
    message: 'The signed link does not verify: check its `keyId`, `expires` and `signature`.',
    when: 'Pro listener, no `x-api-key`: a signed link\'s `keyId` is unknown or its tenant has no signing secret, its `signature` is missing, not last or does not verify, or its `expires` is past; `data` names the part (docs/api.md §16).'
  },
  EPRO: {
    status: 400,
    message: 'The free endpoint does not take an API key: send requests that carry `x-api-key` to the pro endpoint.',
    when: 'Free listener: an `x-api-key` header was sent. Use the pro endpoint for keyed requests.'
  },
  ERATE: {
    status: 429,
    message: 'Your daily rate limit has been reached. Wait until the quota resets or use the pro endpoint.',
    when: 'The free quota for this client IP is used up, or a tenant\'s `daily` or `monthly` limit is spent (`data` names which); `Retry-After` says when it resets.'
  },
  EPLAN: {
    status: 403,
    message: 'The plan of this API key does not allow the request: see `data` for the parameter.',
    when: 'Pro listener: the tenant\'s plan denies a parameter given (`deny`), or `ttl` is over its `maxTtl` (docs/tenants.md).'
  },
  ECONCURRENCY: {
    status: 429,
    message: 'Too many requests of this API key are being computed at once: retry in a moment.',
    when: 'Pro listener: the tenant\'s `concurrency` stayed full until the request\'s deadline; `Retry-After: 1`.'
  },
  ETTL: {
    status: 403,
    message: 'The `ttl` parameter is only available on the pro plan.',
    when: 'Free listener: `ttl` was given.'
  },
  ESTTL: {
    status: 403,
    message: 'The `staleTtl` parameter is only available on the pro plan.',
    when: 'Free listener: `staleTtl` was given.'
  },
  ECACHEKEY: {
    status: 403,
    message: 'The `cacheKey` parameter is only available on the pro plan.',
    when: 'Free listener: `cacheKey` was given.'
  },
  EHEADERS: {
    status: 403,
    message: 'Forwarding headers (`headers.*` or `x-api-header-*`) is only available on the pro plan.',
    when: 'Free listener: `headers.*` or an `x-api-header-*` request header was given.'
  },
  EPROXY: {
    status: 403,
    message: 'The `proxy` parameter is only available on the pro plan.',
    when: 'Free listener: `proxy` was given.'
  },
  EFILENAME: {
    status: 403,
    message: 'The `filename` parameter is only available on the pro plan.',
    when: 'Free listener: `filename` was given.'
  },
  EROBOTSTXT: {
    status: 403,
    message: 'The `ignoreRobotsTxt` option is only available on the pro plan.',
    when: 'Free listener: a crawl asked for `ignoreRobotsTxt: true` (docs/jobs.md).'
  },
  EINVALURL: {
    status: 400,
    message: 'The request was not processed: the `url` parameter is invalid.',
    when: '`url` is missing, unparseable, not http(s) or has no host, or the target does not resolve, cannot be reached, or sends an HTML body over `MAX_HTML_BYTES`, or its rendered DOM serializes to more than that.'
  },
  EFORMAT: {
    status: 400,
    message: 'The format needs a language model, which pagecast does not run.',
    when: 'Firecrawl API (docs/firecrawl.md): a scrape asked for `json`, `extract`, `summary` or `changeTracking`; `details.formats` names it.'
  },
  EFORBIDDENURL: {
    status: 400,
    message: 'The request was not processed: the target address is not allowed.',
    when: 'The target, a redirect or the proxy is a blocked literal or resolves to a non-public address.'
  },
  EMAXREDIRECTS: {
    status: 400,
    message: 'The target redirected too many times.',
    when: 'More than 10 redirects.'
  },
  EINVALPROXY: {
    status: 400,
    message: 'The `proxy` parameter is invalid.',
    when: '`proxy` is unparseable or uses an unsupported scheme, or the proxy cannot be reached, fails its handshake or refuses the credentials.'
  },
  EINVALTTL: {
    status: 400,
    message: 'The `ttl` parameter is invalid: it must be a duration between 1 minute and 31 days.',
    when: '`ttl` is not a duration, or is outside 1 min to 31 days.'
  },
  EINVALSTTL: {
    status: 400,
    message: 'The `staleTtl` parameter is invalid: it must be a duration or a boolean, lower than `ttl`.',
    when: '`staleTtl` is neither a duration nor a boolean, or is not lower than `ttl`.'
  },
  EINVALOVERLAYBG: {
    status: 400,
    message: 'The `screenshot.overlay.background` parameter is invalid.',
    when: '`screenshot.overlay.background` is not a valid colour, gradient or URL.'
  },
  EINVALDATA: {
    status: 400,
    message: 'The `data` parameter is invalid.',
    when: 'A `data.<field>` is not a rule object or an array of them, or holds invalid JSON or an unknown `type`.'
  },
  EINVALFUNCTION: {
    status: 400,
    message: 'The `function` parameter is invalid.',
    when: '`function` does not parse, its compressed payload is bad, or a free source is too large.'
  },
  EINVALEVAL: {
    status: 400,
    message: 'A rule\'s `evaluate` is invalid.',
    when: 'A rule\'s `evaluate` does not parse.'
  },
  EINVALQUERY: {
    status: 400,
    message: 'The request was not processed: the query is invalid.',
    when: 'A rejected parameter (`path`, `pdf.path`, `screenshot.path`), a query over 32 KiB, or a value that fails its type, enum or bounds.'
  },
  EPAGERANGE: {
    status: 400,
    message: 'The `pdf.pageRanges` parameter starts past the last page of the document.',
    when: '`pdf.pageRanges` starts past the last page.'
  },
  EPDFTOOLARGE: {
    status: 400,
    message: 'The PDF could not be generated in time or is too large. Try narrowing it with `pdf.pageRanges`.',
    when: 'The PDF cannot be rendered in the time left, or would exceed 100 MiB.'
  },
  ETOOLARGE: {
    status: 400,
    message: 'The result is too large. Ask for less: narrower `data` rules, or a smaller `evaluate` value.',
    when: 'The answer, or a value the page returns to an `evaluate` rule, would exceed `MAX_RESPONSE_BYTES` (16 MiB); `data` names what was over. Checked in the page before a value is sent, and while rules are read.'
  },
  EPAGECRASH: {
    status: 400,
    message: 'The page crashed the browser tab that loaded it.',
    when: 'The target page\'s renderer died (it exhausted its memory, for instance) on every attempt `retry` allows, while the browser itself went on.'
  },
  EACTION: {
    status: 400,
    message: 'An action could not be done in the page.',
    when: 'An `actions` entry failed: its selector matched no visible element within its wait, a key is unknown, or its script threw; `data.actions` names the action.'
  },
  ETIMEOUT: {
    status: 504,
    message: 'The request ran out of time.',
    when: 'The request\'s `timeout` ran out, queue wait included.'
  },
  EBRWSRTIMEOUT: {
    status: 504,
    message: 'A browser step timed out.',
    when: 'The navigation never committed, `screenshot.element` never became visible, or capture or printing did not finish.'
  },
  EBUSY: {
    status: 503,
    message: 'The service is busy. Retry in a few seconds.',
    when: 'The browser queue is full; `Retry-After` is set.'
  },
  EBROWSER: {
    status: 503,
    message: 'The browser is not available on this instance: install Chromium (Debian: `apt-get install chromium`), or set `CHROMIUM_PATH` to a Chromium executable that starts, or `BROWSER_WS_ENDPOINT` to a browser server. Requests that need no browser are served.',
    when: 'A request needs the browser (a screenshot, a PDF, `prerender=true`, browser steps) and Chromium is missing or does not start: `CHROMIUM_PATH` names no executable, the executable exits at once, or `BROWSER_WS_ENDPOINT` cannot be reached. Launches are tried again with a backoff (1 s, 2 s, 5 s, 10 s, then every 30 s), so a browser installed later is picked up; `Retry-After` says when the next one is due.'
  },
  EFATAL: {
    status: 500,
    message: 'An internal error occurred while processing the request.',
    when: 'An unexpected failure (browser unusable after `retry`, storage failure).'
  },
  ENOTFOUND: {
    status: 404,
    message: 'Not found.',
    when: 'An unknown path or method, a missing `/files/<key>`, or an `embed` path with no value.'
  }
} as const satisfies Record<string, { status: number, message: string, when: string }>

export type ErrorCode = keyof typeof ERROR_CATALOG

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[]

export interface AppErrorOptions {
  /** Public detail keyed by parameter or header name; becomes the body's `data`. */
  data?: Record<string, unknown>
  /** Overrides the catalog's public message. */
  message?: string
  /** Extra response headers (e.g. retry-after). */
  headers?: Record<string, string>
  /** Internal cause: logged, never sent. */
  cause?: unknown
}

export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly data: Record<string, unknown>
  readonly headers: Record<string, string>

  constructor (code: ErrorCode, options: AppErrorOptions = {}) {
    super(options.message ?? ERROR_CATALOG[code].message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AppError'
    this.code = code
    this.status = ERROR_CATALOG[code].status
    this.data = options.data ?? {}
    this.headers = options.headers ?? {}
  }
}

export function isAppError (err: unknown): err is AppError {
  return err instanceof AppError
}

/** Maps anything thrown to an AppError; unknown failures become EFATAL with the original kept as the cause. */
export function toAppError (err: unknown): AppError {
  if (err instanceof AppError) return err
  return new AppError('EFATAL', { cause: err })
}
