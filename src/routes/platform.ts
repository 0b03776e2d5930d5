import type { FastifyPluginAsync } from 'fastify'
import { addPoints } from '../platform/add-points.js'
import type { PlatformDeal, PlatformItem, PlatformPoints, PlatformRetailer, PlatformSeller } from '../platform/schemas.js'
import { MAX_PLATFORM_ROWS, PlatformRowErrors as E, PlatformText } from '../platform/texts.js'
import { upsertCatalogue } from '../platform/upsert-catalogue.js'
import { upsertDeals } from '../platform/upsert-deals.js'
import { upsertSellers } from '../platform/upsert-sellers.js'
import { upsertRetailers } from '../platform/upsert-retailers.js'
import { success } from '../rest-envelope.js'
import { batchData, batchRoute, rowError } from './platform-batch.js'
import { platformOrderRoutes } from './platform-orders.js'
import { restEndpoints } from './rest-contract.js'

/*
 * The marketplace's routes (docs/platform/api.md), platform key only: sellers, their points, retailers,
 * the catalogue and deals here, each a bulk route (platform-batch.ts) with its words and examples; the
 * orders in platform-orders.ts. The examples are built from the routes' own texts and typed against their
 * schemas.
 */

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
const asha = { id: 5001, name: 'Rao Kirana Stores', firstName: 'Asha', lastName: 'Rao', phone: '+919800000001' }
const retailers: PlatformRetailer[] = [
  { ...asha, companyId: 101, whatsapp: '+919800000001', shops: [{ id: 7001, shopName: 'Rao Kirana, MG Road' }] },
  { ...asha, companyId: 102, whatsapp: '+919800000001', shops: [{ id: 7001, shopName: 'Rao Kirana, MG Road' }] },
  { id: 5002, companyId: 101, name: 'Bharat Traders', firstName: null, lastName: null, phone: null, whatsapp: null, shops: [] },
  { id: 5003, companyId: 103, name: 'Not yet a buyer', firstName: null, lastName: null, phone: null, whatsapp: null, shops: [] }
]
// What the retailers example is answered (company 103 is no seller), and again when re-sent.
const unknownSeller = rowError(3, 5003, E.sellerNotFound(103))
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

