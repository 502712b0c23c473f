//! The official `woocommerce` template (`kindgi init --template=woocommerce`, generated at
//! test time) under our `kindgi dev`, driven with the official CLI against a loopback fake of
//! the WooCommerce REST API (`/wp-json/wc/v3`, HTTP Basic with an Application Password).
//! The store's address and user are set with the official `kindgi env set … --scope=tenant`
//! and the password with `kindgi secrets set … --from-stdin`, as the template's README says.
//!
//! Driven: the flow `acme.woocommerce.order-review` on the template's own sample event, dry
//! (the read-only check runs, the reviewer skips its model) and live (the reviewer's dev-echo
//! calls its first tool, `acme.woocommerce.woo.find-orders`, which asks the fake store), and
//! the agent `acme.woocommerce.order-reviewer` alone, dry and live. The fake must have seen
//! the tool's request: its path, query and Basic credentials.
//!
//! Needs the official CLI and the wheel's TypeScript packages: skipped without them, failed
//! when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;
#[path = "dev_common/fake_http.rs"]
mod fake_http;

use dev_common::templates::*;
use fake_http::{FakeApi, Seen};
use serde_json::{Value, json};

const USER: &str = "shop-agent";
/// An Application Password, as WordPress shows one (groups of four).
const PASSWORD: &str = "abcd EFGH 1234 ijkl";
/// `Basic base64("shop-agent:abcd EFGH 1234 ijkl")`.
const BASIC: &str = "Basic c2hvcC1hZ2VudDphYmNkIEVGR0ggMTIzNCBpamts";

/// Order 2001 as WooCommerce's REST API returns it (the fields the tools read, and contact
/// details the tools must not pass on).
fn order() -> Value {
    json!({
        "id": 2001,
        "number": "2001",
        "status": "processing",
        "currency": "EUR",
        "total": "88.50",
        "date_created": "2026-11-30T09:15:00",
        "billing": {
            "first_name": "Grace",
            "last_name": "Hopper",
            "email": "grace@example.com",
            "phone": "+1 555 010 0100"
        },
        "refunds": [{"id": 77, "total": "-5.00"}]
    })
}

/// The fake store: orders, one order, or WooCommerce's 404.
fn store(seen: &Seen) -> (u16, Value) {
    match (seen.method.as_str(), seen.path.as_str()) {
        ("GET", "/wp-json/wc/v3/orders") => (200, json!([order()])),
        ("GET", "/wp-json/wc/v3/orders/2001") => (200, order()),
        _ => (
            404,
            json!({
                "code": "rest_no_route",
                "message": "No route was found matching the URL and request method.",
                "data": {"status": 404}
            }),
        ),
    }
}

/// What find-orders makes of order 2001: the customer's name, never their email or phone.
fn found() -> Value {
    json!({
        "orders": [{
            "id": 2001,
            "number": "2001",
            "status": "processing",
            "total": "88.50",
            "refunded": "5.00",
            "currency": "EUR",
            "createdAt": "2026-11-30T09:15:00",
            "customer": "Grace Hopper"
        }]
    })
}

/// The store's address, user and password, set through the official CLI.
fn connect_store(pack: &Served, url: &str) {
    for (key, value) in [("WOO_STORE_URL", url), ("WOO_USER", USER)] {
        let out = pack.official(&["env", "set", key, value, "--env=local", "--scope=tenant"]);
        assert_eq!(out.code, 0, "env set {key}: {out:?}");
    }
    let out = pack.official_with_stdin(
        &[
            "secrets",
            "set",
            "WOO_APP_PASSWORD",
            "--env=local",
            "--scope=tenant",
            "--from-stdin",
        ],
        Some(PASSWORD),
    );
    assert_eq!(out.code, 0, "secrets set: {out:?}");
    assert!(!out.stdout.contains(PASSWORD), "{out:?}");
}

/// Every request the fake saw is find-orders' lookup, signed in as the agent's user.
fn assert_lookups(seen: &[Seen], count: usize) {
    assert_eq!(seen.len(), count, "{seen:#?}");
    for s in seen {
        assert_eq!(s.method, "GET", "{s:?}");
        assert_eq!(s.path, "/wp-json/wc/v3/orders", "{s:?}");
        assert_eq!(s.query, "per_page=10", "{s:?}");
        assert_eq!(s.authorization.as_deref(), Some(BASIC), "{s:?}");
    }
}

