// my-pack.greet: builds a greeting. Read-only.

import { defineTool } from '@kindgi/sdk/define';
import type { ToolId } from '@kindgi/sdk/types';
import { z } from 'zod';

const Person = z.object({
  name: z.string().min(1),
});

const Greeting = z.object({
  greeting: z.string(),
});

const defined = defineTool({
  id: 'my-pack.greet' as ToolId,
  description: 'Greets someone by name.',
  version: '0.1.0',
  input: Person,
  output: Greeting,
  effects: [],
  mutating: false,
  handler: async ({ name }) => ({ greeting: `Hello, ${name}!` }),
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.greet failed to compile: ${defined.error.message}`);
}

export default defined.value;
