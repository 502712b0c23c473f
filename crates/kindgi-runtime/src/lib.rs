//! Kindgi runtime: flows, durable runs and their journal, dry runs, agents, the tool-call scheduler, model providers.
