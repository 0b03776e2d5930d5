/*
 * The part of CHANGELOG.md a breaking change must be listed in: every section under a heading that says
 * "Breaking" (any level), down to the next heading of the same or a higher level.
 */

export function breakingSections (markdown: string): string {
  const out: string[] = []
  let within: number | null = null
  for (const line of markdown.split(/\r?\n/)) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading) {
      const level = heading[1]!.length
      if (within !== null && level <= within) within = null
      if (within === null && /\bbreaking\b/i.test(heading[2]!)) within = level
      continue
    }
    if (within !== null) out.push(line)
  }
  return out.join('\n')
}

/** Whether a Breaking section names the change's location (in backticks or not). */
export function isListed (sections: string, path: string): boolean {
  return sections.includes(path)
}
