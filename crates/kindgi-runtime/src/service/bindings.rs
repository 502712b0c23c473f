//! Checking a flow's bindings before a run starts: every tool, agent and sub-flow it names
//! exists for the tenant.

use kindgi_spec::flow::{LeafKind, Node};
use std::collections::HashSet;
use std::sync::Arc;

use super::{Runtime, RuntimeError};
use crate::catalogue::LoadedFlow;
use crate::left_out::LeftOutKind;
use kindgi_core::ids::split_tool_ref;

impl Runtime {
    /// Checks every tool, agent and sub-flow the flow names (sub-flows recursively), as
    /// `tenant` sees them. A tool counts when the tenant has its id at all (catalogue or
    /// registry): its version range is resolved when the step calls it.
    pub async fn check_bindings(
        &self,
        tenant: &str,
        flow: &LoadedFlow,
    ) -> Result<(), RuntimeError> {
        let mut seen = HashSet::new();
        seen.insert((flow.flow.id.clone(), flow.flow.version.clone()));
        let mut children = self.check_flow_bindings(tenant, flow).await?;
        while let Some(child) = children.pop() {
            if seen.insert((child.flow.id.clone(), child.flow.version.clone())) {
                children.extend(self.check_flow_bindings(tenant, &child).await?);
            }
        }
        Ok(())
    }

    /// Checks one flow's own nodes; returns the sub-flows it names.
    async fn check_flow_bindings(
        &self,
        tenant: &str,
        flow: &LoadedFlow,
    ) -> Result<Vec<Arc<LoadedFlow>>, RuntimeError> {
        let defs = &self.shared.definitions;
        let tools = &self.shared.resolver;
        let left_out = &self.shared.left_out;
        let unbound = |node: &str, kind: &'static str, reference: &str| {
            let book = match kind {
                "agent" => LeftOutKind::Agent,
                "flow" => LeftOutKind::Flow,
                _ => LeftOutKind::Tool,
            };
            // A sub-flow reference is `id@version`; the book keys by id.
            let id = reference.split('@').next().unwrap_or(reference);
            RuntimeError::FlowUnbound {
                flow_id: flow.flow.id.clone(),
                node_id: node.to_owned(),
                kind,
                reference: reference.to_owned(),
                left_out: left_out.why(tenant, book, id),
            }
        };
        let mut children = Vec::new();
        for node in flow.flow.all_nodes() {
            match node {
                Node::Leaf(l) => match l.kind {
                    LeafKind::Tool => {
                        let (id, _) = split_tool_ref(&l.ref_);
                        if !tools.exists(tenant, id).await? {
                            return Err(unbound(&l.id, "tool", id));
                        }
                    }
                    LeafKind::Agent => {
                        let pinned = crate::nodes::leaf::agent_version(l);
                        let Some(agent) = defs.agent(tenant, &l.ref_, pinned).await? else {
                            return Err(unbound(&l.id, "agent", &l.ref_));
                        };
                        for t in &agent.tools {
                            if !tools.exists(tenant, &t.id).await? {
                                return Err(unbound(&l.id, "tool (of its agent)", &t.id));
                            }
                        }
                    }
                },
                Node::Fanout(f) => {
                    for b in &f.branches {
                        let (id, _) = split_tool_ref(&b.handler);
                        if !tools.exists(tenant, id).await?
                            && defs.agent(tenant, &b.handler, None).await?.is_none()
                        {
                            return Err(unbound(&f.id, "branch handler", &b.handler));
                        }
                    }
                }
                Node::Subgraph(s) => {
                    let fref = &s.flow_ref;
                    let Some(child) = defs
                        .flow(tenant, &fref.flow_id, Some(&fref.version))
                        .await?
                    else {
                        return Err(unbound(
                            &s.id,
                            "flow",
                            &format!("{}@{}", fref.flow_id, fref.version),
                        ));
                    };
                    children.push(child);
                }
                Node::Loop(_) => {}
            }
        }
        Ok(children)
    }
}