const platformRoutes: FastifyPluginAsync = async (app) => {
  // JSON only: a text/plain body is 415, not "must be a JSON array".
  app.removeContentTypeParser('text/plain')
  const db = app.database.db
  batchRoute(app, restEndpoints.platformSellers, 'seller rows', PlatformText.sellersUpserted,
    (rows, idempotency) => upsertSellers(db, rows, { idempotency }), {
      operationId: 'upsertPlatformSellers',
      summary: 'Create or update sellers and their stores',
      description: `1 to ${MAX_PLATFORM_ROWS} rows keyed by companyId, each stating the whole seller; stores are keyed by ` +
        'their id and added or renamed, never removed. A row equal to what is stored is unchanged and writes nothing, so a ' +
        'batch may be sent again safely. Platform key only.',
      requestExamples: { sellers: { summary: 'An active seller with two stores, a suspended one with none', value: sellers } },
      processed: success(PlatformText.sellersUpserted,
        batchData(1, 0, 0, [rowError(1, 102, E.storeOfAnotherSeller(0, 1003))])),
      resent: success(PlatformText.sellersUpserted, batchData(0, 0, 2, []))
    })
  batchRoute(app, restEndpoints.platformPoints, 'points rows', PlatformText.pointsRecorded,
    (rows, idempotency) => addPoints(db, rows, { idempotency }), {
      operationId: 'addPlatformPoints',
      summary: 'Top up or adjust sellers\' points',
      description: `1 to ${MAX_PLATFORM_ROWS} rows keyed by (companyId, reference): a top-up (amount > 0) or an adjustment ` +
        '(< 0, never below a zero balance), each a ledger entry that moves the balance. The same reference with the same amount ' +
        'again is unchanged; with another amount it is refused. Platform key only.',
      requestExamples: { points: { summary: 'A top-up and an adjustment', value: points } },
      processed: success(PlatformText.pointsRecorded, batchData(1, 0, 0, [rowError(1, 'ADJ-2024-0007', E.belowZero('-120.50', '0.00'))])),
      resent: success(PlatformText.pointsRecorded, batchData(0, 0, 2, []))
    })
  batchRoute(app, restEndpoints.platformRetailers, 'retailer rows', PlatformText.retailersUpserted,
    (rows, idempotency) => upsertRetailers(db, rows, { idempotency }), {
      operationId: 'upsertPlatformRetailers',
      summary: 'Create or update retailers and their shops, and link them to sellers',
      description: `1 to ${MAX_PLATFORM_ROWS} rows keyed by id, each stating the whole retailer (firstName, lastName, phone ` +
        'and whatsapp may be null) and linking it and the row\'s shops to the seller companyId; a row of the same retailer ' +
        'for another companyId links it to that seller too, and must state the same retailer. Shops are keyed by their id ' +
        'and added or renamed, never removed. A new link has no sync ID; an existing link (and the sync ID its seller gave ' +
        'it) is never changed. A row equal to what is stored is unchanged and writes nothing. Platform key only.',
      requestExamples: {
        retailers: {
          summary: 'One retailer linked to two sellers, one with no contact details and no shops, one for an unknown seller',
          value: retailers
        }
      },
      processed: success(PlatformText.retailersUpserted, batchData(2, 1, 0, [unknownSeller])),
      resent: success(PlatformText.retailersUpserted, batchData(0, 0, 3, [unknownSeller]))
    })
  platformOrderRoutes(app)
  batchRoute(app, restEndpoints.platformCatalogue, 'item rows', PlatformText.catalogueUpserted,
    (rows, idempotency) => upsertCatalogue(db, rows, { idempotency }), {
      operationId: 'upsertPlatformCatalogue',
      summary: 'Create or update items with their SKUs, selling units and offers',
      description: `1 to ${MAX_PLATFORM_ROWS} item rows, each one item of the seller companyId with its SKUs, their ` +
        'selling units and offers, every record keyed by the marketplace\'s id. Records are added or updated, never removed ' +
        'by leaving them out; an id stored under another seller or parent refuses the row. The row is the unit: one bad ' +
        'offer refuses the whole item. The sync IDs are the seller\'s and are never changed here. Platform key only.',
      requestExamples: { item: { summary: 'An item with one SKU, two selling units and an offer with two slabs', value: catalogue } },
      processed: success(PlatformText.catalogueUpserted, batchData(1, 0, 0, [rowError(1, 5002, E.skuOfAnotherItem('skus[0].id', 6001))])),
      resent: success(PlatformText.catalogueUpserted, batchData(0, 0, 1, []))
    })
  batchRoute(app, restEndpoints.platformDeals, 'deal rows', PlatformText.dealsUpserted,
    (rows, idempotency) => upsertDeals(db, rows, { idempotency }), {
      operationId: 'upsertPlatformDeals',
      summary: 'Create or update daily deals',
      description: `1 to ${MAX_PLATFORM_ROWS} rows keyed by the deal's id, each stating the whole deal on an offer of ` +
        'the seller companyId. The grabbed quantity is the orders\': maxQuantity never goes below it, and a deal an order ' +
        'has grabbed keeps its offer. A row equal to what is stored is unchanged and writes nothing. Platform key only.',
      requestExamples: { deals: { summary: 'Two days of deals on one offer', value: deals } },
      processed: success(PlatformText.dealsUpserted, batchData(1, 0, 0, [rowError(1, 9002, E.belowGrabbed('2.5', '4'))])),
      resent: success(PlatformText.dealsUpserted, batchData(0, 0, 2, []))
    })
}

export default platformRoutes
