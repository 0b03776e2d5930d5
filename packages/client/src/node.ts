import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { CheckpointStore, PollCheckpoint } from './checkpoint.js'

/* Node-only parts of the client: a checkpoint kept in a file across restarts. */

/**
 * A checkpoint (the order poll's, or the event follower's: `FileCheckpointStore<EventCheckpoint>`) in a
 * JSON file. Each save writes a new file and renames it over the old one, so a crash leaves either the old
 * or the new checkpoint, never half of one. One file per poller or follower.
 */
export class FileCheckpointStore<T = PollCheckpoint> implements CheckpointStore<T> {
  constructor (readonly file: string) {}

  async load (): Promise<T | null> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as T
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }

  async save (checkpoint: T): Promise<void> {
    await mkdir(path.dirname(path.resolve(this.file)), { recursive: true })
    const temporary = `${this.file}.${process.pid}.tmp`
    await writeFile(temporary, JSON.stringify(checkpoint))
    await rename(temporary, this.file)
  }
}

export * from './index.js'
