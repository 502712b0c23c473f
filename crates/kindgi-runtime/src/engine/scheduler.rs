//! The pure scheduler of one graph (a flow or a loop body), as runtime.md §1.3 describes it.
//!
//! Given what completed, what is in flight and which edges were decided, a tick returns the
//! edges to evaluate now (in declaration order), the nodes ready to dispatch (priority
//! descending, then node id ascending) and whether the graph is done. It does no I/O: the
//! executor journals the edge decisions and dispatches the ready nodes.
//!
//! - An edge from a dead node is not taken; from a node not completed (or with no decision
//!   yet) it is pending; otherwise taken or not as decided.
//! - A node is dead when every incoming edge is not taken (a fixpoint: deadness spreads).
//! - A node is ready when it is not completed, in flight or dead, has no pending incoming
//!   edge and at least one taken one.
//! - The graph is done when every node is completed or dead, every edge out of a completed
//!   source is decided, and nothing is in flight.

use std::collections::{HashMap, HashSet};

/// An edge as the scheduler sees it.
#[derive(Debug, Clone)]
pub struct SchedEdge {
    pub id: String,
    pub from: String,
    pub to: String,
    /// Index into the caller's expression table (`None` = unconditional).
    pub has_when: bool,
}

/// A graph: node ids, edges (declaration order), entry and exit sentinels.
#[derive(Debug, Clone)]
pub struct SchedGraph {
    pub nodes: Vec<String>,
    pub edges: Vec<SchedEdge>,
    pub start: String,
    pub end: String,
    /// Effective priority per node (the sole incoming edge's `policy.priority`, else 0).
    pub priority: HashMap<String, i32>,
    /// Incoming edge indices per node (and the end sentinel).
    incoming: HashMap<String, Vec<usize>>,
}

