// my-pack.add-order-note: adds a note to an order. It writes (`mutating` left out means
// true, plus a `writes` effect), so a dry run stops before calling it.

import { defineTool } from '@kindgi/sdk/define';
import type { ToolId } from '@kindgi/sdk/types';
import { z } from 'zod';

let nextNote = 1;

const NoteInput = z.object({
  orderId: z.string().min(1),
  text: z.string().min(1),
});

const Note = z.object({
  noteId: z.string(),
  orderId: z.string(),
});

const defined = defineTool({
  id: 'my-pack.add-order-note' as ToolId,
  description: 'Adds a note to an order.',
  version: '0.1.0',
  input: NoteInput,
  output: Note,
  effects: [{ kind: 'writes', resource: 'external:orders' }],
  handler: async ({ orderId }) => ({ noteId: `note_${nextNote++}`, orderId }),
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.add-order-note failed to compile: ${defined.error.message}`);
}

export default defined.value;
