// my-pack.note-order: looks the order up, then adds a note. A dry run stops at the note
// step, before the mutating tool is called.

import { defineFlow } from '@kindgi/sdk/define';

const defined = defineFlow({
  id: 'my-pack.note-order',
  version: '0.1.0',
  name: 'Add a note to an order',
  nodes: [
    {
      id: 'lookup',
      kind: 'tool',
      ref: 'my-pack.lookup-order',
      inputMapping: { orderId: { path: 'runInput.orderId' } },
    },
    {
      id: 'note',
      kind: 'tool',
      ref: 'my-pack.add-order-note',
      inputMapping: {
        orderId: { path: 'runInput.orderId' },
        text: { path: 'runInput.text' },
      },
    },
  ],
  edges: [
    { id: 'e1', from: '$start', to: 'lookup' },
    { id: 'e2', from: 'lookup', to: 'note' },
    { id: 'e3', from: 'note', to: '$end' },
  ],
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.note-order failed to compile: ${defined.error.message}`);
}

export default defined.value;