#[test]
fn the_woocommerce_template_reviews_orders_against_a_fake_store() {
    let Some(pack) = serve("woocommerce", "woocommerce_template_e2e", &[]) else {
        return;
    };
    let fake = FakeApi::start(store);
    connect_store(&pack, &fake.url);

    assert_eq!(
        pack.listed("tools"),
        [
            "acme.woocommerce.woo.check-order-event",
            "acme.woocommerce.woo.find-orders",
            "acme.woocommerce.woo.publish-product",
            "acme.woocommerce.woo.refund",
            "acme.woocommerce.woo.refund-large",
            "acme.woocommerce.woo.set-price",
        ]
    );
    assert_eq!(pack.listed("flows"), ["acme.woocommerce.order-review"]);
    assert_eq!(
        pack.listed("guardrails"),
        ["acme.woocommerce.no-customer-contact-details"]
    );
    // The store agent (`conversationPolicy.hitl.separateApprover`: the approver must not be
    // the person who asked; docs/approvals.md) is registered, not left out.
    let agents = pack.listed("agents");
    for id in [
        "acme.woocommerce.order-reviewer",
        "acme.woocommerce.store-agent",
    ] {
        assert!(agents.contains(&id.to_owned()), "{agents:?}");
    }
    assert!(
        !pack.dev.stderr().contains("left out agent"),
        "{}",
        pack.dev.stderr()
    );

    // The flow on the template's sample event, dry: the check runs (it calls nothing), the
    // reviewer skips its model call, and the store is not asked.
    let event = format!(
        "@{}",
        pack.dir.join("fixtures/order-created.json").display()
    );
    let (out, run) = pack.start_flow("acme.woocommerce.order-review", &event, true);
    assert_completed("order-review --dry-run", &out, &run);
    assert_eq!(
        run["output"],
        json!({
            "orderNumber": "1043",
            "flags": ["high-total", "many-of-one-item", "ships-abroad"],
            "review": DRY_RUN_REPLY
        })
    );
    assert!(fake.seen().is_empty(), "{:#?}", fake.seen());

    // Live: the reviewer's dev-echo calls find-orders, which asks the fake store.
    let (out, run) = pack.start_flow("acme.woocommerce.order-review", &event, false);
    assert_completed("order-review", &out, &run);
    assert_eq!(run["output"]["orderNumber"], "1043", "{run}");
    assert_eq!(
        run["output"]["flags"],
        json!(["high-total", "many-of-one-item", "ships-abroad"])
    );
    assert_eq!(
        dev_echo_tool_result("order-review's review", &run["output"]["review"]),
        found()
    );
    assert_lookups(&fake.seen(), 1);
    let steps = pack.journal(&run);
    for node in ["check", "review"] {
        assert!(
            steps.contains(&("step.completed".into(), node.into())),
            "{steps:?}"
        );
    }

    // The order reviewer alone, live and dry.
    let (out, turn) = pack.start_agent(
        "acme.woocommerce.order-reviewer",
        "Review order 2001",
        false,
    );
    let result = assert_dev_echo_called(
        "order-reviewer",
        &out,
        &turn,
        "acme.woocommerce.woo.find-orders",
    );
    assert_eq!(result, found(), "{turn}");
    assert_lookups(&fake.seen(), 2);
    let (out, turn) =
        pack.start_agent("acme.woocommerce.order-reviewer", "Review order 2001", true);
    assert_completed("order-reviewer --dry-run", &out, &turn);
    assert_eq!(turn["output"]["text"], DRY_RUN_REPLY, "{turn}");
    assert_lookups(&fake.seen(), 2);

    // The password went to the store only: never into a run the official CLI reads back.
    let id = run["id"].as_str().unwrap();
    for args in [vec!["runs", "get", id], vec!["runs", "journal", id]] {
        let out = pack.official(&args);
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        assert!(!out.stdout.contains(PASSWORD), "{args:?}: {}", out.stdout);
    }
    pack.stop();
}
