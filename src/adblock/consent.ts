// Consent banners, with DuckDuckGo's autoconsent (the rule set Microlink uses): its Playwright content script and its
// compact rules, both from the npm package, run in the page's top frame. Autoconsent detects the consent platform
// (OneTrust, Cookiebot, Didomi, Quantcast, TCF CMPs and ~800 site and platform rules), answers it by opting out (so
// the site removes its banner), and hides with CSS the banners it can only hide.
//
// The script is evaluated in a loaded document only where consent-detect.ts finds that a platform may be there (the
// adblock step): starting it costs the renderer 6-13 ms of CPU, which most pages had paid for nothing when it ran
// from every document's start.
//
// No binding is needed: the script is started with its configuration and rules already in hand (the `initResp`
// reply that the package's messaging would bring), and autoconsent never asks anything else of its host when it
// runs in the main world. What it reports (platform found, opt-out result, done, first search over) is kept in the
// page, where the service reads it (CONSENT_STATUS_EXPRESSION) to know whether an opt-out is still under way.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { Config, RuleBundle } from '@duckduckgo/autoconsent'

/** Where the page keeps autoconsent's reports. */
const STATUS_KEY = 'pagecast.autoconsent'
/**
 * autoconsent's configuration (the `initResp` message; its `Config` type, lib/types.ts): every key it reads, so a key
 * that a release renames or drops fails the type check instead of being ignored.
 */
const CONFIG = Object.freeze({
  enabled: true,
  autoAction: 'optOut',
  disabledCmps: [],
  // Known banners are hidden while they are dealt with.
  enablePrehide: true,
  // Banners without a reject button are hidden with CSS.
  enableCosmeticRules: true,
  // The rules generated from crawls (`auto_*`), part of the rule file.
  enableGeneratedRules: true,
  detectRetries: 20,
  // Rule snippets run directly (the script itself runs in the main world), so no `eval` message comes back.
  isMainWorld: true,
  prehideTimeout: 2000,
  // Heuristics only report text patterns; no click on a popup that no rule recognises.
  enableHeuristicDetection: true,
  heuristicMode: 'off',
  heuristicPopupSearchTimeout: 100,
  enablePopupMutationObserver: false,
  visualTest: false,
  performanceLoggingEnabled: false,
  logs: { lifecycle: false, rulesteps: false, detectionsteps: false, evals: false, errors: false, messages: false, waits: false }
} satisfies Config)

/**
 * The `<style>` elements autoconsent adds to a page (its prehide, cosmetic and debug styles, by their fixed ids):
 * pagecast's, not the page's, so the serialized DOM leaves them out (browser/page/serialize.ts).
 */
export const CONSENT_STYLE_SELECTOR = 'style#autoconsent-prehide, style#autoconsent-css-rules, style#autoconsent-debug-styles'

/** What the page reports, as CONSENT_STATUS_EXPRESSION returns it. */
export interface ConsentStatus {
  /** A consent platform was recognised. */
  detected: boolean
  /** Its banner was found showing. */
  popup: boolean
  /** Autoconsent finished (opted out, or gave up). */
  done: boolean
  /** The platform's rule name, when one was recognised. */
  cmp?: string
  /** Its first search for a platform is over (found one, or tries again later). */
  searched: boolean
}

/** Evaluated in the page: autoconsent's reports so far, or null when the script did not run there. */
export const CONSENT_STATUS_EXPRESSION = `(() => { const s = globalThis[Symbol.for(${JSON.stringify(STATUS_KEY)})]; return s === undefined ? null : { ...s } })()`

/**
 * The content script with its configuration and rules, evaluated in a loaded document: it starts autoconsent there
 * (once per document).
 */
export async function loadConsentScript (): Promise<string> {
  const require = createRequire(import.meta.url)
  const rulesPath = require.resolve('@duckduckgo/autoconsent/rules/compact-rules.json')
  // The Playwright bundle is not in the package's exports: it sits next to the rules (the version is pinned).
  const bundlePath = path.join(path.dirname(rulesPath), '..', 'dist', 'autoconsent.playwright.js')
  const [compactRules, script] = await Promise.all([readFile(rulesPath, 'utf8'), readFile(bundlePath, 'utf8')])
  // The rule file is the compact encoding: autoconsent reads it as the bundle's `compact` field (RuleBundle, its
  // lib/types.ts), next to the (here empty) list of rules in full form; given as the bundle itself, no rule loads.
  // JSON.parse of a string literal parses much faster than the same data as an object literal.
  const rules: RuleBundle = { autoconsent: [], compact: JSON.parse(compactRules) as RuleBundle['compact'] }
  const initResp = `{ type: 'initResp', config: ${JSON.stringify(CONFIG)}, rules: JSON.parse(${JSON.stringify(JSON.stringify(rules))}) }`
  return `(() => {
  if (window.top !== window) return;
  if (window.autoconsentReceiveMessage !== undefined) return;
  const status = { detected: false, popup: false, done: false, searched: false };
  Object.defineProperty(globalThis, Symbol.for(${JSON.stringify(STATUS_KEY)}), { value: status });
  window.autoconsentSendMessage = (message) => {
    if (message === null || typeof message !== 'object') return;
    switch (message.type) {
      case 'cmpDetected': status.detected = true; status.cmp = String(message.cmp); break;
      case 'popupFound': status.detected = true; status.popup = true; status.cmp = String(message.cmp); break;
      case 'optOutResult': case 'optInResult': if (message.result === false) status.done = true; break;
      case 'autoconsentDone': case 'autoconsentError': status.done = true; break;
      // A second search begins only when the first found nothing (autoconsent retries for a while).
      case 'report': if (message.state?.findCmpAttempts > 1 || message.state?.lifecycle === 'nothingDetected') status.searched = true; break;
    }
  };
${script}
  window.autoconsentReceiveMessage(${initResp});
})();
//# sourceURL=pagecast-autoconsent.js
`
}
