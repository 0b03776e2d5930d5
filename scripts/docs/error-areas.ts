/*
 * Which texts tables make docs/api/error-codes.md, one area of the API each, and how each table is read.
 * The codes, statuses and messages come from the tables themselves (scripts/docs/error-codes.ts); what is
 * written here is where they are and the one sentence that says where a client meets them. A new table in
 * a texts file of src/ (`texts.ts`, `order-texts.ts`) that no area names stops the generator: none is left out.
 */

export type TableSpec =
  /** @fastify/error classes (`createError`): code, status and message on each. */
  | { kind: 'errors', file: string, name: string }
  /** Functions making a coded request error with its status; `texts` and `codes`: the tables they draw on. */
  | { kind: 'factories', file: string, name: string, texts?: string, codes?: string }
  /** A table of codes and a table of texts, paired by key, answered with `status`. */
  | { kind: 'coded', file: string, codes: string, texts: string, status: string }
  /** An `itemErrors` table: [code, text] per entry, each an item's error in a successful answer. */
  | { kind: 'items', file: string, name: string, status: string }
  /** Texts without codes of their own: with `code`, every one is answered with it; without, they are listed. */
  | { kind: 'texts', file: string, name: string, code?: string, status?: string }

export interface ErrorArea {
  title: string
  /** Where a client meets these, in one sentence (Markdown; links relative to docs/api/). */
  about: string
  tables: TableSpec[]
}

const ITEM = '200, in `data.errors[]`'

export const ERROR_AREAS: ErrorArea[] = [
  {
    title: 'Every route',
    about: 'Request-level refusals any route may answer, in the REST envelope (`message`, `code`) or as a GraphQL ' +
      'error (`extensions.code`) ([errors](errors.md)). `BAD_REQUEST` carries what was malformed; a feature\'s own ' +
      '`400`s below have codes of their own.',
    tables: [{ kind: 'errors', file: 'src/errors.ts', name: 'RequestError' }]
  },
  {
    title: 'Idempotency-Key',
    about: 'The header on any route that takes it ([idempotency](idempotency.md)).',
    tables: [{ kind: 'coded', file: 'src/idempotency/idempotency-key.ts', codes: 'IdempotencyCode', texts: 'IdempotencyText', status: '400' }]
  },
  {
    title: 'Status updates',
    about: 'The batch\'s refusals, then each order\'s error in `data.errors[]` ([status updates](status-updates.md)).',
    tables: [
      { kind: 'coded', file: 'src/status-update/texts.ts', codes: 'StatusUpdateCode', texts: 'StatusUpdateText', status: '400' },
      { kind: 'items', file: 'src/status-update/texts.ts', name: 'OrderErrors', status: ITEM },
      { kind: 'texts', file: 'src/status-update/texts.ts', name: 'AUTO_REJECT_REASON' }
    ]
  },
  {
    title: 'Outstanding shipment sync',
    about: 'The request\'s refusals, then each row\'s error in `data.errors[]` ([shipments](shipments.md)).',
    tables: [
      { kind: 'coded', file: 'src/shipments/texts.ts', codes: 'SyncCode', texts: 'SyncText', status: '400' },
      { kind: 'items', file: 'src/shipments/sync-row.ts', name: 'RowErrors', status: ITEM }
    ]
  },
  {
    title: 'References sync',
    about: 'The request\'s refusals, then each row\'s error in `data.errors[]` ([references](references.md)).',
    tables: [
      { kind: 'coded', file: 'src/references/texts.ts', codes: 'ReferenceCode', texts: 'ReferenceText', status: '400' },
      { kind: 'items', file: 'src/references/texts.ts', name: 'ReferenceErrors', status: ITEM }
    ]
  },
  {
    title: 'Webhook endpoints',
    about: 'The webhook endpoint routes\' refusals ([webhooks](webhooks.md)).',
    tables: [{ kind: 'factories', file: 'src/webhooks/texts.ts', name: 'WebhookError', texts: 'WebhookText', codes: 'WebhookCode' }]
  },
  {
    title: 'The event feed',
    about: 'Refusals of GraphQL `events`\' input, each naming its field in `extensions.field` ([events](events.md)).',
    tables: [{ kind: 'texts', file: 'src/events/texts.ts', name: 'EventFeedText', code: 'BAD_USER_INPUT', status: '200, in GraphQL `errors[]`' }]
  },
  {
    title: 'Platform routes',
    about: 'The marketplace\'s bulk routes: the request\'s refusals, then each row\'s error in `data.errors[]`; a row ' +
      'with several broken fields gets every sentence, joined by `; `, and the first one\'s code ' +
      '([the marketplace\'s API](../platform/api.md)).',
    tables: [
      { kind: 'coded', file: 'src/platform/texts.ts', codes: 'PlatformCode', texts: 'PlatformText', status: '400' },
      { kind: 'items', file: 'src/platform/texts.ts', name: 'PlatformRowErrors', status: ITEM }
    ]
  },
  {
    title: 'Platform money',
    about: 'The finance routes: a list\'s query refused as a whole, the ledger of an unknown seller, and each settle row\'s ' +
      'error in `data.errors[]`; a settle body\'s own refusals are the platform routes\' ' +
      '([the marketplace\'s money](../platform/money.md)).',
    tables: [
      { kind: 'coded', file: 'src/money/texts.ts', codes: 'MoneyCode', texts: 'MoneyText', status: '400' },
      { kind: 'coded', file: 'src/money/texts.ts', codes: 'MoneyNotFoundCode', texts: 'MoneyNotFoundText', status: '404' },
      { kind: 'items', file: 'src/money/texts.ts', name: 'SettleRowErrors', status: ITEM }
    ]
  },
  {
    title: 'Platform orders',
    about: 'Each order row\'s error of `POST /v2/platform/orders` in `data.errors[]`; its request-level refusals are ' +
      'the platform routes\' ([the marketplace\'s orders](../platform/orders.md)).',
    tables: [
      { kind: 'items', file: 'src/platform/order-texts.ts', name: 'OrderRowErrors', status: ITEM },
      { kind: 'texts', file: 'src/platform/order-texts.ts', name: 'OrderText' }
    ]
  }
]