impl SchedGraph {
    pub fn new(
        nodes: Vec<String>,
        edges: Vec<SchedEdge>,
        start: &str,
        end: &str,
        priority: HashMap<String, i32>,
    ) -> Self {
        let mut incoming: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, e) in edges.iter().enumerate() {
            incoming.entry(e.to.clone()).or_default().push(i);
        }
        Self {
            nodes,
            edges,
            start: start.to_owned(),
            end: end.to_owned(),
            priority,
            incoming,
        }
    }

    pub fn incoming(&self, node: &str) -> &[usize] {
        self.incoming.get(node).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// The executor's view of progress.
#[derive(Debug, Clone, Default)]
pub struct SchedState {
    pub completed: HashSet<String>,
    pub in_flight: HashSet<String>,
    /// Edge id → taken?
    pub decisions: HashMap<String, bool>,
}

/// What one tick decides.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tick {
    /// Edge indices to evaluate now, in declaration order.
    pub to_evaluate: Vec<usize>,
    pub ready: Vec<String>,
    pub done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeState {
    Pending,
    Taken,
    NotTaken,
}

impl SchedGraph {
    /// Edges whose source completed (or is the entry) and that are not decided yet.
    pub fn edges_to_evaluate(&self, state: &SchedState) -> Vec<usize> {
        self.edges
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                (e.from == self.start || state.completed.contains(&e.from))
                    && !state.decisions.contains_key(&e.id)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Dead nodes (fixpoint).
    pub fn dead_nodes(&self, state: &SchedState) -> HashSet<String> {
        let mut dead: HashSet<String> = HashSet::new();
        loop {
            let mut changed = false;
            for n in &self.nodes {
                if dead.contains(n) || state.completed.contains(n) || state.in_flight.contains(n) {
                    continue;
                }
                let inc = self.incoming(n);
                if !inc.is_empty()
                    && inc
                        .iter()
                        .all(|&i| self.edge_state(i, state, &dead) == EdgeState::NotTaken)
                {
                    dead.insert(n.clone());
                    changed = true;
                }
            }
            if !changed {
                return dead;
            }
        }
    }

    pub fn edge_state(&self, i: usize, state: &SchedState, dead: &HashSet<String>) -> EdgeState {
        let e = &self.edges[i];
        if dead.contains(&e.from) {
            return EdgeState::NotTaken;
        }
        let source_done = e.from == self.start || state.completed.contains(&e.from);
        match (source_done, state.decisions.get(&e.id)) {
            (true, Some(true)) => EdgeState::Taken,
            (true, Some(false)) => EdgeState::NotTaken,
            _ => EdgeState::Pending,
        }
    }

    /// Ready nodes and doneness, for a state whose due edges are all decided.
    pub fn tick(&self, state: &SchedState) -> Tick {
        let to_evaluate = self.edges_to_evaluate(state);
        let dead = self.dead_nodes(state);
        let mut ready: Vec<String> = self
            .nodes
            .iter()
            .filter(|n| {
                if state.completed.contains(*n) || state.in_flight.contains(*n) || dead.contains(*n)
                {
                    return false;
                }
                let inc = self.incoming(n);
                let states: Vec<EdgeState> = inc
                    .iter()
                    .map(|&i| self.edge_state(i, state, &dead))
                    .collect();
                !states.is_empty()
                    && !states.contains(&EdgeState::Pending)
                    && states.contains(&EdgeState::Taken)
            })
            .cloned()
            .collect();
        ready.sort_by(|a, b| {
            let pa = self.priority.get(a).copied().unwrap_or(0);
            let pb = self.priority.get(b).copied().unwrap_or(0);
            pb.cmp(&pa).then_with(|| a.cmp(b))
        });
        let all_settled = self
            .nodes
            .iter()
            .all(|n| state.completed.contains(n) || dead.contains(n));
        let edges_decided = self.edges.iter().all(|e| {
            !(e.from == self.start || state.completed.contains(&e.from))
                || state.decisions.contains_key(&e.id)
        });
        let done = all_settled && edges_decided && state.in_flight.is_empty();
        Tick {
            to_evaluate,
            ready,
            done,
        }
    }

    /// The taken edges into the exit sentinel, lowest edge id first.
    pub fn taken_end_edges(&self, state: &SchedState) -> Vec<&SchedEdge> {
        let dead = self.dead_nodes(state);
        let mut out: Vec<&SchedEdge> = self
            .edges
            .iter()
            .enumerate()
            .filter(|(i, e)| {
                e.to == self.end && self.edge_state(*i, state, &dead) == EdgeState::Taken
            })
            .map(|(_, e)| e)
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(id: &str, from: &str, to: &str) -> SchedEdge {
        SchedEdge {
            id: id.into(),
            from: from.into(),
            to: to.into(),
            has_when: false,
        }
    }

    fn graph(nodes: &[&str], edges: Vec<SchedEdge>) -> SchedGraph {
        SchedGraph::new(
            nodes.iter().map(|s| s.to_string()).collect(),
            edges,
            "$start",
            "$end",
            HashMap::new(),
        )
    }

    #[test]
    fn a_branch_not_taken_kills_its_subtree_and_the_join_still_runs() {
        // $start → a → b (not taken) → c ; a → d ; c → e ; d → e ; e → $end
        let g = graph(
            &["a", "b", "c", "d", "e"],
            vec![
                edge("1", "$start", "a"),
                edge("2", "a", "b"),
                edge("3", "b", "c"),
                edge("4", "a", "d"),
                edge("5", "c", "e"),
                edge("6", "d", "e"),
                edge("7", "e", "$end"),
            ],
        );
        let mut st = SchedState::default();
        assert_eq!(g.tick(&st).to_evaluate, vec![0]);
        st.decisions.insert("1".into(), true);
        assert_eq!(g.tick(&st).ready, vec!["a".to_string()]);
        st.completed.insert("a".into());
        assert_eq!(g.tick(&st).to_evaluate, vec![1, 3]);
        st.decisions.insert("2".into(), false);
        st.decisions.insert("4".into(), true);
        let t = g.tick(&st);
        assert_eq!(t.ready, vec!["d".to_string()]);
        assert!(g.dead_nodes(&st).contains("c"));
        st.completed.insert("d".into());
        st.decisions.insert("6".into(), true);
        let t = g.tick(&st);
        assert_eq!(
            t.ready,
            vec!["e".to_string()],
            "the join runs: its dead branch is not pending"
        );
        st.completed.insert("e".into());
        st.decisions.insert("7".into(), true);
        assert!(g.tick(&st).done);
    }

    #[test]
    fn ready_nodes_sort_by_priority_then_id() {
        let mut prio = HashMap::new();
        prio.insert("z".to_string(), 5);
        let g = SchedGraph::new(
            vec!["b".into(), "a".into(), "z".into()],
            vec![
                edge("1", "$start", "b"),
                edge("2", "$start", "a"),
                edge("3", "$start", "z"),
            ],
            "$start",
            "$end",
            prio,
        );
        let mut st = SchedState::default();
        for id in ["1", "2", "3"] {
            st.decisions.insert(id.into(), true);
        }
        assert_eq!(
            g.tick(&st).ready,
            vec!["z".to_string(), "a".to_string(), "b".to_string()]
        );
    }
}
