// my-pack.echo-agent: answers the greeting it is handed. It calls no tools.

import { defineAgent } from '@kindgi/sdk/define';

const defined = defineAgent({
  id: 'my-pack.echo-agent',
  version: '0.1.0',
  name: 'Echo agent',
  instructions: 'Reply to the greeting you are given, briefly.',
  // The SDK wants at least one capability; a text reply needs no more than streaming.
  capabilities: [{ needs: [{ feature: 'streaming' }] }],
  tools: [],
  retrieval: [],
  guardrails: [],
  parameters: [],
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.echo-agent failed to compile: ${defined.error.message}`);
}

export default defined.value;
