// Page-side types.
//
// Callbacks given to page.evaluate run in the browser. The project compiles without lib.dom, so these describe the
// part of the DOM that the callbacks of the browser folder touch; a callback starts with
// `const win = globalThis as unknown as DomWindow`.
export interface DomStyle {
  background: string
  backgroundColor: string
  display: string
  setProperty (name: string, value: string): void
}

export interface DomElement {
  textContent: string | null
  style: DomStyle
  dataset: Record<string, string | undefined>
  scrollHeight: number
  appendChild (child: DomElement): void
  addEventListener (type: string, listener: () => void): void
  getBoundingClientRect (): { left: number, top: number, width: number, height: number }
  getClientRects (): { length: number }
  scrollIntoView (): void
  /** <link> */
  rel: string
  href: string
  sheet: unknown
  /** <img> */
  src: string
  complete: boolean
  naturalWidth: number
}

export interface DomAnimation {
  effect: { getComputedTiming (): { endTime?: number | string } } | null
  finish (): void
  cancel (): void
}

/** A constructed stylesheet (`new CSSStyleSheet()`). */
export interface DomStyleSheet {
  replaceSync (text: string): void
}

export interface DomDocument {
  /** The constructed sheets the document uses besides its own. */
  adoptedStyleSheets: DomStyleSheet[]
  head: DomElement | null
  body: DomElement | null
  documentElement: DomElement
  contentType: string
  images: ArrayLike<DomElement>
  createElement (tag: string): DomElement
  querySelector (selector: string): DomElement | null
  getAnimations (): DomAnimation[]
  open (): void
  write (html: string): void
  close (): void
}

export interface DomWindow {
  document: DomDocument
  devicePixelRatio: number
  innerWidth: number
  innerHeight: number
  scrollX: number
  scrollY: number
  screen: { width: number, height: number, orientation?: { type: string, angle: number } }
  scrollTo (x: number, y: number): void
  getComputedStyle (element: DomElement): DomStyle
  CSSStyleSheet: new () => DomStyleSheet
}
