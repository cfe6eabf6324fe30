// Step: `adblock` (docs/api.md §3.5, docs/browser.md#adblock). The requests were filtered by the pool all along; this
// step, once the page is loaded, looks for a consent platform (consent-detect.ts: the document's ids and classes,
// which the cosmetic filters need too, and a few selectors and globals, in one evaluation) and only where one may be
// starts autoconsent and lets its opt-out finish (bounded); then it hides what is left with the cosmetic filters: the
// page's hostname rules, the generic rules, and the generic rules keyed by the class names, ids and links the
// document has now. A consent banner that is still there (its platform's script blocked or slow, or server-rendered
// markup that no script answers) is hidden by the cookie-notice lists' rules, and removed from the document, so its
// text is not read as the page's.
import type { Page } from 'playwright-core'
import type { Adblocker, ConsentStatus, DomFeatures } from '../../adblock/index.ts'
import { CONSENT_HIDDEN_PROPERTY, CONSENT_STATUS_EXPRESSION } from '../../adblock/index.ts'
import { abortable, sleep } from '../../util/abort.ts'
import type { NetworkTracker } from '../network-idle.ts'
import { WAIT_SHARE, type Budget } from '../page/budget.ts'
import type { PageEvaluate } from '../page/evaluate.ts'
import { rethrowIfFatal, type PageStep } from './step.ts'

/** The longest an opt-out under way is waited for (autoconsent's own rules wait up to a few seconds). */
export const CONSENT_WAIT_MS = 5_000
const POLL_MS = 50
/** Elements read for class names and ids: enough for any real page, bounded for a hostile one. */
const MAX_ELEMENTS = 20_000

/** Collects the document's class names, ids and link targets, in the page (works with page scripts off). */
const FEATURES_EXPRESSION = `(() => {
  const classes = new Set(); const ids = new Set(); const hrefs = new Set();
  const elements = document.querySelectorAll('[id],[class],a[href]');
  const n = Math.min(elements.length, ${MAX_ELEMENTS});
  for (let i = 0; i < n; i++) {
    const el = elements[i];
    if (el.id) ids.add(el.id);
    if (el.classList) for (const c of el.classList) classes.add(c);
    if (el.tagName === 'A') { const href = el.getAttribute('href'); if (href) hrefs.add(href) }
  }
  return { classes: [...classes], ids: [...ids], hrefs: [...hrefs] };
})()`

/**
 * One evaluation for both sheets: adds the cosmetic filters' style (`css`) and the cookie-notice lists' style
 * (`consentCss`), each a sheet the document adopts (so never in its markup, page/styles.ts), then removes the elements
 * the latter's hiding rules match (the rules that set CONSENT_HIDDEN_PROPERTY; the lists' custom styles, such as a
 * scroll lock undone, only apply). The styles stay, for a banner written later. Evaluates to how many elements were
 * removed.
 */
function hideExpression (css: string, consentCss: string): string {
  return `(() => {
  const adopt = (text) => {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(text);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    return sheet;
  };
  ${css === '' ? '' : `adopt(${JSON.stringify(css)});`}
  ${consentCss === '' ? 'return 0;' : ''}
  const sheet = adopt(${JSON.stringify(consentCss)});
  const found = new Set();
  for (const rule of sheet.cssRules) {
    if (rule.style === undefined || rule.style.getPropertyValue(${JSON.stringify(CONSENT_HIDDEN_PROPERTY)}) === '') continue;
    try { for (const el of document.querySelectorAll(rule.selectorText)) found.add(el) } catch {}
  }
  for (const el of found) el.remove();
  return found.size;
})()`
}

/** The consent detector's in-page check and the document's features in one round trip. */
function firstLook (adblocker: Adblocker): string {
  return `({ cmp: ${adblocker.consentDetector.expression}, features: ${FEATURES_EXPRESSION} })`
}

/** autoconsent, started in this document, is still looking for its platform or answering it. */
function pending (status: ConsentStatus | null): boolean {
  return status !== null && !status.done && (status.detected || !status.searched)
}

async function consentStatus (evaluate: PageEvaluate, budget: Budget): Promise<ConsentStatus | null> {
  return await abortable(evaluate(CONSENT_STATUS_EXPRESSION) as Promise<ConsentStatus | null>, budget.signal)
}

/** The longest the requests an opt-out started (the platform recording the choice) are waited for. */
export const CONSENT_REQUESTS_WAIT_MS = 500

/**
 * Waits for the requests in flight to end, bounded: an opt-out's click makes the platform record the choice, which
 * would otherwise be cut off by the end of the job a moment later.
 */
async function waitForRequests (tracker: NetworkTracker, budget: Budget): Promise<void> {
  const until = performance.now() + Math.min(CONSENT_REQUESTS_WAIT_MS, budget.fraction(WAIT_SHARE))
  while (tracker.inflight > 0 && performance.now() < until) await sleep(POLL_MS / 2, budget.signal)
}

/** Waits while autoconsent looks for a consent platform, or has found one and has not finished with it. */
async function waitForConsent (evaluate: PageEvaluate, budget: Budget): Promise<void> {
  const until = performance.now() + Math.min(CONSENT_WAIT_MS, budget.fraction(WAIT_SHARE))
  for (;;) {
    const left = until - performance.now()
    if (left <= 0) return
    await sleep(Math.min(POLL_MS, left), budget.signal)
    if (!pending(await consentStatus(evaluate, budget))) return
  }
}

async function features (evaluate: PageEvaluate, budget: Budget): Promise<DomFeatures> {
  return await abortable(evaluate(FEATURES_EXPRESSION) as Promise<DomFeatures>, budget.signal)
}

/**
 * Where a consent platform may be (with page scripts), starts autoconsent and lets its opt-out finish; then hides
 * what the cosmetic filters find and removes the consent banners left. The first look reads the detector's in-page
 * check and the features together; the features are read again only after autoconsent ran.
 */
async function hideAds (page: Page, evaluate: PageEvaluate, adblocker: Adblocker, budget: Budget, javascript: boolean, tracker: NetworkTracker): Promise<void> {
  let found: DomFeatures
  const url = page.url()
  if (javascript) {
    const first = await abortable(evaluate(firstLook(adblocker)) as Promise<{ cmp: boolean, features: DomFeatures }>, budget.signal)
    found = first.features
    if (adblocker.consentDetector.detects(url, found, first.cmp)) {
      await abortable(evaluate(adblocker.consentScript), budget.signal)
      await waitForConsent(evaluate, budget)
      await waitForRequests(tracker, budget)
      found = await features(evaluate, budget)
    }
  } else {
    found = await features(evaluate, budget)
  }
  const css = adblocker.cosmeticStyles(url, found)
  const consentCss = adblocker.consentStyles(url, found)
  if (css !== '' || consentCss !== '') await abortable(evaluate(hideExpression(css, consentCss)), budget.signal)
}

export const adblockStep: PageStep = {
  name: 'adblock',
  applies: (options) => options.adblock === true,
  async run ({ page, evaluate, options, budget, adblocker, tracker }) {
    if (options.adblock !== true || adblocker === undefined) return
    try {
      await hideAds(page, evaluate, adblocker, budget, options.javascript, tracker)
    } catch (err) {
      // A document that went away meanwhile (a client-side navigation) is not an error: it is filtered like any.
      rethrowIfFatal(err, page, budget)
    }
  }
}
