// my-pack.check-order: looks an order up. Read-only, so it runs whole in a dry run.

import { defineFlow } from '@kindgi/sdk/define';

const defined = defineFlow({
  id: 'my-pack.check-order',
  version: '0.1.0',
  name: 'Check an order',
  nodes: [{ id: 'lookup', kind: 'tool', ref: 'my-pack.lookup-order' }],
  edges: [
    { id: 'e1', from: '$start', to: 'lookup' },
    { id: 'e2', from: 'lookup', to: '$end' },
  ],
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.check-order failed to compile: ${defined.error.message}`);
}

export default defined.value;
