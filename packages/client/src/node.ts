import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { CheckpointStore, PollCheckpoint } from './checkpoint.js'

/* Node-only parts of the client: a checkpoint kept in a file across restarts. */

/**
 * A poll checkpoint in a JSON file. Each save writes a new file and renames it over the old one, so a
 * crash leaves either the old or the new checkpoint, never half of one.
 */
export class FileCheckpointStore implements CheckpointStore {
  constructor (readonly file: string) {}

  async load (): Promise<PollCheckpoint | null> {
    try {
      const value = JSON.parse(await readFile(this.file, 'utf8')) as Partial<PollCheckpoint>
      // The walk too: without it, a poll cut off mid-walk would start again from the high-water mark
      // while `seen` has already forgotten changes older than the walk's progress.
      return {
        highWater: value.highWater ?? null,
        seen: Array.isArray(value.seen) ? value.seen : [],
        ...(value.walk ? { walk: value.walk } : {})
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }

  async save (checkpoint: PollCheckpoint): Promise<void> {
    await mkdir(path.dirname(path.resolve(this.file)), { recursive: true })
    const temporary = `${this.file}.${process.pid}.tmp`
    await writeFile(temporary, JSON.stringify(checkpoint))
    await rename(temporary, this.file)
  }
}

export * from './index.js'
