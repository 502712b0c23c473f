//! Flow validation: the wire type (`kindgi_spec::flow::Flow`), its structural checks
//! (`Flow::validate`) and the runtime's loader (`LoadedFlow::load`, which also compiles the
//! flow's schemas). Invariants:
//! - a flow that parses survives a round trip (written out and read back, it is equal);
//! - every structural issue says where and what;
//! - the loader accepts exactly the flows whose structure is valid and whose schemas compile,
//!   and never accepts one `validate` refuses;
//! - each step answers within its budget.
#![no_main]

use kindgi_fuzz::within_budget;
use kindgi_runtime::{FlowError, LoadedFlow};
use kindgi_spec::flow::Flow;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let flow: Flow = match serde_json::from_str(text) {
        Ok(f) => f,
        Err(_) => {
            let loaded = LoadedFlow::from_json(text);
            assert!(
                matches!(loaded, Err(FlowError::Parse { .. })),
                "the loader read a flow serde refuses"
            );
            return;
        }
    };
    let written = match serde_json::to_string(&flow) {
        Ok(t) => t,
        Err(e) => panic!("a parsed flow does not serialize: {e}"),
    };
    match serde_json::from_str::<Flow>(&written) {
        Ok(back) => assert_eq!(back, flow, "the flow changed on a round trip: {written}"),
        Err(e) => panic!("a parsed flow, written out, does not parse: {e}: {written}"),
    }
    let _ = flow.all_nodes();
    let structure = within_budget("Flow::validate", || flow.validate());
    if let Err(issues) = &structure {
        assert!(!issues.is_empty(), "a refused flow with no issue");
        for i in issues {
            assert!(
                !i.message.is_empty(),
                "a flow issue at {:?} with no message",
                i.at
            );
        }
    }
    let loaded = within_budget("LoadedFlow::load", || LoadedFlow::load(flow.clone()));
    match (&structure, &loaded) {
        (Err(_), Ok(_)) => panic!("the loader accepted a flow validate refuses"),
        (_, Err(FlowError::Parse { .. })) => {
            panic!("the loader refused a parsed flow as unparsable")
        }
        (_, Err(FlowError::Invalid { issues, .. })) => {
            assert!(
                !issues.is_empty(),
                "the loader refused a flow with no issue"
            )
        }
        _ => {}
    }
});
