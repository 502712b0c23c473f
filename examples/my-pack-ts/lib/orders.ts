// The example's orders: an in-memory table (orderId -> status, totalCents). Outside the
// discovery folders, so the indexer does not take it for a primitive.

export const ORDERS: ReadonlyMap<string, { status: string; totalCents: number }> = new Map([
  ['ord_1001', { status: 'shipped', totalCents: 4200 }],
  ['ord_1002', { status: 'processing', totalCents: 1299 }],
]);
