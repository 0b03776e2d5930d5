import type { Config } from '../config.js'
import { badRequest, RequestError } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import { PlatformRowErrors as E, PlatformCode, PlatformText, MAX_PLATFORM_ROWS } from '../platform/texts.js'
import type {
  PlatformBatchData, PlatformDeal, PlatformItem, PlatformPoints, PlatformRetailer, PlatformSeller
} from '../platform/schemas.js'
import { success } from '../rest-envelope.js'
import type { PlatformBatchResponse } from './rest-contract.js'
import { commonResponses, failureExample, type EndpointDoc, type ResponseDoc } from './rest-docs.js'

/*
 * What the OpenAPI document says about the platform routes (docs/platform/api.md) beyond their schemas, with
 * examples built from the routes' own texts and typed against their schemas.
 */

export function platformResponses (config: Config, what: string, processed: PlatformBatchResponse,
  resent: PlatformBatchResponse): Record<number, ResponseDoc> {
  return {
    200: {
      description: 'Every row was processed, also when every row was refused: refusals are in data.errors by index',
      examples: {
        processed: { summary: 'Rows inserted, updated and refused', value: processed },
        resent: { summary: 'The same batch sent again: nothing changes', value: resent }
      }
    },
    400: {
      description: `The body is not a non-empty JSON array, has more than ${MAX_PLATFORM_ROWS} rows, is not valid JSON, nests ` +
        `more than ${MAX_JSON_DEPTH} levels deep or holds a number a double cannot hold exactly ` +
        '(a request-level failure: no data, nothing written)',
      examples: {
        notAnArray: failureExample(badRequest(PlatformCode.notAnArray, PlatformText.notAnArray(what)), 'Not a non-empty array'),
        tooManyRows: failureExample(
          badRequest(PlatformCode.tooManyRows, PlatformText.tooManyRows(MAX_PLATFORM_ROWS + 1)),
          `More than ${MAX_PLATFORM_ROWS} rows`),
        invalidJson: failureExample(new RequestError.InvalidJson(), 'The body is not valid JSON'),
        tooDeep: failureExample(new RequestError.JsonTooDeep(MAX_JSON_DEPTH), `Arrays and objects nested more than ${MAX_JSON_DEPTH} levels deep`),
        inexactNumber: failureExample(
          new RequestError.InexactNumber('rows[3].price', '0.1000000000000000000001', '0.1'),
          'A number a double cannot hold exactly (send a numeric string): it would not be stored as sent')
      }
    },
    ...commonResponses(config.BODY_LIMIT_BYTES),
    401: {
      description: 'Missing, malformed, unknown or revoked platform key, a seller credential instead of it, or a key of the ' +
        'other environment: the same answer for each',
      examples: { unauthorized: failureExample(new RequestError.Unauthorized(), 'Every authentication failure') }
    }
  }
}

export const rowError = (index: number, id: number | string | null, { code, text }: { code: string, text: string }) =>
  ({ index, id, error: text, code })

type PlatformDocs = Record<
  'platformSellers' | 'platformPoints' | 'platformRetailers' | 'platformCatalogue' | 'platformDeals', EndpointDoc
>

