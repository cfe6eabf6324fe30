// The normalizers of @metascraper/helpers that metascraper's own rule bundles apply (it ships no types; CommonJS,
// so one default export).
declare module '@metascraper/helpers' {
  const helpers: {
    title: (value: unknown, options?: object) => string | undefined
    description: (value: unknown, options?: object) => string | undefined
    publisher: (value: unknown) => string | undefined
    date: (value: unknown) => string | undefined
    lang: (value: unknown) => string | undefined
  }
  export default helpers
}
