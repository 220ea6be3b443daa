// Lists written with commas, whose items may hold commas inside brackets: `a,{b,c}` (a glob's alternatives),
// `price DECIMAL(10,2), m MAP<STRING,INT>` (a decimal's precision and scale, a map's types).

/** The items of `text` separated by commas outside brackets (`opens` and `closes`), empty ones left out. */
export const split = (text: string, opens: string, closes: string): Array<string> => {
  const items: Array<string> = []
  let depth = 0
  let current = ""
  for (const char of text) {
    if (opens.includes(char)) depth++
    if (closes.includes(char)) depth = Math.max(0, depth - 1)
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
