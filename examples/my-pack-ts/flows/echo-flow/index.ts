// my-pack.echo-flow: greets with the read-only greet tool, then hands the greeting to the
// agent (whose model call a dry run skips).

import { defineFlow } from '@kindgi/sdk/define';

const defined = defineFlow({
  id: 'my-pack.echo-flow',
  version: '0.1.0',
  name: 'Greet, then echo',
  nodes: [
    { id: 'greet', kind: 'tool', ref: 'my-pack.greet' },
    {
      id: 'agent',
      kind: 'agent',
      ref: 'my-pack.echo-agent',
      inputMapping: { message: { path: 'nodeOutputs.greet.greeting' } },
    },
  ],
  edges: [
    { id: 'e1', from: '$start', to: 'greet' },
    { id: 'e2', from: 'greet', to: 'agent' },
    { id: 'e3', from: 'agent', to: '$end' },
  ],
  output: {
    mapping: {
      reply: { path: 'nodeOutputs.agent.text' },
      greeting: { path: 'nodeOutputs.greet.greeting' },
    },
  },
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.echo-flow failed to compile: ${defined.error.message}`);
}

export default defined.value;
