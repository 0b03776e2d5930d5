import { defineConfig } from 'drizzle-kit'

// Only `drizzle-kit generate` uses this file: migrations are generated from src/db/schema.ts and applied
// by the service itself (src/db/migrate.ts), so no database URL is needed here.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './drizzle'
})