export function platformDocs (config: Config): PlatformDocs {
  const sellers: PlatformSeller[] = [
    {
      companyId: 101,
      name: 'Acme Wholesale',
      status: 'ACTIVE',
      takeRate: '0.02',
      autoRejectEnabled: true,
      stores: [{ id: 1001, name: 'Acme North' }, { id: 1002, name: 'Acme South' }]
    },
    { companyId: 102, name: 'Bolt Traders', status: 'SUSPENDED', takeRate: 0.015, autoRejectEnabled: false, stores: [] }
  ]
  const points: PlatformPoints[] = [
    { companyId: 101, amount: '5000.00', reference: 'TOPUP-2024-0001' },
    { companyId: 101, amount: -120.5, reference: 'ADJ-2024-0007' }
  ]
  const catalogue: PlatformItem[] = [{
    id: 5001,
    companyId: 101,
    itemName: 'Assam Tea',
    skus: [{
      id: 6001,
      skuNickName: 'Assam Tea 1 kg',
      images: ['https://cdn.example.com/assam-1kg.jpg'],
      tags: ['tea', 'assam'],
      itemSellingUnits: [
        { id: 7001, name: 'Pack', multiplier: 1, isBaseUnit: true },
        { id: 7002, name: 'Case', multiplier: '12', isBaseUnit: false }
      ],
      offers: [{
        id: 8001,
        purchasePrice: '80.10',
        mrpPriceAmount: 120,
        finalPriceWithTax: '105.25',
        currency: 'INR',
        priceRange: [
          { minQuantity: 1, maxQuantity: 9, price: '105.25' },
          { minQuantity: 10, maxQuantity: null, price: 99.5 }
        ]
      }]
    }]
  }]
  const deals: PlatformDeal[] = [
    { id: 9001, companyId: 101, offerId: 8001, dealDate: '2024-06-30', dealPrice: '95.00', maxQuantity: 500 },
    { id: 9002, companyId: 101, offerId: 8001, dealDate: '2024-07-01', dealPrice: 94.5, maxQuantity: '2.5' }
  ]
  const batch = (inserted: number, updated: number, unchanged: number, errors: ReturnType<typeof rowError>[]) => ({
    received: inserted + updated + unchanged + errors.length,
    inserted,
    updated,
    unchanged,
    failed: errors.length,
    errors
  })
  return {
    platformSellers: {
      operationId: 'upsertPlatformSellers',
      summary: 'Create or update sellers and their stores',
      description: `1 to ${MAX_PLATFORM_ROWS} rows keyed by companyId, each stating the whole seller; stores are keyed by ` +
        'their id and added or renamed, never removed. A row equal to what is stored is unchanged and writes nothing, so a ' +
        'batch may be sent again safely. Platform key only.',
      tag: 'Platform',
      security: 'platformKeyBearer',
      requestExamples: { sellers: { summary: 'An active seller with two stores, a suspended one with none', value: sellers } },
      responses: platformResponses(config, 'seller rows',
        success(PlatformText.sellersUpserted, batch(1, 0, 0, [rowError(1, 102, E.storeOfAnotherSeller(0, 1003))])),
        success(PlatformText.sellersUpserted, batch(0, 0, 2, [])))
    },
    platformPoints: {
      operationId: 'addPlatformPoints',
      summary: 'Top up or adjust sellers\' points',
      description: `1 to ${MAX_PLATFORM_ROWS} rows keyed by (companyId, reference): a top-up (amount > 0) or an adjustment ` +
        '(< 0, never below a zero balance), each a ledger entry that moves the balance. The same reference with the same amount ' +
        'again is unchanged; with another amount it is refused. Platform key only.',
      tag: 'Platform',
      security: 'platformKeyBearer',
      requestExamples: { points: { summary: 'A top-up and an adjustment', value: points } },
      responses: platformResponses(config, 'points rows',
        success(PlatformText.pointsRecorded, batch(1, 0, 0, [rowError(1, 'ADJ-2024-0007', E.belowZero('-120.50', '0.00'))])),
        success(PlatformText.pointsRecorded, batch(0, 0, 2, [])))
    },
    platformCatalogue: {
      operationId: 'upsertPlatformCatalogue',
      summary: 'Create or update items with their SKUs, selling units and offers',
      description: `1 to ${MAX_PLATFORM_ROWS} item rows, each one item of the seller companyId with its SKUs, their ` +
        'selling units and offers, every record keyed by the marketplace\'s id. Records are added or updated, never removed ' +
        'by leaving them out; an id stored under another seller or parent refuses the row. The row is the unit: one bad ' +
        'offer refuses the whole item. The sync IDs are the seller\'s and are never changed here. Platform key only.',
      tag: 'Platform',
      security: 'platformKeyBearer',
      requestExamples: { item: { summary: 'An item with one SKU, two selling units and an offer with two slabs', value: catalogue } },
      responses: platformResponses(config, 'item rows',
        success(PlatformText.catalogueUpserted,
          batch(1, 0, 0, [rowError(1, 5002, E.skuOfAnotherItem('skus[0].id', 6001))])),
        success(PlatformText.catalogueUpserted, batch(0, 0, 1, [])))
    },
    platformDeals: {
      operationId: 'upsertPlatformDeals',
      summary: 'Create or update daily deals',
      description: `1 to ${MAX_PLATFORM_ROWS} rows keyed by the deal's id, each stating the whole deal on an offer of ` +
        'the seller companyId. The grabbed quantity is the orders\': maxQuantity never goes below it, and a deal an order ' +
        'has grabbed keeps its offer. A row equal to what is stored is unchanged and writes nothing. Platform key only.',
      tag: 'Platform',
      security: 'platformKeyBearer',
      requestExamples: { deals: { summary: 'Two days of deals on one offer', value: deals } },
      responses: platformResponses(config, 'deal rows',
        success(PlatformText.dealsUpserted, batch(1, 0, 0, [rowError(1, 9002, E.belowGrabbed('2.5', '4'))])),
        success(PlatformText.dealsUpserted, batch(0, 0, 2, [])))
    },
    platformRetailers: retailersDoc(config, batch)
  }
}

