// The outbound settings of one request (docs/architecture.md): the `proxy` every request made for it goes through,
// and whether the proxy carried any. Held in an AsyncLocalStorage around the request's work (routes/serve.ts) and its
// computation (pipeline/compute.ts), so every outbound call made for it (the plain fetch, media and favicon probes,
// oEmbed, `data` rule probes, embed fetches) inherits the proxy without each caller having to pass it on: a call
// added later cannot forget it. The browser gets the proxy explicitly (PoolRunOptions.proxy).
import { AsyncLocalStorage } from 'node:async_hooks'

export interface EgressScope {
  /** The `proxy` URL (href, credentials kept: never logged). */
  readonly proxy?: string | undefined
  /** Set once the proxy carried a request of this scope (`-proxy` in `x-fetch-mode`). */
  carried: boolean
}

const storage = new AsyncLocalStorage<EgressScope>()

/** Runs `work` with `scope` as the outbound settings of everything it starts. */
export function runWithEgress<T> (scope: EgressScope, work: () => T): T {
  return storage.run(scope, work)
}

/** The settings of the work running now; undefined outside any request. */
export function currentEgress (): EgressScope | undefined {
  return storage.getStore()
}
