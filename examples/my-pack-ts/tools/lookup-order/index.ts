// my-pack.lookup-order: reads an order. Declared read-only (`mutating: false`, no
// effects), so it runs in a dry run.

import { defineTool } from '@kindgi/sdk/define';
import type { ToolId } from '@kindgi/sdk/types';
import { z } from 'zod';

import { ORDERS } from '../../lib/orders.ts';

const OrderRef = z.object({
  orderId: z.string().min(1),
});

const Order = z.object({
  status: z.string(),
  orderId: z.string(),
  totalCents: z.number().int().nonnegative(),
});

const defined = defineTool({
  id: 'my-pack.lookup-order' as ToolId,
  description: 'Looks an order up by id.',
  version: '0.1.0',
  input: OrderRef,
  output: Order,
  effects: [],
  mutating: false,
  handler: async ({ orderId }) => {
    const found = ORDERS.get(orderId);
    if (found === undefined) throw new Error(`no order "${orderId}"`);
    return { status: found.status, orderId, totalCents: found.totalCents };
  },
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.lookup-order failed to compile: ${defined.error.message}`);
}

export default defined.value;