// PUT /v2/platform/retailers
type Batch = (inserted: number, updated: number, unchanged: number,
  errors: ReturnType<typeof rowError>[]) => PlatformBatchData

function retailersDoc (config: Config, batch: Batch): EndpointDoc {
  const asha = { id: 5001, name: 'Rao Kirana Stores', firstName: 'Asha', lastName: 'Rao', phone: '+919800000001' }
  const retailers: PlatformRetailer[] = [
    { ...asha, companyId: 101, whatsapp: '+919800000001', shops: [{ id: 7001, shopName: 'Rao Kirana, MG Road' }] },
    { ...asha, companyId: 102, whatsapp: '+919800000001', shops: [{ id: 7001, shopName: 'Rao Kirana, MG Road' }] },
    {
      id: 5002, companyId: 101, name: 'Bharat Traders', firstName: null, lastName: null, phone: null, whatsapp: null, shops: []
    },
    { id: 5003, companyId: 103, name: 'Not yet a buyer', firstName: null, lastName: null, phone: null, whatsapp: null, shops: [] }
  ]
  // What this very batch is answered (company 103 is no seller), and again when re-sent.
  const unknownSeller = rowError(3, 5003, E.sellerNotFound(103))
  return {
    operationId: 'upsertPlatformRetailers',
    summary: 'Create or update retailers and their shops, and link them to sellers',
    description: `1 to ${MAX_PLATFORM_ROWS} rows keyed by id, each stating the whole retailer (firstName, lastName, phone ` +
      'and whatsapp may be null) and linking it and the row\'s shops to the seller companyId; a row of the same retailer ' +
      'for another companyId links it to that seller too, and must state the same retailer. Shops are keyed by their id ' +
      'and added or renamed, never removed. A new link has no sync ID; an existing link (and the sync ID its seller gave ' +
      'it) is never changed. A row equal to what is stored is unchanged and writes nothing. Platform key only.',
    tag: 'Platform',
    security: 'platformKeyBearer',
    requestExamples: {
      retailers: {
        summary: 'One retailer linked to two sellers, one with no contact details and no shops, one for an unknown seller',
        value: retailers
      }
    },
    responses: platformResponses(config, 'retailer rows',
      success(PlatformText.retailersUpserted, batch(2, 1, 0, [unknownSeller])),
      success(PlatformText.retailersUpserted, batch(0, 0, 3, [unknownSeller])))
  }
}
