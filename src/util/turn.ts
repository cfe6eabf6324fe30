// The end of this turn of the event loop: one promise for every caller of the turn, resolved once the loop has
// run the rest of its poll phase (setImmediate). A held answer waits for it, so the answers of all requests read
// in one turn are written together after those reads, instead of one write between each two reads: fewer
// turns of the loop per request, and a client woken once per batch rather than once per answer
// (docs/benchmarks.md, "Held answers in batches").
let pending: Promise<void> | undefined

export async function endOfTurn (): Promise<void> {
  pending ??= new Promise(resolve => {
    setImmediate(() => {
      pending = undefined
      resolve()
    })
  })
  await pending
}
