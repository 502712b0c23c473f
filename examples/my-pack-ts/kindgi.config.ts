// The pack config the official TypeScript indexer reads (`kindgi-index --pack-dir .`):
// the pack's id and version, and where its primitives are.

const config = {
  pack: {
    id: 'my-pack',
    version: '0.1.0',
    description: "The read-only guide's example pack: an order lookup, an order note, a greeting, one agent, three flows.",
  },
  discovery: {
    tools: 'tools/**/*.ts',
    guardrails: 'guardrails/**/*.ts',
    agents: 'agents/**/*.ts',
    flows: 'flows/**/*.ts',
  },
} as const;

export default config;
