import { buyerKey, createClient, outletKey, variantKey } from '@order-exchange/client'
import { FileCheckpointStore } from '@order-exchange/client/node'

const client = createClient({
  baseUrl: process.env.ORDER_EXCHANGE_BASE_URL, // the environment is the address: testing, then production
  accessToken: process.env.ORDER_EXCHANGE_ACCESS_TOKEN, // reads orders
  apiKey: process.env.ORDER_EXCHANGE_API_KEY // status updates and the shipment sync
})

// 1. Every order change since the last run, each once, even across restarts (the checkpoint file).
const placed = []
const { handled } = await client.orders.poll({
  checkpoint: new FileCheckpointStore('order-exchange-checkpoint.json'),
  handle: (order) => {
    const lines = order.orderItems.map((line) => `${line.quantity} x ${variantKey(line)}`).join(', ')
    console.log(`order ${order.orderId} ${order.orderStatus} buyer=${buyerKey(order)} outlet=${outletKey(order)}: ${lines}`)
    if (order.orderStatus === 'ORDER_PLACED') placed.push(order.orderId)
  }
})

// 2. Accept the new orders: one result per order, in order; a refused one says why.
const results = await client.orders.updateStatuses(placed.map((orderId) => ({ orderId, status: 'ORDER_ACCEPTED' })))
for (const r of results) if (r.outcome === 'error') console.log(`order ${r.orderId} not accepted: ${r.error}`)

// 3. Replace outstanding shipment quantities; a refused row comes back with its index.
const sync = await client.shipments.sync([{ retailerSyncId: 'RET-1-00001', shopSyncId: null, offerSyncId: 'VAR-1-001', outstandingQuantity: '4.5' }])
console.log(`${handled} changes read, ${results.filter((r) => r.outcome !== 'error').length} accepted, ${sync.inserted + sync.updated} shipment rows written`)
