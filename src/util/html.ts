// Text into HTML, decided once: the five characters that can end a text node or a quoted attribute.

/** `text` safe inside an HTML text node or a quoted attribute value. */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, (char) => {
    switch (char) {
      case '&': return '&amp;'
      case '<': return '&lt;'
      case '>': return '&gt;'
      case '"': return '&quot;'
      default: return '&#39;'
    }
  })
}
