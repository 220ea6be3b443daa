// How a key's name maps to its environment variable and back. The mapping loses case (and keys have camelCase
// parts), so a variable is matched case-insensitively; Registry.make keeps names unique regardless of case.

export const envPrefix = "KINDLING_"

export const envName = (name: string): string => name.toUpperCase().replace(/\./g, "_")

export const dotted = (variable: string): string => variable.toLowerCase().replace(/_/g, ".")
