// Lists written with commas, whose items may hold commas inside brackets: `a,{b,c}` (a glob's alternatives),
// `price DECIMAL(10,2), day DATE` (a decimal's precision and scale).

/** The items of `text` separated by commas outside `open`…`close`, empty ones left out. */
export const split = (text: string, open: string, close: string): Array<string> => {
  const items: Array<string> = []
  let depth = 0
  let current = ""
  for (const char of text) {
    if (char === open) depth++
    if (char === close) depth = Math.max(0, depth - 1)
    if (char === "," && depth === 0) {
      items.push(current)
      current = ""
    } else {
      current += char
    }
  }
  items.push(current)
  return items.filter((item) => item.trim() !== "")
}
